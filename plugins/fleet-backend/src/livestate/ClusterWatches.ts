import type { LoggerService } from '@backstage/backend-plugin-api';
import pLimit from 'p-limit';
import type { ClusterRecord } from '../database/types';
import type {
  AutoscalerCache,
  KnownLive,
  LiveObjects,
  ManifestApplier,
} from '../deploy/ManifestApplier';
import type { Manifests } from '../deploy/manifests';
import type { HealthCycleReport } from '../events/FleetListener';
import type { ReflectorTimings } from './Reflector';
import {
  START_CONCURRENCY,
  WatchedCluster,
  type Kind,
  type ObjectChange,
  type WatchClients,
} from './WatchedCluster';

export {
  matters,
  openWithin,
  STARTING_LIMIT_MS,
  type ObjectChange,
  type WatchClients,
} from './WatchedCluster';

const identityOf = (c: ClusterRecord) =>
  [c.endpoint, c.kubeconfigRef, c.context ?? '', c.identityCa ?? ''].join('|');

export interface ClusterWatchesOptions {
  /** The clusters' clients, and their HTTP/2 connections (which the probes use too). */
  clients: WatchClients;
  applier: Pick<ManifestApplier, 'readLive'>;
  logger: LoggerService;
  /**
   * A live object of a deployment changed in a way that can matter (not its status alone); or
   * given later with `listen`.
   */
  onChange?: (change: ObjectChange) => void;
  timings?: Partial<ReflectorTimings>;
  /**
   * Every watch stops when no reconcile run started here for this long after the last one ended
   * (without health shards, the reconcile task moved to another replica); never during a run,
   * however long it takes; unset, never.
   */
  staleAfterMs?: number;
}

/**
 * Live state from watches: per ONLINE cluster, a list-then-watch of each kind Fleet applies
 * (Deployments, Services, PodDisruptionBudgets, Ingresses, filtered by Fleet's managed-by label)
 * and of all HPAs, kept in memory. A cluster's watches are streams on one HTTP/2 connection
 * (`Http2Watches`), or, when the server or the kubeconfig (a proxy, an exec plugin) rules HTTP/2
 * out, client-node's watches over HTTP/1.1, a connection each. Reads are answered from it while a kind is synced, and from the
 * cluster's API otherwise (a kind the cluster forbids listing, a watch that broke and is being
 * restarted). Changes that can matter are reported, one per object, to `onChange`.
 */
export class ClusterWatches {
  private readonly watched = new Map<string, WatchedCluster>();
  private onChange: (change: ObjectChange) => void;
  private onListed: ((cluster: string) => void) | undefined;
  private readonly limit = pLimit(START_CONCURRENCY);
  private staleTimer: NodeJS.Timeout | undefined;

  private constructor(private readonly options: ClusterWatchesOptions) {
    this.onChange = options.onChange ?? (() => {});
  }

  /**
   * Where changes go from now on (the checks need the reconcile, which needs this); and, with
   * `onListed`, which clusters' watches have made their first lists: their objects are all in
   * memory, and what was there before the watches is for the listener to compare.
   */
  listen(
    onChange: (change: ObjectChange) => void,
    onListed?: (cluster: string) => void,
  ): void {
    this.onChange = onChange;
    this.onListed = onListed;
  }

  static create(options: ClusterWatchesOptions): ClusterWatches {
    return new ClusterWatches(options);
  }

  /**
   * Watches the ONLINE clusters among `clusters` (restarted when their access changed); stops the
   * others. Answers the clusters whose watches start now. A reconcile run calls `runStarted`
   * as it starts, then this, and `runFinished` as it ends: without another run within
   * `staleAfterMs` of that end, every watch stops. Without health shards the reconcile runs on one replica at a time, and a
   * replica it left must not keep watching (and checking) the fleet for ever; a run that takes
   * longer (the first over a large fleet, which lists every cluster) keeps them. With shards
   * each replica calls it with the clusters of its own shards.
   */
  setClusters(clusters: ClusterRecord[]): string[] {
    this.holdStaleness();
    const online = new Map(
      clusters.filter(c => c.status === 'ONLINE').map(c => [c.name, c]),
    );
    const started: string[] = [];
    for (const [name, w] of this.watched) {
      const now = online.get(name);
      if (!now || identityOf(now) !== w.key) this.stopCluster(name);
    }
    for (const [name, cluster] of online) {
      if (this.watched.has(name)) continue;
      const w = new WatchedCluster({
        key: identityOf(cluster),
        cluster,
        clients: this.options.clients,
        onChange: change => this.onChange(change),
        logger: this.options.logger.child({ cluster: name }),
        timings: this.options.timings,
        limit: this.limit,
        onListed: () => this.onListed?.(name),
      });
      this.watched.set(name, w);
      w.start();
      started.push(name);
    }
    return started;
  }

  /** A reconcile run starts: no watch goes stale until it ended. */
  runStarted(): void {
    this.holdStaleness();
  }

  /** The reconcile run ended: the staleness count starts now. */
  runFinished(): void {
    const { staleAfterMs } = this.options;
    if (!staleAfterMs) return;
    this.holdStaleness();
    this.staleTimer = setTimeout(() => {
      this.staleTimer = undefined;
      if (this.watched.size === 0) return;
      this.options.logger.info(
        `No reconcile run here in the ${Math.round(
          staleAfterMs / 1000,
        )} s since the last one ended: stopping the watches of ${
          this.watched.size
        } cluster(s)`,
      );
      this.stop();
    }, staleAfterMs);
    this.staleTimer.unref?.();
  }

  private holdStaleness() {
    if (this.staleTimer) clearTimeout(this.staleTimer);
    this.staleTimer = undefined;
  }

  stopCluster(name: string): void {
    const w = this.watched.get(name);
    if (!w) return;
    this.watched.delete(name);
    w.stop();
  }

  stop(): void {
    this.holdStaleness();
    for (const name of [...this.watched.keys()]) this.stopCluster(name);
  }

  /** A cluster that leaves ONLINE stops its watches at once, without waiting for the reconcile. */
  healthCycleFinished(report: HealthCycleReport): void {
    for (const t of report.transitions) {
      if (t.to !== 'ONLINE') this.stopCluster(t.cluster);
    }
  }

  /** The clusters watched now. */
  clusters(): string[] {
    return [...this.watched.keys()];
  }

  /**
   * Whether the cluster's watches are making their first lists, and a listener will hear when
   * they are in (`listen`'s `onListed`): meanwhile its deployments need no compare of their own.
   */
  starting(cluster: string): boolean {
    return !!this.onListed && (this.watched.get(cluster)?.starting() ?? false);
  }

  /** Whether every kind of the cluster is synced: its changes are all reported. */
  watching(cluster: string): boolean {
    return this.watched.get(cluster)?.synced() ?? false;
  }

  /** How many lists the cluster's kinds ran (tests, benchmarks). */
  lists(cluster: string): number {
    const w = this.watched.get(cluster);
    if (!w) return 0;
    return [...Object.values(w.reflectors), w.hpas].reduce(
      (n, r) => n + r.lists,
      0,
    );
  }

  /** `ManifestApplier.readLive`, from memory for every kind that is synced. */
  async readLive(
    cluster: ClusterRecord,
    namespace: string,
    manifests: Manifests,
    options: { autoscalers?: AutoscalerCache } = {},
  ): Promise<LiveObjects> {
    const w = this.watched.get(cluster.name);
    if (!w || w.key !== identityOf(cluster))
      return this.options.applier.readLive(
        cluster,
        namespace,
        manifests,
        options,
      );
    const known: KnownLive = {};
    const name = manifests.deployment.metadata!.name!;
    const cached = (kind: Kind, objectName: string) => {
      const r = w.reflectors[kind];
      return r.getState() === 'synced'
        ? { object: r.get(namespace, objectName) as any }
        : undefined;
    };
    known.deployment = cached('deployment', name);
    known.service = cached('service', manifests.service.metadata!.name!);
    if (manifests.podDisruptionBudget)
      known.podDisruptionBudget = cached('podDisruptionBudget', name);
    if (manifests.ingress) known.ingress = cached('ingress', name);
    known.autoscaled = w.autoscaled(namespace, name);
    const complete =
      known.deployment &&
      known.service &&
      (!manifests.podDisruptionBudget || known.podDisruptionBudget) &&
      (!manifests.ingress || known.ingress) &&
      known.autoscaled !== undefined;
    if (complete) {
      return {
        kind: 'read',
        deployment: known.deployment!.object,
        service: known.service!.object,
        podDisruptionBudget: known.podDisruptionBudget?.object,
        ingress: known.ingress?.object,
        autoscaled: known.autoscaled!,
      };
    }
    // Some kind is not synced (forbidden, or its watch restarting): read that kind from the API.
    return this.options.applier.readLive(cluster, namespace, manifests, {
      ...options,
      known,
    });
  }
}
