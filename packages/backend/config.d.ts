import { HumanDuration } from '@backstage/types';

export interface Config {
  fleet?: {
    /** The app's permission policy for Fleet (packages/backend/src/permissions). */
    permissions?: {
      /**
       * Deployer groups, e.g. `group:default/guests` (refs without a kind are groups): their
       * members may also deploy a component they do not own when its catalog entry names their
       * group in the `cnp.io/deployers` annotation (one full group ref).
       */
      deployers?: string[];
      /**
       * Groups (or users) whose members alone may register, change and delete clusters, run
       * health cycles and use the Kubernetes plugin's proxy (`kubernetes.proxy`). Unset or empty: no user may (service tokens still can, within their
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
