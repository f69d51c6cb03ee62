import type { PolicyDecision } from '@backstage/plugin-permission-common';
import type {
  Application,
  ApplicationPlacement,
  ApplicationSpec,
  ClusterStatus,
  Deployment,
  DeploymentStatus,
  FleetEvent,
  HealthCycleSummary,
  MassOutageWarning,
  PlacementRefusal,
  ReleaseGate,
  ReleaseProgress,
  Revision,
  SyncStatus,
} from '@cnp/plugin-fleet-common';
import type { KubernetesObject } from '@kubernetes/client-node';
import type {
  ClusterHealthUpdate,
  ClusterOrigin,
  ClusterRecord,
  ClusterSettings,
  DeploymentFilter,
  DeploymentState,
  DeploymentStatusUpdate,
  DeploymentSyncUpdate,
  DeploymentUpdateCondition,
  DiscoveredCluster,
  DiscoveryUpsertResult,
  LeaseFence,
  LeaseRecord,
  NewApplication,
  NewCluster,
  NewDeployment,
  NewEvent,
  NewRevision,
  PageRequest,
  PlacementGrantInput,
  ReleaseRecord,
} from './records';

export type * from './records';

/**
 * The writes that make up one cluster's health change. They run in one transaction: either all
 * of them land or none does, so an error on one cluster never leaves it half-changed and never
 * touches another cluster's writes in the same cycle.
 */
export interface ClusterHealthTransaction {
  updateClusterHealth(name: string, update: ClusterHealthUpdate): Promise<void>;
  setCascadeHeld(name: string, held: boolean): Promise<void>;
  /**
   * Moves the cluster's `DEPLOYED` deployments to `DEGRADED` / `CLUSTER_OFFLINE`, with an event
   * each. Returns how many moved.
   */
  degradeDeploymentsOnCluster(
    cluster: string,
    actor: string,
    message: string,
  ): Promise<number>;
  /**
   * Moves back to `DEPLOYED` only the cluster's deployments that are `DEGRADED` with reason
   * `CLUSTER_OFFLINE`. Returns how many moved.
   */
  restoreDeploymentsOnCluster(
    cluster: string,
    actor: string,
    message: string,
  ): Promise<number>;
  insertEvent(event: NewEvent): Promise<void>;
}

/** The clusters: registration, discovery, settings and their health writes. */
export interface ClusterStore {
  /**
   * In name order; a `page` reads only part of them (its key is `[name]`). With `names`, only the
   * clusters of those names (none for an empty list); a name no cluster has is left out.
   */
  listClusters(filter?: {
    status?: ClusterStatus;
    names?: readonly string[];
    page?: PageRequest;
  }): Promise<ClusterRecord[]>;
  /**
   * Inserts a cluster as `UNKNOWN`; throws `ConflictError` when the name exists, or, for a
   * manual one, when `maxManual` manual clusters exist already (checked under a lock, so that
   * concurrent registrations cannot pass it together).
   */
  insertCluster(
    cluster: NewCluster,
    options?: { maxManual?: number },
  ): Promise<ClusterRecord>;
  getCluster(name: string): Promise<ClusterRecord | undefined>;
  /** Where every stored cluster comes from: what discovery needs to name and upsert them. */
  listClusterOrigins(): Promise<ClusterOrigin[]>;
  /**
   * Inserts unknown clusters as `UNKNOWN`/`discovered`, and updates endpoint, kubeconfigRef and
   * context of known discovered ones when they changed; a manual registration of the same name
   * is left alone. `known`: the stored clusters as `listClusterOrigins` read them just before
   * (saves a read); read here when not given.
   */
  upsertDiscoveredClusters(
    clusters: DiscoveredCluster[],
    known?: ClusterOrigin[],
  ): Promise<DiscoveryUpsertResult>;
  /**
   * Changes labels and/or the per-cluster failure threshold. With an `actor`, also writes a
   * `SETTINGS_CHANGED` event saying who changed what (same transaction).
   */
  updateClusterSettings(
    name: string,
    settings: ClusterSettings,
    actor?: string,
  ): Promise<ClusterRecord | undefined>;
  /**
   * Deletes a cluster; returns false when there was none, throws `ConflictError` while it has
   * deployments. Its event history stays, closed by a `DELETED` event naming `actor`.
   */
  deleteCluster(name: string, actor?: string): Promise<boolean>;
  countClustersByStatus(): Promise<Record<ClusterStatus, number>>;

  /**
   * Runs `fn` in one database transaction: one cluster's health change and its cascade. With a
   * `fence`, only while that lease is still held as it was taken (`LeaseLostError` otherwise,
   * nothing written).
   */
  inClusterTransaction<T>(
    fn: (tx: ClusterHealthTransaction) => Promise<T>,
    fence?: LeaseFence,
  ): Promise<T>;
  /**
   * Writes the health rows of several clusters in one statement: for the clusters of a cycle
   * with no status change and nothing to cascade (a counter, the probe time, the latency). All
   * of them land or none does; `lastTransitionAt` is ignored here. With a `fence`, only while
   * that lease is still held as it was taken (`LeaseLostError` otherwise, nothing written).
   */
  updateClustersHealth(
    updates: Array<{ name: string; update: ClusterHealthUpdate }>,
    fence?: LeaseFence,
  ): Promise<void>;
}

/** The applications: one per catalog component Fleet deploys. */
export interface ApplicationStore {
  /** In entity-ref order; a `page` reads only part of them (its key is `[entityRef]`). */
  listApplications(filter?: {
    entityRef?: string;
    page?: PageRequest;
  }): Promise<Application[]>;
  getApplication(id: string): Promise<Application | undefined>;
  /** The applications whose spec puts an Ingress on this host (lower case, exact). */
  listApplicationsByIngressHost(host: string): Promise<Application[]>;
  getApplicationByEntityRef(
    entityRef: string,
  ): Promise<Application | undefined>;
  /** Throws `ConflictError` when the entity already has an application. */
  insertApplication(application: NewApplication): Promise<Application>;
  /**
   * Writes spec and/or placement and bumps the version. With `expectedVersion`, only over that
   * version: `PreconditionFailedError` when the application is at another one. Undefined when it
   * is gone.
   */
  updateApplication(
    id: string,
    update: {
      spec?: ApplicationSpec;
      placement?: ApplicationPlacement;
      /** The new placement's author's decision, written in the same transaction. */
      placementGrant?: PlacementGrantInput;
    },
    expectedVersion?: number,
  ): Promise<Application | undefined>;
  /** Marks the application as being removed: it is placed nowhere any more. */
  markRemoving(id: string): Promise<Application | undefined>;
  /** Deletes the application if it has no deployment left; true when it went. */
  deleteIfEmpty(id: string): Promise<boolean>;
  /** Keeps the placement off a cluster the application was undeployed from by hand. */
  excludeCluster(id: string, cluster: string, actor: string): Promise<void>;
  /** Lets the placement use the cluster again (a deploy there by hand). */
  includeCluster(id: string, cluster: string): Promise<void>;
  /** The clusters the placement skips, per application. */
  listExcludedClusters(): Promise<Map<string, Set<string>>>;
  /**
   * Keeps the `fleet.cluster.deploy` decision of the user who last registered, changed or
   * deployed the application: the reconcile places it with that decision.
   */
  setPlacementGrant(id: string, grant: PlacementGrantInput): Promise<void>;
  /** The recorded decisions, per application (applications without one are absent). */
  listPlacementGrants(): Promise<Map<string, PlacementGrant>>;
  /** The clusters the placement selects but was refused (empty: none); shown on the application. */
  setPlacementRefused(id: string, refused: PlacementRefusal[]): Promise<void>;
}

/** A user's decision on `fleet.cluster.deploy`, kept for the reconcile to place with. */
export interface PlacementGrant {
  decision: PolicyDecision;
  /** Who it is the decision of, e.g. user:default/ada. */
  by: string;
}

/** What forgets a deployment, and why (its last event). */
export interface DeleteDeploymentRequest {
  /** The deployment's id. */
  id: string;
  /** Who forgets it, for its event. */
  actor: string;
  /** The reason of the last event (`UNDEPLOYED`, `PRUNED`, `FORGOTTEN`). */
  reason: string;
  /** The message of the last event. */
  message: string;
  /** Only while the deployment is still as the caller last saw it. */
  condition?: DeploymentUpdateCondition;
}

/** The deployments: one application on one cluster, its status and its sync status. */
export interface DeploymentStore {
  listDeployments(filter?: DeploymentFilter): Promise<Deployment[]>;
  /**
   * Every deployment (of one application, or all) as the reconcile needs it at each run, in the
   * order of `listDeployments`: the status fields and its current revision's namespace only.
   */
  listDeploymentStates(filter?: {
    applicationId?: string;
  }): Promise<DeploymentState[]>;
  getDeployment(id: string): Promise<Deployment | undefined>;
  getDeploymentFor(
    applicationId: string,
    cluster: string,
  ): Promise<Deployment | undefined>;
  /**
   * Inserts a deployment with its first event; `ConflictError` when the application already has
   * one on that cluster, or the cluster was removed meanwhile.
   */
  insertDeployment(
    deployment: NewDeployment,
    actor: string,
  ): Promise<Deployment>;
  /**
   * Changes a deployment's status and writes the event when the status changed. With a
   * `condition`, changes nothing (and answers undefined) unless the row still matches it.
   */
  updateDeploymentStatus(
    id: string,
    update: DeploymentStatusUpdate,
    actor: string,
    condition?: DeploymentUpdateCondition,
  ): Promise<Deployment | undefined>;
  /**
   * Ends a rollout that completed, while the deployment is still PROGRESSING on `revision`
   * (undefined otherwise): `deployed`, or DEGRADED / CLUSTER_OFFLINE when its cluster is OFFLINE.
   * The cluster is read in the same transaction as the write, its row locked, so a health
   * cascade can never fall between the two and be lost.
   */
  completeRollout(
    id: string,
    revision: number,
    deployed: DeploymentStatusUpdate,
    actor: string,
  ): Promise<Deployment | undefined>;
  /**
   * Notes what a rollout still waits for as the deployment's message, while it is PROGRESSING
   * on `revision`; no event. Answers the deployment when the message changed, else undefined.
   */
  noteRolloutProgress(
    id: string,
    revision: number,
    message: string,
  ): Promise<Deployment | undefined>;
  /** Records a sync result, with an event when the sync status changes. */
  recordSync(
    id: string,
    update: DeploymentSyncUpdate,
    actor: string,
  ): Promise<Deployment | undefined>;
  /**
   * Records a new revision and makes it the deployment's current one: the deployment goes back
   * to PENDING with the revision's image, under one row lock. Returns undefined when the
   * deployment is gone.
   */
  /** Refuses (`ConflictError`) a deployment being undeployed. */
  startRevision(
    id: string,
    revision: NewRevision,
    message: string,
    /** The event's reason (default `REVISION_<CAUSE>`). */
    eventReason?: string,
  ): Promise<Deployment | undefined>;
  /**
   * Forgets a deployment: its row goes, with a last event (`to`: `REMOVED`) saying why; its
   * revisions and events stay. False when it was already gone.
   */
  deleteDeployment(request: DeleteDeploymentRequest): Promise<boolean>;
  /** Marks whether the placement still selects the deployment's cluster, with an event on change. */
  setPlaced(
    id: string,
    placed: boolean,
    actor: string,
  ): Promise<Deployment | undefined>;
  countDeploymentsByStatus(): Promise<{
    byStatus: Record<DeploymentStatus, number>;
    bySyncStatus: Record<SyncStatus, number>;
  }>;
  /** Deployments per cluster and status, by cluster name; clusters without any left out. */
  countDeploymentsByCluster(): Promise<
    Array<{ cluster: string; byStatus: Record<DeploymentStatus, number> }>
  >;
}

/** Every deployment's revisions: what it ran and should run, with the outcome of each. */
export interface RevisionStore {
  /** One deployment's revisions, newest first; with a page, those after its key (`[revision]`). */
  listRevisions(deploymentId: string, page?: PageRequest): Promise<Revision[]>;
  getRevision(
    deploymentId: string,
    revision: number,
  ): Promise<Revision | undefined>;
  /**
   * The objects a revision of a component's own manifests rendered for its cluster, as applied;
   * undefined for Fleet's generated workload.
   */
  getRevisionObjects(
    deploymentId: string,
    revision: number,
  ): Promise<KubernetesObject[] | undefined>;
  /** The current revision of each deployment (of one application, of the given ones, or all). */
  listCurrentRevisions(filter?: {
    applicationId?: string;
    deploymentIds?: string[];
  }): Promise<Revision[]>;
}

/** What {@link ReleaseStore.updateRelease} writes of a release: only the fields given. */
export interface ReleaseChange {
  phase?: string | null;
  gate?: ReleaseGate;
  progress?: ReleaseProgress;
  targets?: ReleaseRecord['targets'];
  skipped?: ReleaseRecord['skipped'];
}

/** Fleet releases, newest first. */
export interface ReleaseStore {
  /**
   * Stores a new release with the events of its start in one transaction: the release task, which
   * reads running releases twice a second, never finds one without them, nor writes it between.
   */
  insertRelease(
    release: Omit<ReleaseRecord, 'createdAt' | 'version'>,
    events?: NewEvent[],
  ): Promise<ReleaseRecord>;
  getRelease(id: string): Promise<ReleaseRecord | undefined>;
  /** Newest first; with a page, the releases after its key (`[createdAt, id]`). */
  listReleases(
    applicationId: string,
    page?: PageRequest,
  ): Promise<ReleaseRecord[]>;
  /** Releases with a strategy still running: PROGRESSING, PAUSED or ABORTING. */
  listActiveReleases(): Promise<ReleaseRecord[]>;
  /** How many releases stand in each phase; a release without a strategy counts as `IMMEDIATE`. */
  countReleasesByPhase(): Promise<Record<string, number>>;
  /**
   * The fleet's releases not ended in the given phases, oldest first, at most `limit` (default
   * 500): waiting before they start (`WAITING_FOR_APPROVAL`, `WAITING_FOR_WINDOW`, both by
   * default) or running with a strategy (`PROGRESSING`, `PAUSED`, `ABORTING`); other phases are
   * ignored.
   */
  listOpenReleases(options?: {
    phases?: string[];
    limit?: number;
  }): Promise<ReleaseRecord[]>;
  /**
   * Writes what changed of a release (its phase, gate, progress, targets, skipped clusters) and
   * the events of the change in one transaction, only if nobody wrote it since
   * `expectedVersion` was read. False when someone did: nothing is written, read it again.
   */
  updateRelease(
    id: string,
    expectedVersion: number,
    change: ReleaseChange,
    events?: NewEvent[],
  ): Promise<boolean>;
  /**
   * Writes a progressive release's state (its phase, its targets when given) and the events of
   * its transitions in one transaction, only if nobody wrote it since `expectedVersion` was read.
   * False when someone did: nothing is written, read it again.
   */
  updateProgress(
    id: string,
    expectedVersion: number,
    progress: ReleaseProgress,
    extra?: { targets?: ReleaseRecord['targets']; events?: NewEvent[] },
  ): Promise<boolean>;
}

/** The status history of clusters and deployments, kept for a retention period. */
export interface EventStore {
  /**
   * One subject's events, newest first, each with what its subject concerns, as
   * `listRecentEvents` gives it.
   */
  listEvents(filter: {
    subjectKind: FleetEvent['subjectKind'];
    subject: string;
    limit?: number;
  }): Promise<FleetEvent[]>;
  /**
   * The fleet's events, newest first, each with what its subject concerns: `entityRef` (the
   * component of a deployment or release) and `cluster` (a deployment's cluster, or the cluster
   * itself), so that people read "payments on sim-2" rather than a deployment's id. An undeployed
   * deployment is still named, from its revisions; `null` when nothing says any more.
   */
  listRecentEvents(limit: number): Promise<FleetEvent[]>;
  /**
   * Deletes at most `limit` events created before `cutoff`, oldest first, in one short
   * statement; returns how many went. Call it again until it returns less than `limit`.
   */
  deleteEventsBefore(cutoff: Date, limit: number): Promise<number>;
}

/** Fleet-level state shared by every replica: the health cycle's outputs and the leases. */
export interface FleetStateStore {
  /**
   * The key the API signs its list cursors with: 32 random bytes made by the first replica that
   * asks, then the same for every replica (and across restarts).
   */
  cursorSigningKey(): Promise<Buffer>;
  /** The mass-outage warning as the last health cycle left it, if one was ever raised. */
  getMassOutage(): Promise<MassOutageWarning | undefined>;
  /** With a `fence`, only while that lease is held as it was taken (`LeaseLostError`). */
  setMassOutage(warning: MassOutageWarning, fence?: LeaseFence): Promise<void>;
  /** What the last health cycle did, by any replica. */
  getLastCycle(): Promise<HealthCycleSummary | undefined>;
  /** With a `fence`, only while that lease is held as it was taken (`LeaseLostError`). */
  setLastCycle(summary: HealthCycleSummary, fence?: LeaseFence): Promise<void>;
  /** Takes (or renews) a lease; false when another holder has an unexpired one. */
  tryAcquireLease(
    name: string,
    holder: string,
    ttlMs: number,
  ): Promise<boolean>;
  /**
   * Takes (or renews) a lease and answers it with its fencing token, which moves on whenever a
   * holder takes the lease (a renewal keeps it); undefined when another holder has an unexpired
   * one. Writes fenced by the answer are refused once the lease is lost.
   */
  takeLease(
    name: string,
    holder: string,
    ttlMs: number,
  ): Promise<LeaseFence | undefined>;
  /** Ends the holder's lease (its token stays, so the next take moves it on). */
  releaseLease(name: string, holder: string): Promise<void>;
  /** Every lease whose name starts with `prefix`, expired ones too, by name. */
  listLeases(prefix: string): Promise<LeaseRecord[]>;
  /**
   * Deletes the leases whose name starts with `prefix` that expired more than `expiredForMs`
   * ago by the database's clock; answers how many. Only for leases whose token fences nothing
   * (a replica's presence): a deleted lease's token starts again.
   */
  deleteExpiredLeases(prefix: string, expiredForMs: number): Promise<number>;
}

/** Every store of Fleet, over one database. */
export interface FleetStores {
  clusters: ClusterStore;
  applications: ApplicationStore;
  deployments: DeploymentStore;
  revisions: RevisionStore;
  releases: ReleaseStore;
  events: EventStore;
  state: FleetStateStore;
}
