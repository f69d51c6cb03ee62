export interface Config {
  /** Configuration of the Fleet plugins. */
  fleet?: {
    /** The Fleet cards and page. */
    frontend?: {
      /**
       * Seconds between two polls of a card or the fleet page (default 60). The UI refreshes as
       * soon as a Backstage signal says something changed; this polling only catches what a
       * missed signal (or an app without the signals plugin) would leave stale. 0 turns polling
       * off: signals only.
       * @visibility frontend
       */
      pollInterval?: number;
    };
    /** Where Fleet's catalog module publishes clusters (read by its backend module too). */
    catalog?: {
      /**
       * Catalog namespace of the cluster entities (default `default`): cluster names on the
       * cards link to `resource:<namespace>/<cluster>`.
       * @visibility frontend
       */
      namespace?: string;
    };
  };
}
