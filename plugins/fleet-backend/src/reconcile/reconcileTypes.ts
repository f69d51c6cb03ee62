import type {
  LoggerService,
  SchedulerService,
} from '@backstage/backend-plugin-api';
import type { Application } from '@cnp/plugin-fleet-common';
import type { FleetConfig } from '../config/FleetConfig';
import type {
  ApplicationStore,
  ClusterRecord,
  ClusterStore,
  DeploymentStore,
  RevisionStore,
} from '../database/types';
import type { DeploymentService } from '../deploy/DeploymentService';
import type {
  AutoscalerCache,
  LiveObjects,
  ManifestApplier,
} from '../deploy/ManifestApplier';
import type { ObjectSetApplier } from '../deploy/ObjectSetApplier';
import type { ObjectsRefusal } from '../deploy/deploymentTypes';
import type { FleetListener } from '../events/FleetListener';
import type { ShardOwnership } from '../sharding/types';
import type { EntityAnnotationReader } from '../catalog/entityAnnotations';
import type { PlacementGate } from './placementGate';

/** Who the reconcile's writes are recorded as. */
export const RECONCILE_ACTOR = 'fleet-reconcile';

export interface ReconcileSummary {
  startedAt: string;
  durationMs: number;
  checked: number;
  synced: number;
  outOfSync: number;
  unknown: number;
  healed: number;
  placed: Array<{ entityRef: string; cluster: string; status: string }>;
  pruned: Array<{ entityRef: string; cluster: string }>;
  /** Clusters a placement selects that it may not use (see `placementGate`). */
  refused: Array<{ entityRef: string; cluster: string; reason: string }>;
  degraded: number;
  recovered: number;
  errors: Array<{
    deployment?: string;
    entityRef?: string;
    cluster?: string;
    message: string;
  }>;
}

/** What the reconcile reads and writes: applications, clusters and deployments. */
export type ReconcileStores = {
  applications: Pick<
    ApplicationStore,
    | 'listApplications'
    | 'getApplication'
    | 'listExcludedClusters'
    | 'listPlacementGrants'
    | 'setPlacementRefused'
  >;
  clusters: Pick<ClusterStore, 'listClusters'>;
  deployments: Pick<
    DeploymentStore,
    | 'listDeploymentStates'
    | 'getDeployment'
    | 'listDeployments'
    | 'recordSync'
    | 'updateDeploymentStatus'
    | 'setPlaced'
  >;
  revisions: Pick<RevisionStore, 'listCurrentRevisions'>;
};

/**
 * Live state kept by watches (`ClusterWatches`): which clusters it watches in full, and reads
 * answered from memory where it can.
 */
export interface LiveState {
  /**
   * Watches the ONLINE clusters, stops the others; answers the clusters whose watches started.
   * Called as a reconcile run starts.
   */
  setClusters(clusters: ClusterRecord[]): string[];
  /** A reconcile run starts (before it reads anything): nothing it watches goes stale meanwhile. */
  runStarted?(): void;
  /** That run ended (however it ended). */
  runFinished?(): void;
  /** Every change of the cluster's objects is reported (its watches are all synced). */
  watching(cluster: string): boolean;
  /**
   * The cluster's watches are making their first lists, and their end will be reported: its
   * deployments are compared then (`objectsOn`), from memory, not read from the API now.
   */
  starting?(cluster: string): boolean;
  readLive(
    cluster: ClusterRecord,
    namespace: string,
    manifests: Parameters<ManifestApplier['readLive']>[2],
    options?: { autoscalers?: AutoscalerCache },
  ): Promise<LiveObjects>;
}

/**
 * With health shards (`fleet.health.shards` > 1): the part of the fleet this replica holds, as
 * the health worker's shard leases say. Every replica then runs the reconcile over the clusters
 * of its own shards, and watches only those; the fleet-wide part (placement, rollouts left
 * unfollowed) is a task of its own that one replica at a time runs (`placeOnce`).
 */
export type ReconcileShards = ShardOwnership;

export interface ReconcileWorkerOptions {
  stores: ReconcileStores;
  applier: Pick<ManifestApplier, 'apply' | 'readLive'>;
  /** Reads and re-applies the objects of components that bring their own manifests. */
  objectApplier?: Pick<ObjectSetApplier, 'apply' | 'readLive'>;
  deployments: Pick<
    DeploymentService,
    | 'deploy'
    | 'desiredFor'
    | 'adoptUnfinished'
    | 'undeploy'
    | 'finishRemoval'
    | 'rollBackDegraded'
  >;
  logger: LoggerService;
  scheduler?: SchedulerService;
  deploy: Pick<FleetConfig['deploy'], 'namespace'>;
  /** `resyncIntervalMs` (default 10 minutes) counts only with `liveState`. */
  reconcile: Pick<FleetConfig['reconcile'], 'intervalMs' | 'concurrency'> &
    Partial<Pick<FleetConfig['reconcile'], 'resyncIntervalMs'>>;
  /**
   * The entity's annotations, if the catalog knows it: `cnp.io/clusters` (names, comma-separated)
   * and `cnp.io/cluster-selector` (e.g. `env=prod`) place it.
   */
  annotationsOf?: EntityAnnotationReader;
  /**
   * The deployments a progressive release is running a canary on: their live objects are the
   * release's to change (a scaled-down stable, a canary beside it), so they are neither healed,
   * nor marked degraded, nor pruned until the release is done with them.
   */
  heldDeployments?: () => Promise<Set<string>>;
  /**
   * Whether a placement may put the application on a cluster, with the `fleet.cluster.deploy`
   * decision of the user who last registered, changed or deployed it. Without a gate every
   * selected cluster is used.
   */
  placementGate?: PlacementGate;
  /**
   * Why the component's project keeps it off a cluster (undefined: it may go there); such a
   * cluster is refused like one the placement gate refuses. Throws when the project cannot be
   * read: nothing is placed then, and the refusals shown are left as they were.
   */
  projectGate?: (
    application: Application,
    cluster: ClusterRecord,
  ) => Promise<string | undefined>;
  /**
   * Why the component's project refuses the objects of its own manifests now (see
   * `DeploymentServiceOptions.objectsRefusal`): a self-heal does not re-apply objects recorded
   * before the project was narrowed. Throws when the project cannot be read.
   */
  objectsRefusal?: ObjectsRefusal;
  /**
   * Live state from watches: with it, a deployment whose cluster is watched is compared when one
   * of its objects changes (`checkChanged`) and in a full compare every
   * `reconcile.resyncIntervalMs`, instead of at every run.
   */
  liveState?: LiveState;
  /**
   * With health shards: each replica reconciles and watches the clusters of the shards it holds
   * (the task runs on every replica), instead of one replica the whole fleet.
   */
  shards?: ReconcileShards;
  /** Hears each run once it ended. */
  listener?: Pick<
    FleetListener,
    'reconcileFinished' | 'placementRefusalsChanged'
  >;
}

export function emptySummary(started: number): ReconcileSummary {
  return {
    startedAt: new Date(started).toISOString(),
    durationMs: 0,
    checked: 0,
    synced: 0,
    outOfSync: 0,
    unknown: 0,
    healed: 0,
    placed: [],
    pruned: [],
    refused: [],
    degraded: 0,
    recovered: 0,
    errors: [],
  };
}

/** The deployments running releases hold, read at most once by whoever asks for them first. */
export type HeldDeployments = () => Promise<Set<string>>;

/**
 * One pass's reader of the deployments running releases hold: the read (the release store's
 * active releases) is made when a pass first has a deployment to leave alone or not, and shared
 * by the rest of the pass; a pass with nothing to decide reads nothing.
 */
export function heldOnce(read?: () => Promise<Set<string>>): HeldDeployments {
  let held: Promise<Set<string>> | undefined;
  return () => (held ??= read ? read() : Promise.resolve(new Set<string>()));
}
