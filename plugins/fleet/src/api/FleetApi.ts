import { createApiRef } from '@backstage/core-plugin-api';
import type {
  EnvMapInput,
  Application,
  ApplicationFleetStatus,
  Cluster,
  ClusterStatus,
  Deployment,
  FleetEvent,
  FleetSummary,
  ClusterDeploymentCounts,
  HealthCycleSummary,
  Preview,
  PreviewRequest,
  Release,
  FreezeWindow,
  AnalysisProvider,
  StageStatus,
  ReleaseStrategy,
  Revision,
} from '@cnp/plugin-fleet-common';

/** What the Deploy dialog sends. @public */
export interface CreateDeploymentRequest {
  entityRef: string;
  cluster: string;
  image?: string;
  replicas?: number;
  /**
   * For a component that brings its own manifests (`cnp.io/manifests-ref`): the branch, tag or
   * commit to deploy; unset, the ref its source location names.
   */
  version?: string;
}

/**
 * What a fleet release sends: the changes to roll out, and optionally the clusters to roll them
 * out to (without them, every cluster the application is placed on). @public
 */
export interface CreateReleaseRequest {
  image?: string;
  replicas?: number;
  env?: EnvMapInput;
  clusters?: string[];
  /**
   * Waves, canary steps, analysis and rollback of a progressive release; sent as is, the API
   * validates it (400 with its reason).
   */
  strategy?: ReleaseStrategy;
  /** As {@link CreateDeploymentRequest.version}. */
  version?: string;
  /**
   * The application's stage to release to (its clusters); a stage that requires another takes
   * only a version that stage verified, and may wait for approvals.
   */
  stage?: string;
}

/**
 * The Fleet backend, as the cards and the page use it.
 *
 * @public
 */
export interface FleetApi {
  /**
   * The clusters, or with `names` only those of these names (names of no registered cluster are
   * left out; an empty list asks for none).
   */
  listClusters(options?: {
    status?: ClusterStatus;
    names?: string[];
  }): Promise<Cluster[]>;
  getCluster(name: string): Promise<Cluster>;
  listClusterEvents(name: string): Promise<FleetEvent[]>;
  listRecentEvents(options?: { limit?: number }): Promise<FleetEvent[]>;
  getSummary(): Promise<FleetSummary>;
  /** Deployments per cluster and status; clusters without any are left out. */
  listDeploymentCounts(): Promise<ClusterDeploymentCounts[]>;
  runHealthCycle(): Promise<HealthCycleSummary>;
  listApplications(options?: { entityRef?: string }): Promise<Application[]>;
  /** One application across the fleet: per cluster its revision, image and sync status. */
  getApplicationStatus(applicationId: string): Promise<ApplicationFleetStatus>;
  /**
   * Makes one new revision on every cluster the application is placed on, or on
   * `request.clusters`; OFFLINE ones are in the answer's `skipped`. The API answers 409 when the
   * application is placed nowhere.
   */
  createRelease(
    applicationId: string,
    request: CreateReleaseRequest,
  ): Promise<Release>;
  /**
   * What a deploy or release would change, by a server-side dry run on each target cluster
   * (`request.clusters`; unset, the clusters the application is deployed to, else the ones its
   * placement selects): per object whether it is created, updated (with the changed paths),
   * unchanged or pruned. Nothing is written. A cluster the project or an ownership rule refuses
   * is `refused` in the answer, not an error.
   */
  previewApplication(
    applicationId: string,
    request: PreviewRequest,
  ): Promise<Preview>;
  getRelease(id: string): Promise<Release>;
  /** The application's releases, newest first. */
  listReleases(applicationId: string): Promise<Release[]>;
  /**
   * Ends the pause a progressive release waits in (an untimed `pause: {}`), so its clusters go on
   * to the next step. The API answers 409 when nothing waits for promote.
   */
  promoteRelease(id: string): Promise<Release>;
  /** Holds a progressive release where it is. The API answers 409 on a finished release. */
  pauseRelease(id: string): Promise<Release>;
  /** Lets a paused progressive release go on. The API answers 409 when it is not paused. */
  resumeRelease(id: string): Promise<Release>;
  /**
   * Aborts a progressive release: every cluster it touched goes back to its previous revision.
   * The API answers 409 on a finished release.
   */
  abortRelease(id: string): Promise<Release>;
  /**
   * Approves a release waiting for approval; with `overrideFreeze`, starts it inside an open
   * freeze window. The API answers 403 to the release's author and to whoever is not in one of
   * the stage's approver groups, 409 when the release waits for nothing an approval gives.
   */
  approveRelease(
    id: string,
    decision?: { comment?: string; overrideFreeze?: boolean },
  ): Promise<Release>;
  /** Rejects a waiting release: it ends REJECTED, nothing applied. */
  rejectRelease(id: string, decision?: { comment?: string }): Promise<Release>;
  /** The fleet's releases waiting for an approval or a freeze window, oldest first. */
  listWaitingReleases(options?: {
    status?: 'WAITING_FOR_APPROVAL' | 'WAITING_FOR_WINDOW';
  }): Promise<Release[]>;
  /** The fleet's releases under way with a strategy (progressing, paused, rolling back), oldest first. */
  listReleasesUnderWay(): Promise<Release[]>;
  /** The configured freeze windows, open ones first. */
  listFreezeWindows(): Promise<FreezeWindow[]>;
  /**
   * The analysis providers a release's strategy may name; for `prometheus`, the servers the
   * backend allows it to query (`fleet.analysis.prometheus.allowedAddresses`).
   */
  listAnalysisProviders(): Promise<AnalysisProvider[]>;
  /** The application's stages in order, each with what it runs and verified. */
  listStages(applicationId: string): Promise<StageStatus[]>;
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
