import type {
  AuditorService,
  BackstageCredentials,
  HttpAuthService,
  LoggerService,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import type { HealthCycleSummary } from '@cnp/plugin-fleet-common';
import type {
  ApplicationStore,
  ClusterStore,
  DeploymentStore,
  EventStore,
  FleetStateStore,
  RevisionStore,
} from '../database/types';
import type { DeploymentService } from '../deploy/DeploymentService';
import type { ReleaseService } from '../progressive/ReleaseService';
import type { Decider } from '../stages/gates';
import type { FreezeWindows } from '../stages/freezeWindows';
import type { TenancyChecks } from './tenancyChecks';

/** What the API reads, and the cluster writes it makes itself. */
export type RouterStores = {
  clusters: Omit<
    ClusterStore,
    | 'listClusterOrigins'
    | 'upsertDiscoveredClusters'
    | 'inClusterTransaction'
    | 'updateClustersHealth'
  >;
  applications: Pick<
    ApplicationStore,
    'listApplications' | 'getApplication' | 'getApplicationByEntityRef'
  >;
  deployments: Pick<
    DeploymentStore,
    | 'listDeployments'
    | 'getDeployment'
    | 'countDeploymentsByStatus'
    | 'countDeploymentsByCluster'
  >;
  revisions: Pick<RevisionStore, 'listRevisions'>;
  events: Pick<EventStore, 'listEvents' | 'listRecentEvents'>;
  state: Pick<FleetStateStore, 'getMassOutage' | 'getLastCycle'>;
};

export interface RouterOptions {
  logger: LoggerService;
  /** Records every write (who, what, outcome); optional so that focused tests can leave it out. */
  auditor?: AuditorService;
  httpAuth: HttpAuthService;
  permissions: PermissionsService;
  stores: RouterStores;
  /**
   * A manual health run: shares a run under way, answers the last cycle (marked `reused`) when
   * it is less than manualMinInterval old, else runs one after any running cycle.
   */
  runHealthCycle: () => Promise<HealthCycleSummary>;
  deployments: Pick<
    DeploymentService,
    | 'deploy'
    | 'registerApplication'
    | 'updateApplication'
    | 'rollback'
    | 'undeploy'
    | 'removeApplication'
    | 'preview'
  >;
  releases: Pick<
    ReleaseService,
    | 'release'
    | 'getRelease'
    | 'listReleases'
    | 'steer'
    | 'planStage'
    | 'listStages'
    | 'approve'
    | 'reject'
    | 'listOpenReleases'
    | 'assertDirectDeploy'
    | 'withdrawWaiting'
  >;
  /**
   * Who a caller deciding on a release is, with their groups (the catalog's word); without it
   * a caller belongs to no group, so only releases whose stage names no approver group can be
   * decided on.
   */
  deciderOf?: (credentials: BackstageCredentials) => Promise<Decider>;
  /**
   * Whether discovery still finds a cluster of this name in the kubeconfig sources (from a
   * recent discovery, shared: not one discovery per call).
   */
  isDiscovered?: (name: string) => Promise<boolean>;
  /**
   * The fingerprint of the CA a manual cluster's kubeconfig trusts for its endpoint, undefined
   * when it cannot be read: with the endpoint, the identity a registration may not reuse.
   */
  clusterCa?: (cluster: {
    endpoint: string;
    kubeconfigRef: string;
    context?: string;
  }) => Promise<string | undefined>;
  /**
   * How long a rollout may take (`fleet.deploy.progressDeadline`): a PROGRESSING deployment is
   * answered with the time it fails if not complete. Absent: no such time is given.
   */
  progressDeadlineMs?: number;
  /** The most manual clusters `POST /clusters` registers (`fleet.clusters.maxManual`; default 1,000). */
  maxManualClusters?: number;
  /** The component's project: what its writes may set and where they may go. */
  tenancy: TenancyChecks;
  /**
   * The Prometheus servers a release's analysis may query
   * (`fleet.analysis.prometheus.allowedAddresses`, normalised); none: no analysis is accepted.
   */
  allowedPrometheusAddresses?: readonly string[];
  /**
   * The names of the analysis providers a release's analysis may name: Fleet's `prometheus` and
   * those backend modules added (default: `prometheus` only).
   */
  analysisProviders?: readonly string[];
  /**
   * The freeze windows of the configuration (`fleet.release.freezeWindows`), for
   * `GET /freeze-windows`; absent: none.
   */
  freezeWindows?: FreezeWindows;
  /**
   * The key list cursors are signed with, the same on every replica (the state store's); a
   * random one when not given (cursors then hold for this router only).
   */
  cursorKey?: Buffer;
}
