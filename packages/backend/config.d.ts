import { HumanDuration } from '@backstage/types';

export interface Config {
  fleet?: {
    /** The app's permission policy for Fleet (packages/backend/src/permissions). */
    permissions?: {
      /**
       * Groups (or users) whose members may deploy any component, not only those they own,
       * e.g. `group:default/guests`. Refs without a kind are groups.
       */
      deployers?: string[];
      /**
       * Groups (or users) whose members alone may register, change and delete clusters and run
       * health cycles. Unset or empty: no user may (service tokens still can, within their
       * access restrictions).
       */
      clusterAdmins?: string[];
      /**
       * How long the policy reuses a user's groups as read from the catalog (the policy decides
       * on the catalog's current membership, not on the groups in the user's token). Default
       * 10 seconds; 0 reads the catalog at every decision.
       */
      groupsCacheTtl?: HumanDuration | string;
    };
  };
  /**
   * Where the `publish:local` scaffolder action publishes a template's workspace
   * (`<directory>/<name>/`), for a portal without a git host; a catalog `file` location with the
   * target `<directory>/*\/catalog-info.yaml` reads it. Unset: no such action.
   */
  localPublish?: {
    directory: string;
  };
}
