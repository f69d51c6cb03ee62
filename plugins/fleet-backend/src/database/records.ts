import type { PolicyDecision } from '@backstage/plugin-permission-common';
import type {
  ApplicationOrigin,
  ApplicationPlacement,
  ApplicationSpec,
  Cluster,
  ClusterSource,
  ClusterStatus,
  DeploymentStatus,
  FleetEvent,
  RevisionCause,
  SyncDifference,
  SyncStatus,
  EnvMap,
  ManifestSource,
  ReleaseGate,
  ReleaseProgress,
  ReleaseStrategy,
} from '@cnp/plugin-fleet-common';
import type { KubernetesObject } from '@kubernetes/client-node';

/*
 * What the stores take and give besides the API's own types: new rows, updates, filters and
 * the records of the bookkeeping the API does not show. The store interfaces are in `types.ts`.
 */

/** A cluster row, with the bookkeeping the API does not show. */
export interface ClusterRecord extends Omit<Cluster, 'kubeconfigRef'> {
  /** Always known here; the API shows it to cluster admins only. */
  kubeconfigRef: string;
  cascadeHeldAt?: string;
  /** When the first of the cluster's consecutive failed probes ran (the outage's time rule). */
  firstFailureAt?: string;
  /**
   * The fingerprint of the CA its kubeconfig trusted when it was registered (see
   * `database/clusterIdentity.ts`): a kubeconfig that names another CA is another API server.
   */
  identityCa?: string;
}

export interface NewCluster {
  name: string;
  endpoint: string;
  kubeconfigRef: string;
  context?: string;
  source: ClusterSource;
  labels?: Record<string, string>;
  /**
   * The CA half of its identity (`sha256:<hex>` or `none`); unknown when left out. The server
   * half is its endpoint, normalized.
   */
  identityCa?: string;
  /** Who registered it, for the event (default: `fleet-discovery` or `fleet-api`). */
  actor?: string;
}

/** What discovery found; upserted by name. */
export interface DiscoveredCluster {
  name: string;
  endpoint: string;
  kubeconfigRef: string;
  context?: string;
  /** The CA half of its identity (see {@link NewCluster.identityCa}). */
  identityCa?: string;
  /**
   * The stored cluster whose name this one came back with, on another API server: it keeps its
   * deployments, labels and history, and gets an event saying so when this one is inserted.
   */
  nameHeldBy?: { name: string; message: string };
}

export interface ClusterOrigin extends DiscoveredCluster {
  source: ClusterSource;
  /** The server half of its identity (its endpoint, normalized). */
  identityServer: string;
}

export interface ClusterHealthUpdate {
  status: ClusterStatus;
  statusReason?: string;
  consecutiveFailures: number;
  consecutiveSuccesses: number;
  /** When the first of the consecutive failures ran: a Date sets it, null clears it. */
  firstFailureAt?: Date | null;
  lastProbeAt?: Date;
  lastSuccessAt?: Date;
  lastTransitionAt?: Date;
  probeLatencyMs?: number;
  serverVersion?: string;
}

export interface NewEvent {
  subjectKind: FleetEvent['subjectKind'];
  subject: string;
  actor: string;
  from?: string;
  to: string;
  reason?: string;
  message?: string;
}

export interface NewApplication {
  entityRef: string;
  name: string;
  origin?: ApplicationOrigin;
  spec: ApplicationSpec;
  placement?: ApplicationPlacement;
  /**
   * The author's `fleet.cluster.deploy` decision, written with the application in one
   * transaction: the reconcile never sees the application without it.
   */
  placementGrant?: PlacementGrantInput;
}

/**
 * A user's `fleet.cluster.deploy` decision, as the routes record it.
 *
 * @public
 */
export interface PlacementGrantInput {
  decision: PolicyDecision;
  /** Who it is the decision of, e.g. user:default/ada. */
  by: string;
}

/** What a revision asks the cluster to run (see `Revision`). */
export interface RevisionSpec {
  image: string;
  replicas?: number;
  env?: EnvMap;
  resources?: ApplicationSpec['resources'];
  /** Unset: the configured default namespace. */
  namespace?: string;
  /** The container port (unset: the default one). */
  port?: number;
  /** For a component's own manifests: where the objects came from. */
  source?: ManifestSource;
  /**
   * For a component's own manifests: the objects rendered for the cluster, with Fleet's marks,
   * as applied (a rollback applies them again; the next revision prunes what they had).
   */
  objects?: KubernetesObject[];
}

export interface NewRevision extends RevisionSpec {
  cause: RevisionCause;
  createdBy: string;
}

export interface NewDeployment {
  applicationId: string;
  cluster: string;
  status: DeploymentStatus;
  statusReason?: string;
  message?: string;
  image?: string;
  /** Recorded as revision 1, in the same transaction (the deployment's revision is then 1). */
  firstRevision?: NewRevision;
}

export interface DeploymentStatusUpdate {
  status: DeploymentStatus;
  statusReason?: string | null;
  message?: string | null;
  syncStatus?: SyncStatus;
  image?: string;
  revision?: number;
  lastAppliedAt?: Date;
  lastSyncedAt?: Date;
}

/** What the reconcile found when it compared a deployment's live objects with the desired ones. */
export interface DeploymentSyncUpdate {
  syncStatus: SyncStatus;
  /** With OUT_OF_SYNC: what differs (cleared otherwise). */
  syncDifferences?: SyncDifference[];
  lastSyncedAt?: Date;
  lastAppliedAt?: Date;
  /** Event reason, e.g. DRIFT_DETECTED or SELF_HEALED. */
  reason?: string;
  message?: string;
  /** Write the event even when the sync status stays the same (e.g. a self-heal). */
  forceEvent?: boolean;
}

/** Guards an update: it only happens while the deployment is still as the caller last saw it. */
export interface DeploymentUpdateCondition {
  status?: DeploymentStatus;
  revision?: number;
}

export interface DeploymentFilter {
  entityRef?: string;
  cluster?: string;
  applicationId?: string;
  /** Only deployments in one of these statuses. */
  statuses?: DeploymentStatus[];
  /**
   * Only these deployments (read a few hundred per statement); not with `page`. Ordered by
   * entity ref and cluster compared as strings (code units), not by the database's collation.
   */
  ids?: string[];
  /** One page, in (entity ref, cluster) order; the key is `[entityRef, cluster]`. */
  page?: PageRequest;
}

/**
 * What the reconcile reads of every deployment at each run to place applications, to index live
 * objects and to tell which deployments changed: no timestamps, messages nor differences.
 */
export interface DeploymentState {
  id: string;
  applicationId: string;
  cluster: string;
  status: DeploymentStatus;
  statusReason: string | null;
  syncStatus: SyncStatus;
  revision: number;
  placed: boolean;
  /** The namespace of the deployment's current revision, when it names one. */
  namespace?: string;
}

/**
 * One page of a list read in the order of a unique key (keyset paging): at most `limit` rows,
 * those after the row whose key is `after`. Without a page, a list reads every row.
 */
export interface PageRequest {
  limit: number;
  /** The key of the last row of the previous page (its columns in sort order). */
  after?: string[];
}

/** What an upsert of discovered clusters did, cluster by cluster. */
export interface DiscoveryUpsertResult {
  inserted: string[];
  updated: string[];
  /** Clusters the database refused; the others were still written. */
  failed: Array<{ name: string; message: string }>;
}

export interface ClusterSettings {
  labels?: Record<string, string>;
  /** `null` goes back to the fleet's default threshold. */
  failureThreshold?: number | null;
}

/** A release as stored: what was asked, and which revision it made on which cluster. */
export interface ReleaseRecord {
  id: string;
  applicationId: string;
  createdBy: string;
  createdAt: string;
  request: {
    image?: string;
    replicas?: number;
    env?: EnvMap;
    /** The version of the component's own manifests. */
    version?: string;
    /** The clusters it goes to, kept while it waits before it starts. */
    clusters?: string[];
  };
  strategy?: ReleaseStrategy;
  phase?: string;
  targets: Array<{ cluster: string; deploymentId: string; revision: number }>;
  skipped: Array<{ cluster: string; reason: string }>;
  /** The running state of a release with a strategy. */
  progress?: ReleaseProgress;
  /** The application's stage the release goes to. */
  stage?: string;
  /** What the release waits for (or waited for) before it starts; none when it started at once. */
  gate?: ReleaseGate;
  /** Bumped on every progress write (optimistic concurrency). */
  version: number;
}

/**
 * A lease as one holder took it: the fencing token is bumped whenever a holder takes the lease
 * (not when it renews it), so a holder that lost it carries a token that is no longer current,
 * and the writes it fences are refused.
 */
export interface LeaseFence {
  name: string;
  holder: string;
  token: number;
}

/** A lease as `fleet_locks` holds it. */
export interface LeaseRecord {
  name: string;
  holder: string;
  token: number;
  /** ISO time; a lease is held until then (by the database's clock). */
  expiresAt: string;
  /**
   * How long the lease still ran when listed, by the database's clock (negative: it had run out
   * that long before). A replica compares this, never `expiresAt` with its own clock.
   */
  remainingMs: number;
}
