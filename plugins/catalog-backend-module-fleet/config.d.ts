import { SchedulerServiceTaskScheduleDefinitionConfig } from '@backstage/backend-plugin-api';

export interface Config {
  fleet?: {
    /** How the Fleet catalog module publishes clusters as catalog entities. */
    catalog?: {
      /** How often the clusters are read from Fleet (default every 30 s, after 10 s). */
      schedule?: SchedulerServiceTaskScheduleDefinitionConfig;
      /** Owner of the cluster entities (default `group:default/platform`). */
      owner?: string;
      /** Catalog namespace of the cluster entities (default `default`). */
      namespace?: string;
    };
  };
}
