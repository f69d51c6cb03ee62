export interface Config {
  fleet?: {
    /** A Git host served over Git's smart HTTP protocol, read by `@cnp/git-host`'s URL reader. */
    gitHost?: {
      /**
       * The base URL of the Git host: a repository clones from `<baseUrl>/<name>.git`, a folder
       * reads from `<baseUrl>/<name>.git/tree/<ref>/<path>` and a file from
       * `<baseUrl>/<name>.git/blob/<ref>/<path>`. Without it no reader is added.
       */
      baseUrl?: string;
      /** Where the reader keeps its mirrors of the repositories; the OS temp dir unless set. */
      cacheDir?: string;
      /**
       * The backend plugin `githost` of `@cnp/git-host`: it serves the bare repositories of
       * this folder read-only at `/api/githost/<name>.git`, to anyone. Without it the plugin
       * serves nothing.
       */
      serve?: {
        /**
         * The folder of bare repositories (`<root>/<name>.git`), absolute or relative to the
         * backend's working directory.
         */
        root: string;
      };
    };
  };
}
