import type { LoggerService } from '@backstage/backend-plugin-api';
import {
  AppsV1Api,
  AutoscalingV2Api,
  CoreV1Api,
  NetworkingV1Api,
  PolicyV1Api,
  Watch,
  type KubeConfig,
  type KubernetesObject,
  type V1Deployment,
  type V1HorizontalPodAutoscaler,
} from '@kubernetes/client-node';
import type { Agent } from 'node:https';
import { isDeepStrictEqual } from 'node:util';
import pLimit from 'p-limit';
import type { ClusterRecord } from '../database/types';
import type {
  AutoscalerCache,
  KnownLive,
  LiveObjects,
  ManifestApplier,
} from '../deploy/ManifestApplier';
import { MANAGED_BY_LABEL, type Manifests } from '../deploy/manifests';
import type { ClusterClients } from '../kubernetes/ClusterClients';
import type { HealthCycleReport } from '../events/FleetListener';
import {
  Http2Unsupported,
  type Http2Watches,
} from '../kubernetes/Http2Watches';
import {
  Reflector,
  type ListResult,
  type OpenWatch,
  type ReflectorTimings,
} from './Reflector';

/** A live object of a deployment changed: the cluster, namespace and name it goes by. */
export interface ObjectChange {
  cluster: string;
  namespace: string;
  /** The application's name: its Deployment, Service, PDB and Ingress all carry it. */
  name: string;
}

type Kind = 'deployment' | 'service' | 'podDisruptionBudget' | 'ingress';

interface KindSpec {
  kind: string;
  apiVersion: string;
  path: string;
  list: (kc: KubeConfig, labelSelector: string, opts: any) => Promise<any>;
}

const REQUEST_TIMEOUT_MS = 30_000;
/**
 * Lists and watch openings under way at once, over all clusters: starting the watches of a whole
 * fleet (or of many clusters coming back) does not send thousands of lists at the same moment.
 */
const START_CONCURRENCY = 16;
const FLEET_SELECTOR = `${MANAGED_BY_LABEL}=fleet`;
/**
 * How long a cluster's watches count as starting (their first lists under way): its deployments
 * are compared once the lists are in, not read one by one from the API meanwhile. Past this, the
 * reconcile reads them from the API as for any cluster not watched.
 */
export const STARTING_LIMIT_MS = 5 * 60_000;

/** The kinds Fleet applies, watched with Fleet's managed-by label. */
const MANAGED: Record<Kind, KindSpec> = {
  deployment: {
    kind: 'Deployment',
    apiVersion: 'apps/v1',
    path: '/apis/apps/v1/deployments',
    list: (kc, labelSelector, opts) =>
      kc
        .makeApiClient(AppsV1Api)
        .listDeploymentForAllNamespaces({ labelSelector }, opts),
  },
  service: {
    kind: 'Service',
    apiVersion: 'v1',
    path: '/api/v1/services',
    list: (kc, labelSelector, opts) =>
      kc
        .makeApiClient(CoreV1Api)
        .listServiceForAllNamespaces({ labelSelector }, opts),
  },
  podDisruptionBudget: {
    kind: 'PodDisruptionBudget',
    apiVersion: 'policy/v1',
    path: '/apis/policy/v1/poddisruptionbudgets',
    list: (kc, labelSelector, opts) =>
      kc
        .makeApiClient(PolicyV1Api)
        .listPodDisruptionBudgetForAllNamespaces({ labelSelector }, opts),
  },
  ingress: {
    kind: 'Ingress',
    apiVersion: 'networking.k8s.io/v1',
    path: '/apis/networking.k8s.io/v1/ingresses',
    list: (kc, labelSelector, opts) =>
      kc
        .makeApiClient(NetworkingV1Api)
        .listIngressForAllNamespaces({ labelSelector }, opts),
  },
};

/** HPAs are not Fleet's: all of them, to know which Deployments one scales. */
const HPA: KindSpec = {
  kind: 'HorizontalPodAutoscaler',
  apiVersion: 'autoscaling/v2',
  path: '/apis/autoscaling/v2/horizontalpodautoscalers',
  list: (kc, _labelSelector, opts) =>
    kc
      .makeApiClient(AutoscalingV2Api)
      .listHorizontalPodAutoscalerForAllNamespaces({}, opts),
};

/** The fields a change must touch to be worth a drift check: not status, not bookkeeping. */
function specOf(object: KubernetesObject | undefined): unknown {
  if (!object) return undefined;
  const {
    status: _status,
    metadata,
    ...rest
  } = object as KubernetesObject & { status?: unknown };
  // creationTimestamp never changes, and a listed object (through client-node's Date) writes
  // it with milliseconds where a watch event has seconds: left out, not taken for a change.
  const {
    resourceVersion: _rv,
    managedFields: _mf,
    generation: _g,
    creationTimestamp: _created,
    ...meta
  } = metadata ?? {};
  return { ...rest, metadata: meta };
}

/** What the reconcile judges a Deployment's health by (replicas wanted and available). */
function healthOf(object: V1Deployment | undefined): unknown {
  if (!object) return undefined;
  const desired = object.spec?.replicas ?? 1;
  return (object.status?.availableReplicas ?? 0) >= desired;
}

/** Whether a change can change what the reconcile concludes (drift or workload health). */
export function matters(
  kind: Kind,
  previous: KubernetesObject | undefined,
  next: KubernetesObject | undefined,
): boolean {
  if (!isDeepStrictEqual(specOf(previous), specOf(next))) return true;
  return (
    kind === 'deployment' &&
    healthOf(previous as V1Deployment) !== healthOf(next as V1Deployment)
  );
}

/**
 * The kubeconfig as client-node's `Watch` reads it, but sending over the cluster's own connection
 * pool: by itself, each watch would get an agent, and so a TLS context and connection, of its own
 * (five per cluster, made again at each reopening).
 */
function overAgent(
  kubeConfig: KubeConfig,
  agent: Agent | undefined,
): KubeConfig {
  if (!agent) return kubeConfig;
  return Object.create(kubeConfig, {
    applyToFetchOptions: {
      value: async (
        opts: Parameters<KubeConfig['applyToFetchOptions']>[0],
      ) => ({
        ...(await kubeConfig.applyToFetchOptions(opts)),
        agent,
      }),
    },
  });
}

/**
 * A watch whose server accepts the connection but never answers would hold its start slot for
 * ever (client-node's watch has no timeout of its own): the opening fails after `ms`, the slot is
 * given back, and a watch that opens later anyway is closed at once.
 */
export async function openWithin<T extends { abort(): void }>(
  opening: Promise<T>,
  ms: number,
  what: string,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(new Error(`${what}: no answer within ${ms} ms`));
    }, ms);
  });
  opening.then(
    handle => {
      if (timedOut) handle.abort();
    },
    () => undefined,
  );
  try {
    return await Promise.race([opening, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const hpaTarget = (hpa: V1HorizontalPodAutoscaler | undefined) =>
  hpa?.spec?.scaleTargetRef?.kind === 'Deployment'
    ? hpa.spec.scaleTargetRef.name
    : undefined;

class WatchedCluster {
  readonly reflectors: Record<Kind, Reflector<KubernetesObject>>;
  readonly hpas: Reflector<V1HorizontalPodAutoscaler>;
  /**
   * The watches' streams, over the cluster's one HTTP/2 connection (direct HTTPS with static
   * credentials), which `ClusterClients` makes, owns and closes.
   */
  readonly http2: Http2Watches;
  /** The server refused HTTP/2: watches over HTTP/1.1, a connection each. */
  private http1Only = false;
  private readonly startedAt = Date.now();
  /** Every kind has listed once (or is forbidden): `onListed` was called. */
  private listed = false;

  constructor(
    readonly key: string,
    readonly cluster: ClusterRecord,
    private readonly clients: WatchClients,
    onChange: (change: ObjectChange) => void,
    logger: LoggerService,
    timings: Partial<ReflectorTimings> | undefined,
    limit: ReturnType<typeof pLimit>,
    onListed: () => void,
  ) {
    this.http2 = clients.http2For(cluster.name);
    // Each list and watch loads the cluster's client again: a rotated kubeconfig or
    // certificate is used from the next one on (the clients are cached while unchanged).
    const kubeConfig = async () => {
      const loaded = await clients.kubeConfigFor(cluster);
      if (loaded.kind === 'unusable') throw new Error(loaded.reason);
      return loaded;
    };
    const openWatch: OpenWatch = (path, query, onEvent, onDone) =>
      limit(async () => {
        const loaded = await kubeConfig();
        const within = <H extends { abort(): void }>(opening: Promise<H>) =>
          openWithin(
            opening,
            REQUEST_TIMEOUT_MS,
            `Opening the watch of ${path} on ${cluster.name}`,
          );
        const { kubeConfig: kc, agent } = loaded;
        if (agent && !this.http1Only) {
          try {
            return await within(
              this.http2.watch(kc, agent, path, query, onEvent, onDone),
            );
          } catch (error) {
            if (!(error instanceof Http2Unsupported)) throw error;
            this.http1Only = true;
            logger.info(
              `${cluster.name} does not offer HTTP/2: each of its watches holds a connection of its own`,
            );
          }
        }
        return within(
          new Watch(overAgent(kc, agent)).watch(path, query, onEvent, onDone),
        );
      });
    const make = <T extends KubernetesObject>(
      spec: KindSpec,
      labelSelector: string | undefined,
      changed: (previous: T | undefined, next: T | undefined) => void,
    ) =>
      new Reflector<T>({
        name: `${spec.kind} objects on ${cluster.name}`,
        kind: spec.kind,
        apiVersion: spec.apiVersion,
        path: spec.path,
        labelSelector,
        list: (): Promise<ListResult<T>> =>
          limit(async () => {
            const loaded = await kubeConfig();
            // Over the connection the watches use, as plain JSON, where the server speaks
            // HTTP/2: a fraction of the garbage of client-node's typed list, which matters when a
            // whole fleet lists at once (startup, a shard taken over).
            if (loaded.agent && !this.http1Only) {
              try {
                return (await this.http2.list(
                  loaded.kubeConfig,
                  loaded.agent,
                  spec.path,
                  { labelSelector },
                  REQUEST_TIMEOUT_MS,
                )) as ListResult<T>;
              } catch (error) {
                if (!(error instanceof Http2Unsupported)) throw error;
                if (!this.http1Only)
                  logger.info(
                    `${cluster.name} does not offer HTTP/2: each of its watches holds a connection of its own`,
                  );
                this.http1Only = true;
              }
            }
            return spec.list(
              loaded.kubeConfig,
              labelSelector ?? '',
              loaded.requestOptions(REQUEST_TIMEOUT_MS),
            );
          }),
        watch: openWatch,
        onChange: changed,
        logger,
        timings,
        onListed: () => {
          if (this.listed || !this.all().every(r => r.settled())) return;
          this.listed = true;
          onListed();
        },
      });
    const emit = (object: KubernetesObject | undefined, name?: string) => {
      const namespace = object?.metadata?.namespace;
      const target = name ?? object?.metadata?.name;
      if (namespace && target)
        onChange({ cluster: cluster.name, namespace, name: target });
    };
    this.reflectors = Object.fromEntries(
      (Object.keys(MANAGED) as Kind[]).map(kind => [
        kind,
        make(MANAGED[kind], FLEET_SELECTOR, (previous, next) => {
          if (matters(kind, previous, next)) emit(next ?? previous);
        }),
      ]),
    ) as Record<Kind, Reflector<KubernetesObject>>;
    this.hpas = make<V1HorizontalPodAutoscaler>(
      HPA,
      undefined,
      (previous, next) => {
        const before = hpaTarget(previous);
        const after = hpaTarget(next);
        if (before === after) return;
        if (before) emit(previous, before);
        if (after) emit(next, after);
      },
    );
  }

  start() {
    for (const r of Object.values(this.reflectors)) r.start();
    this.hpas.start();
  }

  stop() {
    for (const r of Object.values(this.reflectors)) r.stop();
    this.hpas.stop();
    // Its streams end with it; the cluster's probes go back to their own connections.
    this.clients.closeHttp2(this.cluster.name);
  }

  private all(): Reflector<KubernetesObject>[] {
    // the reflectors are made in the constructor; a first list can only end after it
    return [
      ...Object.values(this.reflectors ?? {}),
      this.hpas as Reflector<KubernetesObject>,
    ].filter(Boolean);
  }

  /** Every kind is synced: the cache answers all of this cluster's reads. */
  synced(): boolean {
    return this.all().every(r => r.getState() === 'synced');
  }

  /** The first lists are under way (for at most STARTING_LIMIT_MS). */
  starting(): boolean {
    return !this.listed && Date.now() - this.startedAt < STARTING_LIMIT_MS;
  }

  autoscaled(namespace: string, name: string): boolean | undefined {
    if (this.hpas.getState() !== 'synced') return undefined;
    for (const hpa of this.hpas.values()) {
      if (hpa.metadata?.namespace === namespace && hpaTarget(hpa) === name)
        return true;
    }
    return false;
  }
}

/** What the watches need of `ClusterClients`: each cluster's client and its HTTP/2 connection. */
export type WatchClients = Pick<
  ClusterClients,
  'kubeConfigFor' | 'http2For' | 'closeHttp2'
>;

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
   * Every watch stops when `setClusters` has not been called for this long (without health
   * shards, the reconcile task moved to another replica); unset, never.
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
   * others. Answers the clusters whose watches start now. Without another call within
   * `staleAfterMs`, every watch stops: without health shards the reconcile that calls this runs
   * on one replica at a time, and a replica it left must not keep watching (and checking) the
   * fleet for ever. With shards each replica calls it with the clusters of its own shards.
   */
  setClusters(clusters: ClusterRecord[]): string[] {
    this.armStaleness();
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
      const w = new WatchedCluster(
        identityOf(cluster),
        cluster,
        this.options.clients,
        change => this.onChange(change),
        this.options.logger.child({ cluster: name }),
        this.options.timings,
        this.limit,
        () => this.onListed?.(name),
      );
      this.watched.set(name, w);
      w.start();
      started.push(name);
    }
    return started;
  }

  private armStaleness() {
    const { staleAfterMs } = this.options;
    if (!staleAfterMs) return;
    if (this.staleTimer) clearTimeout(this.staleTimer);
    this.staleTimer = setTimeout(() => {
      this.staleTimer = undefined;
      if (this.watched.size === 0) return;
      this.options.logger.info(
        `No reconcile run here for ${Math.round(
          staleAfterMs / 1000,
        )} s: stopping the watches of ${this.watched.size} cluster(s)`,
      );
      this.stop();
    }, staleAfterMs);
    this.staleTimer.unref?.();
  }

  stopCluster(name: string): void {
    const w = this.watched.get(name);
    if (!w) return;
    this.watched.delete(name);
    w.stop();
  }

  stop(): void {
    if (this.staleTimer) clearTimeout(this.staleTimer);
    this.staleTimer = undefined;
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
