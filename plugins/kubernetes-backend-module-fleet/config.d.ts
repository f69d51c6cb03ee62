import type { HumanDuration } from '@backstage/types';

export interface Config {
  kubernetes?: {
    /**
     * Fleet's clusters for the Kubernetes plugin (`@cnp/plugin-kubernetes-backend-module-fleet`).
     */
    fleet?: {
      /**
       * How long the list of Fleet's clusters is kept before it is read again from Fleet
       * (clusters that appear, go OFFLINE, come back or are removed follow within this time).
       * Default 30 seconds.
       */
      refreshInterval?: HumanDuration | string;
      /**
       * Skip the metrics-server lookup of pod CPU and memory (for clusters without
       * metrics-server). Default false.
       */
      skipMetricsLookup?: boolean;
      /**
       * How long each cluster has to answer one call of the Kubernetes tab (its object lists,
       * asked at once; the pod metrics, when looked up, again as long). Past it the cluster's
       * requests are cancelled and the tab shows that cluster's error while the others render.
       * Above 0, at most 10 minutes; default 10 seconds.
       */
      requestTimeout?: HumanDuration | string;
    };
  };
}
