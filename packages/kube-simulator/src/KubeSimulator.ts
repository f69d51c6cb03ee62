/**
 * One HTTPS listener on 127.0.0.1 that serves many simulated Kubernetes API
 * servers, routed by path prefix: `https://127.0.0.1:PORT/clusters/<name>/...`.
 * Each cluster has its own bearer token, object store, fault and kubeconfig.
 *
 * Control API (no token, never faulted):
 *   GET  /_sim/clusters                      → { clusters: string[] }
 *   GET  /clusters/<name>/_sim/fault         → Fault
 *   POST /clusters/<name>/_sim/fault         ← { mode, latencyMs? } → Fault
 *   GET  /clusters/<name>/_sim/objects       → { items: SimObject[] }
 *   GET  /clusters/<name>/_sim/readiness     → { readyDelayMs, neverReady }
 *   POST /clusters/<name>/_sim/readiness     ← { readyDelayMs?, neverReady? }
 *   GET  /clusters/<name>/_sim/crds          → { crds: string[] } (installed CRD names)
 *   POST /clusters/<name>/_sim/crds          ← { name, installed: boolean } → { crds }
 *        name: 'rollouts.argoproj.io' (also serves analysistemplates.argoproj.io, as Argo's
 *        install ships both; installed by default) or 'virtualservices.networking.istio.io'
 *        (Istio VirtualService, v1beta1 and v1; not installed by default). Uninstalling
 *        deletes the CRD's objects; an uninstalled kind answers 404 and leaves discovery.
 *   POST /clusters/<name>/_sim/drift         ← { kind, namespace?, name, patch? | delete: true } (drift injection)
 *   GET  /clusters/<name>/_sim/history?kind=&namespace=&name=&verb=
 *        → { items: [{ at, verb: 'create'|'update'|'patch'|'delete'|'status', kind,
 *            namespace?, name, resourceVersion, object }] } (API writes, oldest first,
 *            the last 2,000 per cluster; controllers' status updates are not writes here)
 *   GET  /clusters/<name>/_sim/watches       → { open, historyLimit, oldestResourceVersion, resourceVersion }
 *   POST /clusters/<name>/_sim/watches/expire → { oldestResourceVersion } (forgets the change
 *        history: a watch from an earlier resourceVersion gets 410 Expired)
 *   POST /clusters/<name>/_sim/watches/drop  → { dropped } (resets the open watch connections)
 *   GET  /clusters/<name>/_sim/cluster-scope-denied → { resources: string[] }
 *   POST /clusters/<name>/_sim/cluster-scope-denied ← { resource, denied: boolean } → { resources }
 *        resource: 'services', 'ingresses.networking.k8s.io'... Listing or watching it across all
 *        namespaces answers 403 Forbidden, as RBAC does for a user with only namespaced Roles;
 *        per-namespace requests are served.
 *
 * Watch (`?watch=true` on any collection): see watch.ts.
 *
 * Prometheus (option `prometheus: true` or `prometheusPort`; plain HTTP on
 * `prometheusUrl`, see prometheus.ts), controlled on this HTTPS listener:
 *   GET    /_sim/prometheus/rules   → { rules: [{ match, value }] }
 *   POST   /_sim/prometheus/rules   ← { match: { label: value, ... }, value: number | null | { error } }
 *   DELETE /_sim/prometheus/rules   (clears every rule)
 *   GET    /_sim/prometheus/fault   → { mode }
 *   POST   /_sim/prometheus/fault   ← { mode: 'ok' | 'down' } (down: connections closed unanswered)
 *   GET    /_sim/prometheus/queries → { queries: string[] } (query strings received, oldest first)
 *
 * Argo Rollouts: status is computed by a simulated controller (rollouts.ts):
 * canary steps (setWeight, pause with or without duration), promote
 * (`PATCH .../rollouts/<name>/status` {"status":{"pauseConditions":null}}),
 * abort ({"status":{"abort":true}}), retry, promoteFull, spec.paused.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import {
  createSecureServer,
  type Http2SecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type ServerHttp2Session,
} from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { handleApi, watchTarget } from './api';
import { DEFAULT_WATCH_HISTORY_LIMIT } from './changeLog';
import { createServerCertificate } from './certs';
import { dropConnection } from './connections';
import { ApiError, errors, failureStatus } from './errors';
import { Fault, NO_FAULT, parseFault } from './faults';
import { writeKubeconfig } from './kubeconfig';
import { PATCH_TYPES } from './patch';
import {
  parseRule,
  PrometheusFaultMode,
  PrometheusRule,
  PrometheusSim,
  PrometheusValue,
} from './prometheus';
import { KNOWN_CRDS, resourceForKind } from './resources';
import {
  ClusterStore,
  HistoryEntry,
  HistoryFilter,
  SimObject,
  WriteVerb,
} from './store';
import { isPlainObject } from './util';
import { isDns1123Label } from './metaValidation';
import {
  DEFAULT_WATCH_SETTINGS,
  parseWatchQuery,
  WatchSettings,
  WatchStream,
} from './watch';

/** A change made behind Fleet's back: a JSON merge patch, or a deletion. */
export interface DriftChange {
  kind: string;
  namespace?: string;
  name: string;
  patch?: Record<string, unknown>;
  delete?: boolean;
}

export interface KubeSimulatorOptions {
  /** N → clusters 'sim-1'...'sim-N'; or explicit DNS-1123 label names. */
  clusters: number | string[];
  /** Where kubeconfigs are written (default: a fresh temporary directory, removed by stop()). */
  outDir?: string;
  /** Default 0: a random free port. The listener binds 127.0.0.1 only. */
  port?: number;
  /** Delay before a Deployment's replicas become available (default 200 ms). */
  readyDelayMs?: number;
  /**
   * Default true: HTTP/2 is offered by ALPN beside HTTP/1.1, as kube-apiserver does. False
   * serves HTTP/1.1 only, as an API server behind a proxy that speaks only 1.1.
   */
  http2?: boolean;
  /**
   * Installed CRDs per cluster, replacing that cluster's default
   * (`['rollouts.argoproj.io']`): e.g. `{ 'sim-2': [], 'sim-3':
   * ['rollouts.argoproj.io', 'virtualservices.networking.istio.io'] }`.
   * Names: 'rollouts.argoproj.io', 'virtualservices.networking.istio.io'.
   */
  crds?: Record<string, string[]>;
  /** Starts the Prometheus query endpoint on a random free port (see `prometheusUrl`). */
  prometheus?: boolean;
  /** Starts the Prometheus query endpoint on this port (0: a random free port). */
  prometheusPort?: number;
  /**
   * One of `clusters` that is also served at the listener's root (`https://127.0.0.1:PORT/api`),
   * as a real API server is: what in-cluster config (`KUBERNETES_SERVICE_HOST`/`PORT`, no
   * path) reaches. Its control API stays under `/clusters/<name>/_sim`.
   */
  rootCluster?: string;
  /** Watch tuning (tests shorten the server's timers); see `WatchOptions`. */
  watch?: WatchOptions;
}

/** Watch settings; every field is optional and defaults to the API server's behaviour. */
export interface WatchOptions extends Partial<WatchSettings> {
  /**
   * Changes kept per cluster for watches that resume from a resourceVersion (default 1,000):
   * a watch from an older one gets 410 Expired, as after an etcd compaction.
   */
  historyLimit?: number;
}

/** CRDs a cluster has unless told otherwise. */
export const DEFAULT_CRDS: readonly string[] = ['rollouts.argoproj.io'];

interface ClusterState {
  name: string;
  token: string;
  store: ClusterStore;
  fault: Fault;
  requests: number;
  /** Requests held unanswered by the 'timeout' fault and still open on the client's side. */
  held: number;
  /** Requests per API path (query string left out), e.g. `/api/v1/namespaces`. */
  requestsByPath: Map<string, number>;
  kubeconfigPath: string;
  /** Open watch streams (including those a `timeout` fault silenced). */
  watches: Set<WatchStream>;
  /** Resources (`plural` or `plural.group`) that may not be listed across all namespaces. */
  clusterScopeDenied: Set<string>;
  /** Runs the controllers while watches are open, so that their changes are streamed. */
  ticker?: NodeJS.Timeout;
}

const MAX_BODY_BYTES = 3 * 1024 * 1024;
const DEFAULT_READY_DELAY_MS = 200;

function resolveNames(clusters: number | string[]): string[] {
  if (typeof clusters === 'number') {
    if (!Number.isInteger(clusters) || clusters < 0 || clusters > 10000) {
      throw new Error(
        `clusters must be an integer between 0 and 10000, got ${clusters}`,
      );
    }
    return Array.from({ length: clusters }, (_, i) => `sim-${i + 1}`);
  }
  if (!Array.isArray(clusters))
    throw new Error('clusters must be a number or an array of names');
  return [...clusters];
}

function checkCrd(name: unknown): string {
  if (!(KNOWN_CRDS as readonly unknown[]).includes(name)) {
    throw new Error(
      `unknown CRD ${JSON.stringify(name)}: expected one of ${KNOWN_CRDS.join(
        ', ',
      )}`,
    );
  }
  return name as string;
}

function checkClusterName(name: unknown): string {
  if (typeof name !== 'string' || !isDns1123Label(name)) {
    throw new Error(
      `invalid cluster name ${JSON.stringify(name)}: must be a DNS-1123 label`,
    );
  }
  return name;
}

export class KubeSimulator {
  readonly url: string;
  private readonly clusters = new Map<string, ClusterState>();
  private readonly sockets = new Set<Socket>();
  private readonly sessions = new Set<ServerHttp2Session>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopping?: Promise<void>;
  /** Set when the simulator created kubeconfigDir itself (removed on stop). */
  private ownsKubeconfigDir = false;
  private tlsConnections = 0;
  private prometheus?: PrometheusSim;
  /** The cluster also served at the root of the listener (option `rootCluster`). */
  private rootCluster?: string;
  private watchSettings: WatchSettings = { ...DEFAULT_WATCH_SETTINGS };
  private watchHistoryLimit = DEFAULT_WATCH_HISTORY_LIMIT;

  private constructor(
    private readonly server: Http2SecureServer,
    port: number,
    readonly caPem: string,
    readonly kubeconfigDir: string,
    private readonly readyDelayMs: number,
  ) {
    this.url = `https://127.0.0.1:${port}`;
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    server.on('secureConnection', (socket: Socket) => {
      this.tlsConnections += 1;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    server.on('session', (session: ServerHttp2Session) => {
      this.sessions.add(session);
      session.on('close', () => this.sessions.delete(session));
      session.on('error', () => undefined); // a client gone mid-stream
    });
    // HTTP/1.1 and HTTP/2 requests alike: the compatibility API of node:http2 gives both the
    // request and response interface of node:http.
    server.on(
      'request',
      (h2req: Http2ServerRequest, h2res: Http2ServerResponse) => {
        const req = h2req as unknown as IncomingMessage;
        const res = h2res as unknown as ServerResponse;
        this.onRequest(req, res).catch(err => {
          if (!res.headersSent && !res.destroyed) {
            this.send(
              res,
              500,
              errors
                .internal(`kube-simulator: ${(err as Error).message}`)
                .toStatus(),
            );
          }
        });
      },
    );
  }

  static async start(options: KubeSimulatorOptions): Promise<KubeSimulator> {
    const names = resolveNames(options.clusters).map(checkClusterName);
    if (new Set(names).size !== names.length)
      throw new Error('cluster names must be unique');
    const port = options.port ?? 0;
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new Error(
        `port must be an integer between 0 and 65535, got ${port}`,
      );
    }
    const readyDelayMs = options.readyDelayMs ?? DEFAULT_READY_DELAY_MS;
    if (
      typeof readyDelayMs !== 'number' ||
      !Number.isFinite(readyDelayMs) ||
      readyDelayMs < 0
    ) {
      throw new Error(
        `readyDelayMs must be a non-negative number, got ${readyDelayMs}`,
      );
    }
    let outDir: string;
    if (options.outDir) {
      outDir = resolve(options.outDir);
      await mkdir(outDir, { recursive: true, mode: 0o700 });
    } else {
      outDir = await mkdtemp(join(tmpdir(), 'kube-simulator-'));
    }
    const cert = await createServerCertificate();
    // kube-apiserver speaks HTTP/2 (offered by ALPN) and HTTP/1.1: a client-go watches over one
    // HTTP/2 connection per server, many streams on it (up to 1,000 streams per connection, the
    // server's --http2-max-streams-per-connection default); clients that offer no ALPN get 1.1.
    const server =
      options.http2 === false
        ? (createHttpsServer({
            cert: cert.certPem,
            key: cert.keyPem,
          }) as unknown as Http2SecureServer)
        : createSecureServer({
            cert: cert.certPem,
            key: cert.keyPem,
            allowHTTP1: true,
            settings: { maxConcurrentStreams: 1000 },
          });
    // HTTP/1.1 connections are served by node:http's machinery with these settings.
    const http1 = server as unknown as {
      requestTimeout: number;
      headersTimeout: number;
      keepAliveTimeout: number;
    };
    // Requests in 'timeout' mode are held on purpose: no server-side timeouts.
    http1.requestTimeout = 0;
    http1.headersTimeout = 60_000;
    // kube-apiserver keeps an idle connection 90 s (its http.Server IdleTimeout): clients that
    // pool connections see the same reuse here as against a real API server.
    http1.keepAliveTimeout = 90_000;
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', fail);
        ok();
      });
    });
    const address = server.address();
    const actualPort =
      typeof address === 'object' && address ? address.port : port;
    const sim = new KubeSimulator(
      server,
      actualPort,
      cert.certPem,
      outDir,
      readyDelayMs,
    );
    sim.ownsKubeconfigDir = !options.outDir;
    try {
      sim.configureWatch(options.watch ?? {});
      for (const name of names) await sim.addCluster(name);
      if (options.rootCluster !== undefined) {
        if (!names.includes(options.rootCluster))
          throw new Error(
            `rootCluster "${options.rootCluster}" is not one of the clusters`,
          );
        sim.rootCluster = options.rootCluster;
      }
      for (const [cluster, crds] of Object.entries(options.crds ?? {})) {
        if (!Array.isArray(crds))
          throw new Error(`crds.${cluster} must be an array of CRD names`);
        for (const crd of crds) checkCrd(crd);
        for (const crd of KNOWN_CRDS)
          sim.setCrd(cluster, crd, crds.includes(crd));
      }
      if (options.prometheus || options.prometheusPort !== undefined) {
        const promPort = options.prometheusPort ?? 0;
        if (!Number.isInteger(promPort) || promPort < 0 || promPort > 65535) {
          throw new Error(
            `prometheusPort must be an integer between 0 and 65535, got ${promPort}`,
          );
        }
        sim.prometheus = await PrometheusSim.start(promPort);
      }
    } catch (e) {
      await sim.stop();
      throw e;
    }
    return sim;
  }

  // ---------------------------------------------------------- library API

  clusterNames(): string[] {
    return [...this.clusters.keys()];
  }

  endpoint(name: string): string {
    return `${this.url}/clusters/${this.cluster(name).name}`;
  }

  kubeconfigPath(name: string): string {
    return this.cluster(name).kubeconfigPath;
  }

  token(name: string): string {
    return this.cluster(name).token;
  }

  async addCluster(name: string): Promise<string> {
    checkClusterName(name);
    if (this.stopping) throw new Error('the simulator is stopped');
    if (this.clusters.has(name))
      throw new Error(`cluster "${name}" already exists`);
    const state: ClusterState = {
      name,
      token: randomBytes(24).toString('hex'),
      store: new ClusterStore(this.readyDelayMs),
      fault: { ...NO_FAULT },
      requests: 0,
      held: 0,
      requestsByPath: new Map(),
      kubeconfigPath: join(this.kubeconfigDir, `${name}.yaml`),
      watches: new Set(),
      clusterScopeDenied: new Set(),
    };
    state.store.changes.limit = this.watchHistoryLimit;
    this.clusters.set(name, state);
    try {
      await writeKubeconfig(this.kubeconfigDir, {
        name,
        server: `${this.url}/clusters/${name}`,
        caPem: this.caPem,
        token: state.token,
      });
    } catch (e) {
      this.clusters.delete(name);
      throw e;
    }
    return state.kubeconfigPath;
  }

  setFault(name: string, fault: Fault): void {
    const parsed = parseFault(fault);
    if (!parsed.fault) throw new Error(`invalid fault: ${parsed.error}`);
    this.applyFault(this.cluster(name), parsed.fault);
  }

  /**
   * A fault reaches open watches too: `down` resets their connections (the client sees
   * ECONNRESET or an aborted stream), `timeout` leaves them open and silent (no event, no
   * bookmark, no server-side end: only the client's timeout or `stop()` ends them). `error`
   * and `latencyMs` only affect new requests.
   */
  private applyFault(state: ClusterState, fault: Fault) {
    state.fault = fault;
    if (fault.mode === 'down') {
      for (const w of [...state.watches]) w.reset();
    } else if (fault.mode === 'timeout') {
      for (const w of state.watches) w.silence();
    }
  }

  // ---------------------------------------------------------------- watch

  private configureWatch(options: WatchOptions) {
    const { historyLimit, ...settings } = options;
    for (const [key, value] of Object.entries(settings)) {
      if (!(key in DEFAULT_WATCH_SETTINGS))
        throw new Error(`unknown watch option ${key}`);
      if (
        value !== undefined &&
        (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
      )
        throw new Error(`watch.${key} must be a positive number, got ${value}`);
    }
    if (
      historyLimit !== undefined &&
      (!Number.isInteger(historyLimit) || historyLimit < 1)
    )
      throw new Error(
        `watch.historyLimit must be a positive integer, got ${historyLimit}`,
      );
    this.watchSettings = {
      ...DEFAULT_WATCH_SETTINGS,
      ...Object.fromEntries(
        Object.entries(settings).filter(([, v]) => v !== undefined),
      ),
    };
    if (historyLimit !== undefined) {
      this.watchHistoryLimit = historyLimit;
      for (const state of this.clusters.values())
        state.store.changes.limit = historyLimit;
    }
  }

  /** Watch streams open on a cluster now (a client that stops its watch brings this down). */
  openWatches(cluster: string): number {
    return this.cluster(cluster).watches.size;
  }

  /**
   * The connections a cluster's open watches go over: one per watch over HTTP/1.1, one for all
   * of a client's watches over HTTP/2 (streams on one connection).
   */
  watchConnections(cluster: string): number {
    const connections = new Set<object>();
    for (const w of this.cluster(cluster).watches) {
      const c = w.connection();
      if (c) connections.add(c);
    }
    return connections.size;
  }

  /**
   * The client ports of the connections a cluster's open watches go over (one per client over
   * HTTP/2): with the client's address, which process watches the cluster.
   */
  watchPeerPorts(cluster: string): number[] {
    const ports = new Set<number>();
    for (const w of this.cluster(cluster).watches) {
      const c = w.connection() as
        | { socket?: { remotePort?: number }; remotePort?: number }
        | undefined;
      const port = c?.socket?.remotePort ?? c?.remotePort;
      if (port !== undefined) ports.add(port);
    }
    return [...ports].sort((a, b) => a - b);
  }

  /**
   * Forgets a cluster's change history, as an etcd compaction does: a watch from any
   * resourceVersion before now (a client resuming where it was) gets a 410 Expired ERROR
   * event; open watches carry on. Returns the oldest resourceVersion still watchable.
   */
  expireWatchHistory(cluster: string): string {
    const store = this.cluster(cluster).store;
    store.compactChanges();
    return String(store.changes.oldestWatchable);
  }

  /**
   * Resets every open watch connection of a cluster (or of all clusters), as a load balancer or
   * an API server restart does; the cluster keeps serving. Returns how many were dropped.
   */
  dropWatches(cluster?: string): number {
    const states =
      cluster === undefined
        ? [...this.clusters.values()]
        : [this.cluster(cluster)];
    let dropped = 0;
    for (const state of states) {
      for (const w of [...state.watches]) {
        w.reset();
        dropped += 1;
      }
    }
    return dropped;
  }

  private openWatch(state: ClusterState, stream: WatchStream): void {
    state.watches.add(stream);
    if (!state.ticker) {
      state.ticker = setInterval(
        () => state.store.tick(),
        this.watchSettings.controllerTickMs,
      );
    }
    stream.start();
  }

  private watchEnded(state: ClusterState, stream: WatchStream) {
    state.watches.delete(stream);
    if (state.watches.size === 0 && state.ticker) {
      clearInterval(state.ticker);
      state.ticker = undefined;
    }
  }

  /**
   * Denies (or allows again) listing and watching `resource` (`services`,
   * `ingresses.networking.k8s.io`...) across all namespaces: 403 Forbidden, as RBAC answers a
   * user that has only namespaced Roles for it.
   */
  denyClusterScope(cluster: string, resource: string, denied = true): void {
    const set = this.cluster(cluster).clusterScopeDenied;
    if (denied) set.add(resource);
    else set.delete(resource);
  }

  getFault(name: string): Fault {
    return { ...this.cluster(name).fault };
  }

  setReadiness(
    name: string,
    opts: { readyDelayMs?: number; neverReady?: boolean },
  ): void {
    const store = this.cluster(name).store;
    if (opts.readyDelayMs !== undefined) {
      if (
        typeof opts.readyDelayMs !== 'number' ||
        !Number.isFinite(opts.readyDelayMs) ||
        opts.readyDelayMs < 0
      ) {
        throw new Error('readyDelayMs must be a non-negative number');
      }
    }
    store.setReadiness({
      readyDelayMs: opts.readyDelayMs,
      neverReady:
        opts.neverReady === undefined ? undefined : Boolean(opts.neverReady),
    });
  }

  /**
   * Installs or removes the Argo Rollouts CRD (installed by default). Without
   * it, `argoproj.io` disappears from discovery and its paths answer 404;
   * removing it deletes the stored Rollouts, as deleting a CRD does.
   */
  setRolloutsCrd(name: string, installed: boolean): void {
    this.setCrd(name, 'rollouts.argoproj.io', installed);
  }

  /**
   * Installs or removes a CRD in one cluster: 'rollouts.argoproj.io' (with
   * AnalysisTemplates, installed by default) or
   * 'virtualservices.networking.istio.io' (not installed by default).
   * Removing a CRD deletes its objects, as on a real cluster.
   */
  setCrd(cluster: string, name: string, installed: boolean): void {
    checkCrd(name);
    this.cluster(cluster).store.setCrdInstalled(name, Boolean(installed));
  }

  /** The CRDs installed in a cluster. */
  crds(cluster: string): string[] {
    return [...this.cluster(cluster).store.crds].sort();
  }

  /**
   * The API writes a cluster received (create, update, patch, delete, status),
   * oldest first, at most the last 2,000; `object` is the stored object right
   * after the write. Controllers' status updates are not in it.
   */
  history(cluster: string, filter?: HistoryFilter): HistoryEntry[] {
    return this.cluster(cluster).store.history(filter);
  }

  /** `http://127.0.0.1:<port>` of the Prometheus endpoint (undefined unless started). */
  get prometheusUrl(): string | undefined {
    return this.prometheus?.url;
  }

  /**
   * A Prometheus answer for every query whose equality matchers include all
   * of `match`: a number, null (empty vector) or `{ error }` (422 execution
   * error). The most specific rule wins; the same `match` replaces a rule.
   */
  setPrometheusRule(
    match: Record<string, string>,
    value: PrometheusValue,
  ): void {
    this.prom().setRule(match, value);
  }

  clearPrometheusRules(): void {
    this.prom().clearRules();
  }

  prometheusRules(): PrometheusRule[] {
    return this.prom().listRules();
  }

  /** 'down': the Prometheus listener closes every connection unanswered. */
  setPrometheusFault(mode: PrometheusFaultMode): void {
    this.prom().setFault(mode);
  }

  /** The query strings the Prometheus endpoint received, oldest first. */
  prometheusQueries(): string[] {
    return this.prom().queryLog();
  }

  private prom(): PrometheusSim {
    if (!this.prometheus)
      throw new Error(
        'the Prometheus endpoint is not started (option prometheus: true)',
      );
    return this.prometheus;
  }

  objects(name: string): SimObject[] {
    return this.cluster(name).store.objects();
  }

  /**
   * Drift injection: changes (JSON merge patch) or deletes a live object behind Fleet's back, as
   * a person with kubectl or another controller would. Generation and resourceVersion move as
   * for any write.
   */
  drift(name: string, change: DriftChange): SimObject | undefined {
    const def = resourceForKind(change.kind);
    if (!def) throw new Error(`unknown kind ${change.kind}`);
    const store = this.cluster(name).store;
    const namespace = def.namespaced
      ? change.namespace ?? 'default'
      : undefined;
    if (change.delete) {
      store.delete(def, namespace, change.name, undefined, {});
      return undefined;
    }
    if (!isPlainObject(change.patch))
      throw new Error('drift needs a patch object or delete: true');
    return store.patch(
      def,
      namespace,
      change.name,
      PATCH_TYPES.merge,
      change.patch,
      {},
    );
  }

  /** API requests a cluster received (control calls excluded); with `path`, those to that path only. */
  requestCount(name: string, path?: string): number {
    const state = this.cluster(name);
    return path === undefined
      ? state.requests
      : state.requestsByPath.get(path) ?? 0;
  }

  /**
   * Requests the 'timeout' fault holds unanswered that the client has not closed yet: a client
   * whose timeout really aborts its request brings this back to 0.
   */
  heldRequestCount(name: string): number {
    return this.cluster(name).held;
  }

  /** TLS connections accepted since start, all clusters together (one listener serves them). */
  connectionCount(): number {
    return this.tlsConnections;
  }

  /**
   * Closes the listener and every open socket, including held 'timeout'
   * requests, and removes the kubeconfig directory if start() created it.
   */
  stop(): Promise<void> {
    if (!this.stopping) {
      const closed = new Promise<void>(done => {
        for (const timer of this.timers) clearTimeout(timer);
        this.timers.clear();
        for (const state of this.clusters.values()) {
          for (const w of [...state.watches]) w.reset();
          if (state.ticker) clearInterval(state.ticker);
          state.ticker = undefined;
        }
        this.server.close(() => done());
        for (const socket of this.sockets) socket.destroy();
        this.sockets.clear();
        for (const session of this.sessions) session.destroy();
        this.sessions.clear();
        (
          this.server as { closeAllConnections?: () => void }
        ).closeAllConnections?.();
      });
      const prometheus = this.prometheus?.stop();
      this.stopping = closed.then(async () => {
        await prometheus;
        if (this.ownsKubeconfigDir) {
          await rm(this.kubeconfigDir, { recursive: true, force: true });
        }
      });
    }
    return this.stopping;
  }

  private cluster(name: string): ClusterState {
    const state = this.clusters.get(name);
    if (!state) throw new Error(`unknown cluster "${name}"`);
    return state;
  }

  // ------------------------------------------------------------- serving

  private send(
    res: ServerResponse,
    status: number,
    body: unknown,
    text?: string,
  ) {
    if (res.destroyed || res.writableEnded) return;
    const payload = text ?? JSON.stringify(body);
    res.writeHead(status, {
      'Content-Type':
        text !== undefined ? 'text/plain; charset=utf-8' : 'application/json',
      'Content-Length': Buffer.byteLength(payload),
      'Cache-Control': 'no-cache, private',
    });
    res.end(payload);
  }

  private delay(ms: number): Promise<void> {
    return new Promise(done => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        done();
      }, ms);
      this.timers.add(timer);
    });
  }

  private readBody(req: IncomingMessage): Promise<Buffer | undefined> {
    return new Promise((done, fail) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_BODY_BYTES) chunks.push(chunk);
      });
      req.on('end', () =>
        done(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks)),
      );
      req.on('error', fail);
    });
  }

  private authorized(req: IncomingMessage, token: string): boolean {
    const header = req.headers.authorization ?? '';
    const m = header.match(/^Bearer\s+(.+)$/i);
    if (!m) return false;
    const given = Buffer.from(m[1].trim());
    const expected = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private async onRequest(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://127.0.0.1');
    const path = url.pathname;
    if (path === '/_sim/clusters' || path === '/_sim/clusters/') {
      if (req.method !== 'GET')
        return this.send(res, 405, errors.methodNotAllowed().toStatus());
      return this.send(res, 200, { clusters: this.clusterNames() });
    }
    if (path.startsWith('/_sim/prometheus/'))
      return this.prometheusControl(req, res, path);
    const m =
      path.match(/^\/clusters\/([^/]+)(\/.*)?$/) ??
      (this.rootCluster !== undefined && !path.startsWith('/_sim')
        ? ([path, encodeURIComponent(this.rootCluster), path] as const)
        : null);
    if (!m) return this.send(res, 404, errors.notFoundPath().toStatus());
    const state = this.clusters.get(decodeURIComponent(m[1]));
    if (!state) {
      return this.send(
        res,
        404,
        failureStatus(
          404,
          'NotFound',
          `cluster "${decodeURIComponent(m[1])}" not found`,
        ),
      );
    }
    const rest = m[2] ?? '/';
    if (rest === '/_sim' || rest.startsWith('/_sim/'))
      return this.control(state, req, res, rest, url.searchParams);

    state.requests += 1;
    const apiPath = rest.split('?')[0];
    state.requestsByPath.set(
      apiPath,
      (state.requestsByPath.get(apiPath) ?? 0) + 1,
    );
    const fault = state.fault;
    if (fault.mode === 'down') {
      dropConnection(req);
      return undefined;
    }
    if (fault.mode === 'timeout') {
      req.resume(); // accept the request, never answer; stop() or the client ends it
      state.held += 1;
      res.once('close', () => {
        state.held -= 1;
      });
      return undefined;
    }
    const body = await this.readBody(req);
    if (fault.latencyMs) await this.delay(fault.latencyMs);
    if (this.stopping) return undefined;
    if (fault.mode === 'error') {
      return this.send(
        res,
        500,
        errors
          .internal('simulated internal error (kube-simulator fault "error")')
          .toStatus(),
      );
    }
    if (!this.authorized(req, state.token))
      return this.send(res, 401, errors.unauthorized().toStatus());
    const denied = clusterScopeDenial(state, req.method ?? 'GET', apiPath);
    if (denied) return this.send(res, 403, denied);
    if (body === undefined) {
      return this.send(
        res,
        413,
        failureStatus(
          413,
          'RequestEntityTooLarge',
          'Request entity too large: limit is 3145728',
        ),
      );
    }
    let watch: WatchStream | undefined;
    try {
      const target = watchTarget(
        state.store,
        req.method ?? 'GET',
        rest,
        url.searchParams,
      );
      if (target) {
        const request = parseWatchQuery(
          target.def,
          target.stored,
          target.namespace,
          url.searchParams,
          target.nameSelector,
        );
        watch = new WatchStream(
          res,
          state.store,
          request,
          this.watchSettings,
          w => this.watchEnded(state, w),
        );
      }
    } catch (e) {
      const err =
        e instanceof ApiError ? e : errors.internal((e as Error).message);
      return this.send(res, err.code, err.toStatus());
    }
    if (watch) return this.openWatch(state, watch);
    const answer = handleApi(state.store, {
      method: req.method ?? 'GET',
      path: rest,
      query: url.searchParams,
      contentType: req.headers['content-type'] ?? '',
      body,
      serverAddress: this.url.replace('https://', ''),
    });
    if (req.method === 'HEAD') {
      res.writeHead(answer.status);
      res.end();
      return undefined;
    }
    return this.send(res, answer.status, answer.body, answer.text);
  }

  private async control(
    state: ClusterState,
    req: IncomingMessage,
    res: ServerResponse,
    rest: string,
    query: URLSearchParams,
  ): Promise<void> {
    const route = rest.replace(/\/+$/, '');
    const method = req.method ?? 'GET';
    const body = await this.readBody(req);
    const parse = (): unknown => {
      const text = body?.toString('utf8') ?? '';
      try {
        return JSON.parse(text);
      } catch {
        throw errors.badRequest('the body must be valid JSON');
      }
    };
    try {
      switch (`${method} ${route}`) {
        case 'GET /_sim/fault':
          return this.send(res, 200, state.fault);
        case 'POST /_sim/fault':
        case 'PUT /_sim/fault': {
          const parsed = parseFault(parse());
          if (!parsed.fault)
            throw errors.badRequest(`invalid fault: ${parsed.error}`);
          this.applyFault(state, parsed.fault);
          return this.send(res, 200, state.fault);
        }
        case 'GET /_sim/objects':
          return this.send(res, 200, { items: state.store.objects() });
        case 'GET /_sim/readiness':
          return this.send(res, 200, state.store.readiness);
        case 'POST /_sim/readiness':
        case 'PUT /_sim/readiness': {
          const input = parse();
          if (!isPlainObject(input))
            throw errors.badRequest('readiness must be a JSON object');
          const { readyDelayMs, neverReady } = input;
          if (
            readyDelayMs !== undefined &&
            (typeof readyDelayMs !== 'number' || readyDelayMs < 0)
          ) {
            throw errors.badRequest(
              'readyDelayMs must be a non-negative number',
            );
          }
          if (neverReady !== undefined && typeof neverReady !== 'boolean') {
            throw errors.badRequest('neverReady must be a boolean');
          }
          this.setReadiness(state.name, {
            readyDelayMs: readyDelayMs as number | undefined,
            neverReady: neverReady as boolean | undefined,
          });
          return this.send(res, 200, state.store.readiness);
        }
        case 'POST /_sim/drift': {
          const input = parse();
          if (
            !isPlainObject(input) ||
            typeof input.kind !== 'string' ||
            typeof input.name !== 'string' ||
            (input.delete !== true && !isPlainObject(input.patch))
          ) {
            throw errors.badRequest(
              'expected {"kind":"Deployment","namespace":"default","name":"web","patch":{...}} or {...,"delete":true}',
            );
          }
          if (!resourceForKind(input.kind))
            throw errors.badRequest(`unknown kind ${input.kind}`);
          const object = this.drift(
            state.name,
            input as unknown as DriftChange,
          );
          return this.send(res, 200, object ?? { deleted: true });
        }
        case 'GET /_sim/watches':
          return this.send(res, 200, {
            open: state.watches.size,
            historyLimit: state.store.changes.limit,
            oldestResourceVersion: String(state.store.changes.oldestWatchable),
            resourceVersion: state.store.resourceVersion(),
          });
        case 'POST /_sim/watches/expire':
          return this.send(res, 200, {
            oldestResourceVersion: this.expireWatchHistory(state.name),
          });
        case 'GET /_sim/cluster-scope-denied':
          return this.send(res, 200, {
            resources: [...state.clusterScopeDenied].sort(),
          });
        case 'POST /_sim/cluster-scope-denied': {
          const input = parse();
          if (
            !isPlainObject(input) ||
            typeof input.resource !== 'string' ||
            typeof input.denied !== 'boolean'
          ) {
            throw errors.badRequest(
              'expected { resource: string, denied: boolean }',
            );
          }
          this.denyClusterScope(state.name, input.resource, input.denied);
          return this.send(res, 200, {
            resources: [...state.clusterScopeDenied].sort(),
          });
        }
        case 'POST /_sim/watches/drop':
          return this.send(res, 200, { dropped: this.dropWatches(state.name) });
        case 'GET /_sim/crds':
          return this.send(res, 200, { crds: this.crds(state.name) });
        case 'POST /_sim/crds':
        case 'PUT /_sim/crds': {
          const input = parse();
          if (
            !isPlainObject(input) ||
            !(KNOWN_CRDS as readonly unknown[]).includes(input.name) ||
            typeof input.installed !== 'boolean'
          ) {
            throw errors.badRequest(
              `expected {"name":${KNOWN_CRDS.map(n => `"${n}"`).join(
                '|',
              )},"installed":true|false}`,
            );
          }
          this.setCrd(state.name, String(input.name), input.installed);
          return this.send(res, 200, { crds: this.crds(state.name) });
        }
        case 'GET /_sim/history': {
          const verb = query.get('verb') ?? undefined;
          const verbs = ['create', 'update', 'patch', 'delete', 'status'];
          if (verb !== undefined && !verbs.includes(verb))
            throw errors.badRequest(`verb must be one of ${verbs.join(', ')}`);
          return this.send(res, 200, {
            items: state.store.history({
              kind: query.get('kind') ?? undefined,
              namespace: query.get('namespace') ?? undefined,
              name: query.get('name') ?? undefined,
              verb: verb as WriteVerb | undefined,
            }),
          });
        }
        default:
          return this.send(res, 404, errors.notFoundPath().toStatus());
      }
    } catch (e) {
      const err =
        e instanceof ApiError ? e : errors.internal((e as Error).message);
      return this.send(res, err.code, err.toStatus());
    }
  }

  private async prometheusControl(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
  ): Promise<void> {
    const body = await this.readBody(req);
    const route = `${req.method ?? 'GET'} ${path.replace(/\/+$/, '')}`;
    try {
      if (!this.prometheus)
        throw new ApiError(
          404,
          'NotFound',
          'the Prometheus endpoint is not started (option prometheus: true, CLI --prometheus-port)',
        );
      const parse = (): unknown => {
        try {
          return JSON.parse(body?.toString('utf8') ?? '');
        } catch {
          throw errors.badRequest('the body must be valid JSON');
        }
      };
      switch (route) {
        case 'GET /_sim/prometheus/rules':
          return this.send(res, 200, { rules: this.prometheus.listRules() });
        case 'POST /_sim/prometheus/rules':
        case 'PUT /_sim/prometheus/rules': {
          const rule = parseRule(parse());
          if (typeof rule === 'string') throw errors.badRequest(rule);
          this.prometheus.setRule(rule.match, rule.value);
          return this.send(res, 200, { rules: this.prometheus.listRules() });
        }
        case 'DELETE /_sim/prometheus/rules':
          this.prometheus.clearRules();
          return this.send(res, 200, { rules: [] });
        case 'GET /_sim/prometheus/fault':
          return this.send(res, 200, { mode: this.prometheus.getFault() });
        case 'POST /_sim/prometheus/fault':
        case 'PUT /_sim/prometheus/fault': {
          const input = parse();
          const mode = isPlainObject(input) ? input.mode : undefined;
          if (mode !== 'ok' && mode !== 'down')
            throw errors.badRequest('expected {"mode":"ok"|"down"}');
          this.prometheus.setFault(mode);
          return this.send(res, 200, { mode });
        }
        case 'GET /_sim/prometheus/queries':
          return this.send(res, 200, {
            queries: this.prometheus.queryLog(),
          });
        default:
          return this.send(res, 404, errors.notFoundPath().toStatus());
      }
    } catch (e) {
      const err =
        e instanceof ApiError ? e : errors.internal((e as Error).message);
      return this.send(res, err.code, err.toStatus());
    }
  }
}

/** A cluster-wide list or watch of a resource the cluster denies at cluster scope: its 403. */
function clusterScopeDenial(
  state: ClusterState,
  method: string,
  apiPath: string,
) {
  if (method !== 'GET' || state.clusterScopeDenied.size === 0) return undefined;
  const m =
    /^\/api\/v1\/(?:watch\/)?([a-z0-9]+)$/.exec(apiPath) ??
    /^\/apis\/([^/]+)\/[^/]+\/(?:watch\/)?([a-z0-9]+)$/.exec(apiPath);
  if (!m) return undefined;
  const [plural, group] = m.length === 2 ? [m[1], ''] : [m[2], m[1]];
  const resource = group ? `${plural}.${group}` : plural;
  if (!state.clusterScopeDenied.has(resource)) return undefined;
  return failureStatus(
    403,
    'Forbidden',
    `${resource} is forbidden: User "system:serviceaccount:fleet:fleet" cannot list resource "${plural}" in API group "${group}" at the cluster scope`,
    { kind: plural, ...(group ? { group } : {}) },
  );
}
