import { ForwardedError } from '@backstage/errors';
import type { Application, Deployment } from '@cnp/plugin-fleet-common';
import pLimit from 'p-limit';
import type { DeploymentState } from '../database/types';
import type { ObjectChange } from '../livestate/ClusterWatches';
import { DeploymentChecker } from './DeploymentChecker';
import { Placer } from './Placer';
import {
  emptySummary,
  heldOnce,
  type ReconcileSummary,
  type ReconcileWorkerOptions,
} from './reconcileTypes';

export type {
  LiveState,
  ReconcileShards,
  ReconcileStores,
  ReconcileSummary,
  ReconcileWorkerOptions,
} from './reconcileTypes';

export const RECONCILE_TASK_ID = 'fleet-reconcile';
/** With health shards: the fleet-wide part of the reconcile, on one replica at a time. */
export const PLACEMENT_TASK_ID = 'fleet-placement';

/** At most this many objects unknown to the last run are looked up per batch of changes. */
const MAX_LEARNED_PER_BATCH = 50;

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
 * Keeps the fleet as desired: places applications on the clusters their placement selects
 * (`Placer`), compares every deployment's live objects with the desired ones, heals drift and
 * judges workload health (`DeploymentChecker`). This class decides what each run compares: all
 * of them in a full compare, else (with live state from watches) those that changed, and those
 * whose objects a watch saw change (`checkChanged`). Deployments a running release holds are
 * left to it.
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
  /** Changed objects `learn` found no deployment for, since the last run. */
  private notOurs = new Set<string>();
  /** What each deployment was at the last run: one that changed since is checked again. */
  private seen = new Map<string, string>();
  private readonly placer: Placer;
  private readonly checker: DeploymentChecker;

  private constructor(private readonly options: ReconcileWorkerOptions) {
    this.placer = new Placer(options);
    this.checker = new DeploymentChecker(options);
  }

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
    const held = heldOnce(this.options.heldDeployments);
    await this.placer.place(applications, clusters, summary, held);
    summary.durationMs = Date.now() - started;
    return summary;
  }

  async runOnce(): Promise<ReconcileSummary> {
    // However long the run takes, the watches' staleness counts from its end.
    this.options.liveState?.runStarted?.();
    try {
      return await this.run();
    } finally {
      this.options.liveState?.runFinished?.();
    }
  }

  private async run(): Promise<ReconcileSummary> {
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
    // Which deployments running releases hold: read once for the run, when it first matters.
    const held = heldOnce(this.options.heldDeployments);
    const { liveState, reconcile } = this.options;
    // Clusters whose watches start now: their first list reports nothing, so this run compares
    // their deployments. With shards, the clusters of shards this replica no longer holds stop.
    const newlyWatched = new Set(liveState?.setClusters(clusters) ?? []);
    const full =
      !liveState ||
      this.lastFullAt === undefined ||
      started - this.lastFullAt >= (reconcile.resyncIntervalMs ?? 10 * 60_000);
    if (!shards) await this.placer.place(applications, fleet, summary, held);

    // What a run needs of every deployment is small (its status fields and its revision's
    // namespace); the current revisions in full are read for the deployments compared only.
    const all = await stores.deployments.listDeploymentStates();
    const deployments = shards ? all.filter(d => mine(d.cluster)) : all;
    const apps = new Map(applications.map(a => [a.id, a]));
    const seen = this.remember(deployments, apps);
    const due = this.dueOf(deployments, { full, newlyWatched, seen });
    this.checker.recheck.clear();
    this.checker.forgetHealsBefore(started);
    this.seen = seen;
    const heldNow = due.length > 0 ? await held() : new Set<string>();
    const checked = due.filter(d => !heldNow.has(d.id));
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
    await this.checker.checkAll({
      deployments: checked,
      revisionOf: new Map(revisions.map(r => [r.deploymentId, r])),
      apps,
      clustersByName: new Map(clusters.map(c => [c.name, c])),
      summary,
    });
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
   * Indexes the run's deployments by their live objects (how a changed object finds its
   * deployment, `byObject` and `byCluster`), and answers what each one is now (`stateOf`).
   */
  private remember(
    deployments: DeploymentState[],
    apps: Map<string, Application>,
  ): Map<string, string> {
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
    this.byObject = byObject;
    this.notOurs = new Set();
    const byCluster = new Map<string, ObjectChange[]>();
    for (const key of byObject.keys()) {
      const [cluster, namespace, name] = key.split('\u0000');
      const objects = byCluster.get(cluster) ?? [];
      objects.push({ cluster, namespace, name });
      byCluster.set(cluster, objects);
    }
    this.byCluster = byCluster;
    return seen;
  }

  /** The deployments this run compares (before those running releases hold are left out). */
  private dueOf(
    deployments: DeploymentState[],
    run: {
      full: boolean;
      newlyWatched: Set<string>;
      seen: Map<string, string>;
    },
  ): DeploymentState[] {
    const { liveState } = this.options;
    const { recheck } = this.checker;
    // Between full compares, a deployment on a watched cluster is compared when its objects
    // change; here only when it changed itself (a deploy ended, its application changed), is
    // being removed, is not SYNCED (a heal that failed is tried again, an UNKNOWN left by an
    // outage is settled; read from memory, this costs no API call), or its cluster is not watched
    // (not ONLINE, watches just started or restarting, a kind the cluster forbids listing).
    const compared = run.full
      ? deployments
      : deployments.filter(
          d =>
            d.status === 'REMOVING' ||
            d.syncStatus !== 'SYNCED' ||
            run.newlyWatched.has(d.cluster) ||
            !liveState!.watching(d.cluster) ||
            this.seen.get(d.id) !== run.seen.get(d.id) ||
            recheck.has(d.id),
        );
    // A cluster whose watches are making their first lists is compared once they are in (see
    // `objectsOn`): read now from the API, every object would be read twice.
    return liveState?.starting
      ? compared.filter(
          d => d.status === 'REMOVING' || !liveState.starting!(d.cluster),
        )
      : compared;
  }

  /**
   * The live objects of the last run's deployments on a cluster: what to compare once the
   * cluster's watches have made their first lists (give them to `checkChanged`).
   */
  objectsOn(cluster: string): ObjectChange[] {
    return this.byCluster.get(cluster) ?? [];
  }

  /**
   * Finds the deployments of changed objects the last run did not know (deployed since), by the
   * entity ref their objects carry, so their drift is seen at once rather than after the next
   * run. An object no deployment here owns (another Fleet's) is asked about once per run.
   */
  private async learn(changes: ObjectChange[]): Promise<void> {
    const unknown = new Map<string, ObjectChange>();
    for (const change of changes) {
      const key = objectKey(change);
      if (!change.entityRef || this.byObject.has(key)) continue;
      if (this.notOurs.has(key)) continue;
      unknown.set(key, change);
    }
    const read = pLimit(this.options.reconcile.concurrency);
    await Promise.all(
      [...unknown].slice(0, MAX_LEARNED_PER_BATCH).map(([key, change]) =>
        read(async () => {
          const found = await this.deploymentsOf(change);
          if (!found.length) {
            this.notOurs.add(key);
            return;
          }
          this.byObject.set(
            key,
            found.map(d => d.id),
          );
          const objects = this.byCluster.get(change.cluster) ?? [];
          objects.push({
            cluster: change.cluster,
            namespace: change.namespace,
            name: change.name,
          });
          this.byCluster.set(change.cluster, objects);
        }),
      ),
    );
  }

  /**
   * The deployments of `change`'s component on its cluster whose objects are the changed one:
   * the application's name and the current revision's namespace must be the object's, so an
   * object that only claims a component (another Fleet's, or a copy) maps to nothing.
   */
  private async deploymentsOf(change: ObjectChange): Promise<Deployment[]> {
    const { stores, deploy } = this.options;
    const candidates = await stores.deployments.listDeployments({
      entityRef: change.entityRef,
      cluster: change.cluster,
    });
    if (!candidates.length) return [];
    const revisions = await stores.revisions.listCurrentRevisions({
      deploymentIds: candidates.map(d => d.id),
    });
    const namespaceOf = new Map(
      revisions.map(r => [r.deploymentId, r.namespace ?? deploy.namespace]),
    );
    const out: Deployment[] = [];
    for (const d of candidates) {
      if ((namespaceOf.get(d.id) ?? deploy.namespace) !== change.namespace)
        continue;
      const application = await stores.applications.getApplication(
        d.applicationId,
      );
      if (application?.name === change.name) out.push(d);
    }
    return out;
  }

  /**
   * Compares the deployments whose live objects changed (reported by the watches), as a run
   * compares each of its deployments; objects no deployment of the last run owns are ignored.
   */
  async checkChanged(changes: ObjectChange[]): Promise<ReconcileSummary> {
    const started = Date.now();
    const summary = emptySummary(started);
    await this.learn(changes);
    const ids = new Set(
      changes.flatMap(c => this.byObject.get(objectKey(c)) ?? []),
    );
    if (ids.size === 0) return summary;
    const { stores } = this.options;
    const held = await heldOnce(this.options.heldDeployments)();
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
    await this.checker.checkAll({
      deployments,
      revisionOf: new Map(revisions.map(r => [r.deploymentId, r])),
      apps,
      clustersByName: new Map(clusters.map(c => [c.name, c])),
      summary,
      fromEvent: true,
    });
    summary.durationMs = Date.now() - started;
    return summary;
  }
}
