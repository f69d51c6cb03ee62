import { createApiRef } from '@backstage/core-plugin-api';
import type {
  Application,
  Cluster,
  ClusterStatus,
  Deployment,
  FleetEvent,
  FleetSummary,
  HealthCycleSummary,
  Revision,
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
  /** The deployment's revisions, newest first. */
  listRevisions(deploymentId: string): Promise<Revision[]>;
  /**
   * Makes a new revision that copies `toRevision`; without it, the newest earlier revision whose
   * outcome is DEPLOYED. The API answers 409 when there is none.
   */
  rollback(deploymentId: string, toRevision?: number): Promise<Deployment>;
  /**
   * Removes the deployment from its cluster: the answer has status REMOVING, and the deployment
   * leaves every list once Fleet removed its objects.
   */
  undeploy(
    deploymentId: string,
    options?: { force?: boolean },
  ): Promise<Deployment>;
}

/** @public */
export const fleetApiRef = createApiRef<FleetApi>({
  id: 'plugin.fleet.service',
});
