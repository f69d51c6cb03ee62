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
import type pLimit from 'p-limit';
import type { ClusterRecord } from '../database/types';
import { ENTITY_REF_ANNOTATION, MANAGED_BY_LABEL } from '../deploy/manifests';
import type { ClusterClients } from '../kubernetes/ClusterClients';
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
  /**
   * The component the object says it belongs to (Fleet's entity-ref annotation), when it says
   * one: how a deployment made since the reconcile's last run is found.
   */
  entityRef?: string;
}

export type Kind = 'deployment' | 'service' | 'podDisruptionBudget' | 'ingress';

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
export const START_CONCURRENCY = 16;
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

/** One cluster's watches, as `ClusterWatches` starts them. */
export interface WatchedClusterOptions {
  /** The cluster's access as watched (`identityOf`): another one restarts its watches. */
  key: string;
  cluster: ClusterRecord;
  clients: WatchClients;
  onChange: (change: ObjectChange) => void;
  logger: LoggerService;
  timings?: Partial<ReflectorTimings>;
  /** The limit of lists and watch openings under way at once, over all clusters. */
  limit: ReturnType<typeof pLimit>;
  /** Every kind has listed once (or is forbidden). */
  onListed: () => void;
}

/** A cluster's reflectors: one per kind Fleet applies, and its HPAs. */
export class WatchedCluster {
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

  readonly key: string;
  readonly cluster: ClusterRecord;
  private readonly clients: WatchClients;

  constructor(private readonly options: WatchedClusterOptions) {
    const { cluster } = options;
    this.key = options.key;
    this.cluster = cluster;
    this.clients = options.clients;
    this.http2 = options.clients.http2For(cluster.name);
    const emit = (object: KubernetesObject | undefined, name?: string) => {
      const namespace = object?.metadata?.namespace;
      const target = name ?? object?.metadata?.name;
      const entityRef = name
        ? undefined
        : object?.metadata?.annotations?.[ENTITY_REF_ANNOTATION];
      if (namespace && target)
        options.onChange({
          cluster: cluster.name,
          namespace,
          name: target,
          ...(entityRef ? { entityRef } : {}),
        });
    };
    this.reflectors = Object.fromEntries(
      (Object.keys(MANAGED) as Kind[]).map(kind => [
        kind,
        this.reflector(MANAGED[kind], FLEET_SELECTOR, (previous, next) => {
          if (matters(kind, previous, next)) emit(next ?? previous);
        }),
      ]),
    ) as Record<Kind, Reflector<KubernetesObject>>;
    this.hpas = this.reflector<V1HorizontalPodAutoscaler>(
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

  /**
   * The cluster's client, loaded again for each list and watch: a rotated kubeconfig or
   * certificate is used from the next one on (the clients are cached while unchanged).
   */
  private async loaded() {
    const loaded = await this.clients.kubeConfigFor(this.cluster);
    if (loaded.kind === 'unusable') throw new Error(loaded.reason);
    return loaded;
  }

  private http2Refused() {
    if (!this.http1Only)
      this.options.logger.info(
        `${this.cluster.name} does not offer HTTP/2: each of its watches holds a connection of its own`,
      );
    this.http1Only = true;
  }

  /** Opens a watch: a stream on the cluster's HTTP/2 connection, else client-node's watch. */
  private readonly openWatch: OpenWatch = (path, query, onEvent, onDone) =>
    this.options.limit(async () => {
      const { kubeConfig: kc, agent } = await this.loaded();
      const within = <H extends { abort(): void }>(opening: Promise<H>) =>
        openWithin(
          opening,
          REQUEST_TIMEOUT_MS,
          `Opening the watch of ${path} on ${this.cluster.name}`,
        );
      if (agent && !this.http1Only) {
        try {
          return await within(
            this.http2.watch(kc, agent, path, query, onEvent, onDone),
          );
        } catch (error) {
          if (!(error instanceof Http2Unsupported)) throw error;
          this.http2Refused();
        }
      }
      return within(
        new Watch(overAgent(kc, agent)).watch(path, query, onEvent, onDone),
      );
    });

  /**
   * Lists one kind over the connection the watches use, as plain JSON, where the server speaks
   * HTTP/2: a fraction of the garbage of client-node's typed list, which matters when a whole
   * fleet lists at once (startup, a shard taken over).
   */
  private list<T extends KubernetesObject>(
    spec: KindSpec,
    labelSelector: string | undefined,
  ): Promise<ListResult<T>> {
    return this.options.limit(async () => {
      const loaded = await this.loaded();
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
          this.http2Refused();
        }
      }
      return spec.list(
        loaded.kubeConfig,
        labelSelector ?? '',
        loaded.requestOptions(REQUEST_TIMEOUT_MS),
      );
    });
  }

  private reflector<T extends KubernetesObject>(
    spec: KindSpec,
    labelSelector: string | undefined,
    changed: (previous: T | undefined, next: T | undefined) => void,
  ): Reflector<T> {
    return new Reflector<T>({
      name: `${spec.kind} objects on ${this.cluster.name}`,
      kind: spec.kind,
      apiVersion: spec.apiVersion,
      path: spec.path,
      labelSelector,
      list: () => this.list<T>(spec, labelSelector),
      watch: this.openWatch,
      onChange: changed,
      logger: this.options.logger,
      timings: this.options.timings,
      onListed: () => {
        if (this.listed || !this.all().every(r => r.settled())) return;
        this.listed = true;
        this.options.onListed();
      },
    });
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
