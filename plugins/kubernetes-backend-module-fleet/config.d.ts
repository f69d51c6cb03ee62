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
    };
  };
}
