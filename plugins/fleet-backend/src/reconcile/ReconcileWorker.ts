import { LoggerService, SchedulerService } from '@backstage/backend-plugin-api';
import { ForwardedError } from '@backstage/errors';
import {
  annotatedClusters,
  DeploymentReasons,
  FLEET_ANNOTATION_CLUSTER_SELECTOR,
  type Application,
  type PlacementRefusal,
  type Revision,
  type SyncDifference,
} from '@cnp/plugin-fleet-common';
import pLimit from 'p-limit';
import type { FleetConfig } from '../config/FleetConfig';
import type {
  ApplicationStore,
  ClusterRecord,
  ClusterStore,
  DeploymentState,
  DeploymentStore,
  RevisionStore,
} from '../database/types';
import {
  ignoresReplicas,
  type DeploymentService,
} from '../deploy/DeploymentService';
import type {
  AutoscalerCache,
  LiveObjects,
  ManifestApplier,
} from '../deploy/ManifestApplier';
import { diffObject } from '../kubernetes/diffObject';
import type { FleetListener } from '../events/FleetListener';
import { asError } from '../util/errors';
import type { ShardOwnership } from '../sharding/types';
import type { EntityAnnotationReader } from '../catalog/entityAnnotations';
import {
  isEmptySelector,
  parseLabelSelector,
} from '../kubernetes/labelSelector';
import {
  hasPlacement,
  placementTargets,
  type AnnotatedPlacement,
} from './placement';
import type { PlacementGate } from './placementGate';
import type { ObjectChange } from '../livestate/ClusterWatches';

export const RECONCILE_TASK_ID = 'fleet-reconcile';
/** With health shards: the fleet-wide part of the reconcile, on one replica at a time. */
export const PLACEMENT_TASK_ID = 'fleet-placement';
const ACTOR = 'fleet-reconcile';

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
  /** Watches the ONLINE clusters, stops the others; answers the clusters whose watches started. */
  setClusters(clusters: ClusterRecord[]): string[];
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

function emptySummary(started: number): ReconcileSummary {
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

const objectKey = (o: ObjectChange) =>
  `${o.cluster}\u0000${o.namespace}\u0000${o.name}`;

/** What, of a deployment and its application, changes what its compare concludes. */
const stateOf = (d: DeploymentState, application: Application) =>
  [
    d.status,
    d.statusReason ?? '',
    d.revision,
    d.placed,
    application.updatedAt,
  ].join('|');

/**
 * Keeps the fleet as desired: places applications on the clusters their placement selects,
 * compares every deployment's live objects with the desired ones on the fields Fleet owns
 * (SYNCED / OUT_OF_SYNC with what differs / UNKNOWN when it cannot know), re-applies drifted ones
 * whose application asks for selfHeal, and turns workload health into DEGRADED /
 * WORKLOAD_UNHEALTHY and back. Live reads run with bounded concurrency; one failing deployment or
 * cluster never stops the others.
 */
export class ReconcileWorker {
  /** When the last full compare started (with live state, every other run checks fewer). */
  private lastFullAt: number | undefined;
  /**
   * Deployment ids by the live objects' cluster, namespace and name, as of the last run: how a
   * changed object finds its deployment.
   */
  private byObject = new Map<string, string[]>();
  /** The same objects by cluster (see `objectsOn`). */
  private byCluster = new Map<string, ObjectChange[]>();
  /** What each deployment was at the last run: one that changed since is checked again. */
  private seen = new Map<string, string>();
  /** When each deployment was last healed (event-driven heals are limited by it). */
  private readonly healedAt = new Map<string, number>();
  /** Deployments an event found drifted but could not heal yet: the next run checks them. */
  private readonly recheck = new Set<string>();

  private constructor(private readonly options: ReconcileWorkerOptions) {}

  static create(options: ReconcileWorkerOptions): ReconcileWorker {
    return new ReconcileWorker(options);
  }

  async start(): Promise<void> {
    const { scheduler, reconcile } = this.options;
    if (!scheduler) throw new Error('ReconcileWorker.start needs a scheduler');
    const timing = {
      frequency: { milliseconds: reconcile.intervalMs },
      timeout: { milliseconds: Math.max(reconcile.intervalMs, 10 * 60_000) },
      initialDelay: { seconds: 15 },
    };
    await scheduler.scheduleTask({
      id: RECONCILE_TASK_ID,
      // With shards every replica runs it, over its own shards' clusters.
      scope: this.options.shards ? 'local' : 'global',
      ...timing,
      fn: async () => {
        try {
          await this.runOnce();
        } catch (error) {
          throw new ForwardedError('Fleet reconcile failed', error);
        }
      },
    });
    if (!this.options.shards) return;
    // The fleet-wide part stays under the scheduler's global lock: two replicas never place at
    // the same time.
    await scheduler.scheduleTask({
      id: PLACEMENT_TASK_ID,
      scope: 'global',
      ...timing,
      fn: async () => {
        try {
          await this.placeOnce();
        } catch (error) {
          throw new ForwardedError('Fleet placement failed', error);
        }
      },
    });
  }

  /**
   * With health shards, the fleet-wide part of a run, which `runOnce` then leaves out: rollouts
   * and applies no process follows are adopted, and applications are placed on the clusters
   * their placement selects (whichever replica holds them).
   */
  async placeOnce(): Promise<ReconcileSummary> {
    const started = Date.now();
    const summary = emptySummary(started);
    const { stores, deployments } = this.options;
    await deployments.adoptUnfinished();
    const [applications, clusters] = await Promise.all([
      stores.applications.listApplications(),
      stores.clusters.listClusters(),
    ]);
    const held = (await this.options.heldDeployments?.()) ?? new Set<string>();
    await this.place(applications, clusters, summary, held);
    summary.durationMs = Date.now() - started;
    return summary;
  }

  async runOnce(): Promise<ReconcileSummary> {
    const started = Date.now();
    const summary = emptySummary(started);
    const { stores, deployments: deployService } = this.options;
    // With shards, the fleet-wide part is `placeOnce`'s, and a run is over the clusters this
    // replica holds as the run starts (one view for the whole run: shards move meanwhile).
    const shards = this.options.shards?.current();
    const mine = (cluster: string) => !shards || shards.holdsCluster(cluster);
    // Rollouts another replica (or a restart) left unfollowed, and applies left half-done.
    if (!shards) await deployService.adoptUnfinished();
    const [applications, fleet] = await Promise.all([
      stores.applications.listApplications(),
      stores.clusters.listClusters(),
    ]);
    const clusters = shards ? fleet.filter(c => mine(c.name)) : fleet;
    const held = (await this.options.heldDeployments?.()) ?? new Set<string>();
    const { liveState, reconcile } = this.options;
    // Clusters whose watches start now: their first list reports nothing, so this run compares
    // their deployments. With shards, the clusters of shards this replica no longer holds stop.
    const newlyWatched = new Set(liveState?.setClusters(clusters) ?? []);
    const full =
      !liveState ||
      this.lastFullAt === undefined ||
      started - this.lastFullAt >= (reconcile.resyncIntervalMs ?? 10 * 60_000);
    if (!shards) await this.place(applications, fleet, summary, held);

    // What a run needs of every deployment is small (its status fields and its revision's
    // namespace); the current revisions in full are read for the deployments compared only.
    const all = await stores.deployments.listDeploymentStates();
    const deployments = shards ? all.filter(d => mine(d.cluster)) : all;
    const apps = new Map(applications.map(a => [a.id, a]));
    const clustersByName = new Map(clusters.map(c => [c.name, c]));
    const byObject = new Map<string, string[]>();
    const seen = new Map<string, string>();
    for (const d of deployments) {
      const application = apps.get(d.applicationId);
      if (!application) continue;
      const key = objectKey({
        cluster: d.cluster,
        namespace: d.namespace ?? this.options.deploy.namespace,
        name: application.name,
      });
      byObject.set(key, [...(byObject.get(key) ?? []), d.id]);
      seen.set(d.id, stateOf(d, application));
    }
    // Between full compares, a deployment on a watched cluster is compared when its objects
    // change; here only when it changed itself (a deploy ended, its application changed), is
    // being removed, is not SYNCED (a heal that failed is tried again, an UNKNOWN left by an
    // outage is settled; read from memory, this costs no API call), or its cluster is not watched
    // (not ONLINE, watches just started or restarting, a kind the cluster forbids listing).
    const compared = full
      ? deployments
      : deployments.filter(
          d =>
            d.status === 'REMOVING' ||
            d.syncStatus !== 'SYNCED' ||
            newlyWatched.has(d.cluster) ||
            !liveState!.watching(d.cluster) ||
            this.seen.get(d.id) !== seen.get(d.id) ||
            this.recheck.has(d.id),
        );
    // A cluster whose watches are making their first lists is compared once they are in (see
    // `objectsOn`): read now from the API, every object would be read twice.
    const due = liveState?.starting
      ? compared.filter(
          d => d.status === 'REMOVING' || !liveState.starting!(d.cluster),
        )
      : compared;
    this.recheck.clear();
    for (const [id, at] of this.healedAt) {
      if (started - at >= reconcile.intervalMs) this.healedAt.delete(id);
    }
    this.byObject = byObject;
    const byCluster = new Map<string, ObjectChange[]>();
    for (const key of byObject.keys()) {
      const [cluster, namespace, name] = key.split('\u0000');
      const objects = byCluster.get(cluster) ?? [];
      objects.push({ cluster, namespace, name });
      byCluster.set(cluster, objects);
    }
    this.byCluster = byCluster;
    this.seen = seen;
    const checked = due.filter(d => !held.has(d.id));
    // Each deployment is compared with its own current revision, never with the application's
    // newer defaults: a deploy to one cluster changes nothing on another.
    const revisions =
      checked.length === 0
        ? []
        : await stores.revisions.listCurrentRevisions(
            checked.length === all.length
              ? {}
              : { deploymentIds: checked.map(d => d.id) },
          );
    const revisionOf = new Map(revisions.map(r => [r.deploymentId, r]));
    await this.checkAll(checked, revisionOf, apps, clustersByName, summary);
    if (full) this.lastFullAt = started;
    summary.durationMs = Date.now() - started;
    this.options.listener?.reconcileFinished?.({
      durationMs: summary.durationMs,
      checked: summary.checked,
      errors: summary.errors.length,
    });
    return summary;
  }

  /**
   * The live objects of the last run's deployments on a cluster: what to compare once the
   * cluster's watches have made their first lists (give them to `checkChanged`).
   */
  objectsOn(cluster: string): ObjectChange[] {
    return this.byCluster.get(cluster) ?? [];
  }

  /**
   * Compares the deployments whose live objects changed (reported by the watches), as a run
   * compares each of its deployments; objects no deployment of the last run owns are ignored.
   */
  async checkChanged(changes: ObjectChange[]): Promise<ReconcileSummary> {
    const started = Date.now();
    const summary = emptySummary(started);
    const ids = new Set(
      changes.flatMap(c => this.byObject.get(objectKey(c)) ?? []),
    );
    if (ids.size === 0) return summary;
    const { stores } = this.options;
    const held = (await this.options.heldDeployments?.()) ?? new Set<string>();
    const clusters = await stores.clusters.listClusters();
    // A batch can hold a whole cluster's objects, or many clusters' (their watches listed at
    // once): read a few hundred per statement, not one statement per deployment.
    const read = pLimit(this.options.reconcile.concurrency);
    const loaded = await stores.deployments.listDeployments({
      ids: [...ids].filter(id => !held.has(id)),
    });
    // With shards, a cluster whose shard moved to another replica since the last run is that
    // one's to compare and heal, though this replica still watches it until its next run.
    const shards = this.options.shards?.current();
    const deployments = loaded.filter(
      d => !shards || shards.holdsCluster(d.cluster),
    );
    const applicationIds = [...new Set(deployments.map(d => d.applicationId))];
    const apps = new Map<string, Application>();
    const [revisions] = await Promise.all([
      deployments.length
        ? stores.revisions.listCurrentRevisions({
            deploymentIds: deployments.map(d => d.id),
          })
        : [],
      ...applicationIds.map(async id => {
        const application = await read(() =>
          stores.applications.getApplication(id),
        );
        if (application) apps.set(id, application);
      }),
    ]);
    const revisionOf = new Map(revisions.map(r => [r.deploymentId, r]));
    await this.checkAll(
      deployments,
      revisionOf,
      apps,
      new Map(clusters.map(c => [c.name, c])),
      summary,
      true,
    );
    summary.durationMs = Date.now() - started;
    return summary;
  }

  private async checkAll(
    deployments: DeploymentState[],
    revisionOf: Map<string, Revision>,
    apps: Map<string, Application>,
    clustersByName: Map<string, ClusterRecord>,
    summary: ReconcileSummary,
    fromEvent = false,
  ): Promise<void> {
    const limit = pLimit(this.options.reconcile.concurrency);
    // One HPA list per cluster and namespace for the whole run, not one per deployment.
    const autoscalers: AutoscalerCache = new Map();
    await Promise.all(
      deployments.map(deployment =>
        limit(async () => {
          try {
            await this.check(
              deployment,
              revisionOf.get(deployment.id),
              apps.get(deployment.applicationId),
              clustersByName.get(deployment.cluster),
              summary,
              autoscalers,
              fromEvent,
            );
          } catch (error) {
            summary.errors.push({
              deployment: deployment.id,
              cluster: deployment.cluster,
              message: asError(error).message,
            });
            this.options.logger
              .child({
                deployment: deployment.id,
                cluster: deployment.cluster,
              })
              .warn(
                `Reconcile of deployment ${deployment.id} on ${deployment.cluster} failed`,
                asError(error),
              );
          }
        }),
      ),
    );
  }

  /** Gives every application a deployment on each ONLINE/UNKNOWN cluster its placement selects. */
  private async place(
    applications: Application[],
    clusters: ClusterRecord[],
    summary: ReconcileSummary,
    held: Set<string>,
  ) {
    const {
      stores,
      deployments,
      annotationsOf,
      logger,
      placementGate,
      projectGate,
    } = this.options;
    const excluded = await stores.applications.listExcludedClusters();
    const grants = placementGate
      ? await stores.applications.listPlacementGrants()
      : new Map();
    for (const application of applications) {
      if (application.removing) continue;
      const { placement } = application;
      let annotated: AnnotatedPlacement = {};
      const placementIsExplicit =
        (placement.clusters?.length ?? 0) > 0 &&
        !isEmptySelector(placement.clusterSelector);
      // Whether the placement could be read whole: a catalog that does not answer prunes nothing.
      let evaluated = true;
      if (!placementIsExplicit && annotationsOf) {
        try {
          const annotations = await annotationsOf(application.entityRef);
          const selectorText = annotations[FLEET_ANNOTATION_CLUSTER_SELECTOR];
          annotated = {
            clusters: annotatedClusters(annotations),
            clusterSelector: parseLabelSelector(selectorText),
          };
          // A selector that does not parse: the placement cannot be read whole.
          if (selectorText?.trim() && !annotated.clusterSelector)
            evaluated = false;
        } catch (error) {
          evaluated = false;
          logger
            .child({ entityRef: application.entityRef })
            .debug(
              `No catalog annotations for ${application.entityRef}`,
              asError(error),
            );
        }
      }
      const skip = excluded.get(application.id);
      const targets = placementTargets(placement, annotated, clusters).filter(
        name => !skip?.has(name),
      );
      const unplacing = evaluated && hasPlacement(placement, annotated);
      // An application placed nowhere (deployed by hand, or whose placement could not be read)
      // has nothing to place nor to unplace: its deployments are not read for it.
      const current =
        unplacing || targets.length > 0
          ? await stores.deployments.listDeploymentStates({
              applicationId: application.id,
            })
          : [];
      if (unplacing) {
        await this.unplace(
          application,
          current.filter(d => !held.has(d.id)),
          targets,
          clusters,
          summary,
        );
      }
      const existing = new Set(current.map(d => d.cluster));
      const refused: PlacementRefusal[] = [];
      for (const cluster of targets) {
        const target = clusters.find(c => c.name === cluster)!;
        if (existing.has(cluster) || target.status === 'OFFLINE') continue;
        let reason = placementGate?.(grants.get(application.id), target);
        if (!reason && projectGate) {
          try {
            reason = await projectGate(application, target);
          } catch (error) {
            // The project cannot be read now (a catalog outage): nothing is placed, and the
            // refusals shown stay as they were.
            evaluated = false;
            summary.errors.push({
              entityRef: application.entityRef,
              cluster,
              message: asError(error).message,
            });
            continue;
          }
        }
        if (reason) {
          refused.push({ cluster, reason });
          summary.refused.push({
            entityRef: application.entityRef,
            cluster,
            reason,
          });
          continue;
        }
        if (!application.spec.image) {
          summary.errors.push({
            entityRef: application.entityRef,
            cluster,
            message: 'the application has no image to place',
          });
          continue;
        }
        try {
          const placed = await deployments.deploy(
            { entityRef: application.entityRef, cluster, cause: 'placement' },
            ACTOR,
          );
          summary.placed.push({
            entityRef: application.entityRef,
            cluster,
            status: placed.status,
          });
          logger.info(
            `Placed ${application.entityRef} on ${cluster} (${placed.status})`,
            {
              entityRef: application.entityRef,
              cluster,
              status: placed.status,
            },
          );
        } catch (error) {
          summary.errors.push({
            entityRef: application.entityRef,
            cluster,
            message: asError(error).message,
          });
        }
      }
      // A placement read whole says which clusters it was refused; one that could not be read
      // leaves the last word as it was.
      if (
        (placementGate || projectGate) &&
        evaluated &&
        JSON.stringify(refused) !==
          JSON.stringify(application.placementRefused ?? [])
      ) {
        await stores.applications.setPlacementRefused(application.id, refused);
        this.options.listener?.placementRefusalsChanged?.({
          applicationId: application.id,
          entityRef: application.entityRef,
          previous: application.placementRefused ?? [],
          refused,
        });
        for (const { cluster, reason } of refused) {
          logger.warn(
            `Placement of ${application.entityRef} on ${cluster} refused: ${reason}`,
            { entityRef: application.entityRef, cluster },
          );
        }
      }
    }
  }

  /**
   * Deployments on clusters the placement no longer selects: undeployed (`PRUNED`) when the
   * placement says `prune`, else kept as no longer placed (never healed again); placed again
   * when it selects them anew. Only on ONLINE clusters: nothing is pruned or marked because a
   * cluster is OFFLINE or UNKNOWN.
   */
  private async unplace(
    application: Application,
    current: DeploymentState[],
    targets: string[],
    clusters: ClusterRecord[],
    summary: ReconcileSummary,
  ): Promise<void> {
    const { stores, deployments } = this.options;
    for (const deployment of current) {
      // Never a deployment in flight: its apply or rollout is not done yet.
      if (
        deployment.status === 'REMOVING' ||
        deployment.status === 'PENDING' ||
        deployment.status === 'PROGRESSING'
      )
        continue;
      const selected = targets.includes(deployment.cluster);
      const online =
        clusters.find(c => c.name === deployment.cluster)?.status === 'ONLINE';
      if (selected && !deployment.placed) {
        await stores.deployments.setPlaced(deployment.id, true, ACTOR);
      } else if (!selected && online && application.placement.prune) {
        await deployments.undeploy(deployment.id, { reason: 'PRUNED' }, ACTOR);
        summary.pruned.push({
          entityRef: application.entityRef,
          cluster: deployment.cluster,
        });
      } else if (!selected && online && deployment.placed) {
        await stores.deployments.setPlaced(deployment.id, false, ACTOR);
      }
    }
  }

  private async check(
    deployment: DeploymentState,
    revision: Revision | undefined,
    application: Application | undefined,
    cluster: ClusterRecord | undefined,
    summary: ReconcileSummary,
    autoscalers: AutoscalerCache,
    fromEvent = false,
  ): Promise<void> {
    const { stores, applier, deployments } = this.options;
    if (deployment.status === 'REMOVING') {
      // Never healed: its objects go as soon as its cluster is ONLINE.
      if (cluster?.status === 'ONLINE')
        await deployments.finishRemoval(deployment.id);
      return;
    }
    if (
      !application ||
      deployment.status === 'PENDING' ||
      deployment.status === 'PROGRESSING'
    )
      return;
    summary.checked += 1;
    if (!cluster || cluster.status !== 'ONLINE') {
      summary.unknown += 1;
      await stores.deployments.recordSync(
        deployment.id,
        {
          syncStatus: 'UNKNOWN',
          reason: 'CLUSTER_NOT_ONLINE',
          message: `Cluster ${deployment.cluster} is ${
            cluster?.status ?? 'gone'
          }`,
        },
        ACTOR,
      );
      return;
    }
    const { manifests, namespace } = await deployments.desiredFor({
      application,
      revision,
      cluster,
    });
    const live = await (this.options.liveState ?? applier).readLive(
      cluster,
      namespace,
      manifests,
      { autoscalers },
    );
    if (live.kind === 'unreachable') {
      summary.unknown += 1;
      await stores.deployments.recordSync(
        deployment.id,
        { syncStatus: 'UNKNOWN', reason: 'READ_FAILED', message: live.message },
        ACTOR,
      );
      return;
    }

    const ignore = [
      ...(application.spec.ignoreDifferences ?? []),
      ...(live.autoscaled ? ['/spec/replicas'] : []),
    ];
    const differences: SyncDifference[] = [
      ...diffObject(manifests.deployment, live.deployment, ignore),
      ...diffObject(manifests.service, live.service, ignore),
      ...(manifests.podDisruptionBudget
        ? diffObject(
            manifests.podDisruptionBudget,
            live.podDisruptionBudget,
            ignore,
          )
        : []),
      ...(manifests.ingress
        ? diffObject(manifests.ingress, live.ingress, ignore)
        : []),
    ];
    const now = new Date();
    const described = differences
      .map(
        d =>
          `${d.kind}/${d.name}${d.path === '/' ? ' (missing)' : ` ${d.path}`}`,
      )
      .join(', ');

    if (differences.length === 0) {
      summary.synced += 1;
      await stores.deployments.recordSync(
        deployment.id,
        { syncStatus: 'SYNCED', lastSyncedAt: now, reason: 'IN_SYNC' },
        ACTOR,
      );
    } else if (
      application.spec.selfHeal &&
      deployment.placed &&
      deployment.status !== 'FAILED' &&
      this.mayHeal(deployment.id, fromEvent) &&
      (await this.unchangedSince(deployment, application))
    ) {
      this.healedAt.set(deployment.id, Date.now());
      const result = await applier.apply(cluster, namespace, manifests, {
        autoscalers,
        ignoreReplicas: live.autoscaled || ignoresReplicas(application),
      });
      if (result.kind === 'applied') {
        summary.healed += 1;
        summary.synced += 1;
        await stores.deployments.recordSync(
          deployment.id,
          {
            syncStatus: 'SYNCED',
            lastSyncedAt: now,
            lastAppliedAt: now,
            reason: 'SELF_HEALED',
            message: `Re-applied to undo drift: ${described}`,
            forceEvent: true,
          },
          ACTOR,
        );
        return; // the workload is rolling out again: judge its health next time
      }
      summary.outOfSync += 1;
      await stores.deployments.recordSync(
        deployment.id,
        {
          syncStatus: 'OUT_OF_SYNC',
          syncDifferences: differences,
          reason: 'SELF_HEAL_FAILED',
          message: `${result.message} (drift: ${described})`,
          // once per failure, not once per reconcile while it keeps failing
          forceEvent: deployment.syncStatus !== 'OUT_OF_SYNC',
        },
        ACTOR,
      );
    } else {
      summary.outOfSync += 1;
      await stores.deployments.recordSync(
        deployment.id,
        {
          syncStatus: 'OUT_OF_SYNC',
          syncDifferences: differences,
          reason: 'DRIFT_DETECTED',
          message: described,
        },
        ACTOR,
      );
    }
    await this.judgeWorkload(deployment, live, summary);
  }

  /**
   * A change seen by a watch heals a deployment at most once per `reconcile.intervalMs`, as
   * often as runs would: a heal that does not stick (another controller setting the field back)
   * would otherwise be undone and redone at the pace of the events. One held back is recorded
   * OUT_OF_SYNC and checked again by the next run.
   */
  private mayHeal(id: string, fromEvent: boolean): boolean {
    if (!fromEvent) return true;
    const at = this.healedAt.get(id);
    if (
      at === undefined ||
      Date.now() - at >= this.options.reconcile.intervalMs
    )
      return true;
    this.recheck.add(id);
    return false;
  }

  /**
   * True while the deployment is still as this run read it: a deploy that came in meanwhile
   * (new revision, new spec) must not be "healed" back to what this run thought was desired.
   */
  private async unchangedSince(
    deployment: DeploymentState,
    application: Application,
  ): Promise<boolean> {
    const { stores } = this.options;
    const [now, app] = await Promise.all([
      stores.deployments.getDeployment(deployment.id),
      stores.applications.getApplication(application.id),
    ]);
    return (
      app?.updatedAt === application.updatedAt &&
      now !== undefined &&
      now.revision === deployment.revision &&
      now.status === deployment.status &&
      (now.status === 'DEPLOYED' || now.status === 'DEGRADED')
    );
  }

  /** DEPLOYED -> DEGRADED / WORKLOAD_UNHEALTHY when replicas are missing, and back when they return. */
  private async judgeWorkload(
    deployment: DeploymentState,
    live: Extract<LiveObjects, { kind: 'read' }>,
    summary: ReconcileSummary,
  ): Promise<void> {
    const { stores } = this.options;
    const desired = live.deployment?.spec?.replicas ?? 1;
    const available = live.deployment?.status?.availableReplicas ?? 0;
    const healthy = live.deployment !== undefined && available >= desired;
    const condition = {
      status: deployment.status,
      revision: deployment.revision,
    };
    if (!healthy && deployment.status === 'DEPLOYED') {
      const moved = await stores.deployments.updateDeploymentStatus(
        deployment.id,
        {
          status: 'DEGRADED',
          statusReason: DeploymentReasons.WORKLOAD_UNHEALTHY,
          message: live.deployment
            ? `${available} of ${desired} replicas available`
            : 'The Deployment is missing',
        },
        ACTOR,
        condition,
      );
      if (moved) {
        summary.degraded += 1;
        // A revision that turns unhealthy soon after its apply is rolled back.
        await this.options.deployments.rollBackDegraded(deployment.id);
      }
    } else if (
      healthy &&
      deployment.status === 'DEGRADED' &&
      deployment.statusReason === DeploymentReasons.WORKLOAD_UNHEALTHY
    ) {
      const moved = await stores.deployments.updateDeploymentStatus(
        deployment.id,
        {
          status: 'DEPLOYED',
          statusReason: null,
          message: `${available} of ${desired} replicas available again`,
        },
        ACTOR,
        condition,
      );
      if (moved) summary.recovered += 1;
    }
  }
}
