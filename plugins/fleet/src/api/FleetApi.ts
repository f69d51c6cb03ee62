import { createApiRef } from '@backstage/core-plugin-api';
import type {
  Application,
  Cluster,
  ClusterStatus,
  Deployment,
  FleetEvent,
  FleetSummary,
  HealthCycleSummary,
} from '@cnp/plugin-fleet-common';

/** What the Deploy dialog sends. @public */
export interface CreateDeploymentRequest {
  entityRef: string;
  cluster: string;
  image?: string;
  replicas?: number;
}

/**
 * The Fleet backend, as the cards and the page use it.
 *
 * @public
 */
export interface FleetApi {
  listClusters(options?: { status?: ClusterStatus }): Promise<Cluster[]>;
  getCluster(name: string): Promise<Cluster>;
  listClusterEvents(name: string): Promise<FleetEvent[]>;
  listRecentEvents(options?: { limit?: number }): Promise<FleetEvent[]>;
  getSummary(): Promise<FleetSummary>;
  runHealthCycle(): Promise<HealthCycleSummary>;
  listApplications(options?: { entityRef?: string }): Promise<Application[]>;
  listDeployments(options?: {
    entityRef?: string;
    cluster?: string;
  }): Promise<Deployment[]>;
  createDeployment(request: CreateDeploymentRequest): Promise<Deployment>;
  listDeploymentEvents(id: string): Promise<FleetEvent[]>;
}

/** @public */
export const fleetApiRef = createApiRef<FleetApi>({
  id: 'plugin.fleet.service',
});
