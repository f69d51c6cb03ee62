/**
 * One HTTPS listener on 127.0.0.1 that serves many simulated Kubernetes API
 * servers, routed by path prefix: `https://127.0.0.1:PORT/clusters/<name>/...`.
 * Each cluster has its own bearer token, object store, fault and kubeconfig.
 *
 * Control API (no token, never faulted) under `/_sim` and `/clusters/<name>/_sim`:
 * see controlApi.ts.
 *
 * Watch (`?watch=true` on any collection): see watch.ts.
 *
 * Prometheus (option `prometheus: true` or `prometheusPort`; plain HTTP on
 * `prometheusUrl`, see prometheus.ts), controlled on this HTTPS listener (controlApi.ts).
 *
 * Argo Rollouts: status is computed by a simulated controller (rollouts.ts):
 * canary steps (setWeight, pause with or without duration), promote
 * (`PATCH .../rollouts/<name>/status` {"status":{"pauseConditions":null}}),
 * abort ({"status":{"abort":true}}), retry, promoteFull, spec.paused.
 */
import type { ServerHttp2Session } from 'node:http2';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import type { Http2SecureServer } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_WATCH_HISTORY_LIMIT } from './changeLog';
import { createServerCertificate } from './certs';
import {
  applyDrift,
  applyFault,
  ClusterState,
  endWatch,
  findCluster,
  newClusterState,
  resetWatches,
  startWatch,
  watchConnections,
  watchPeerPorts,
} from './clusterState';
import { clusterControl, prometheusControl } from './controlApi';
import { errors } from './errors';
import { Fault, parseFault } from './faults';
import { listen, Listener, readBody, send } from './http';
import { writeKubeconfig } from './kubeconfig';
import {
  PrometheusAnswer,
  PrometheusFaultMode,
  PrometheusMatch,
  PrometheusRule,
  PrometheusSim,
} from './prometheus';
import { KNOWN_CRDS, resourceForKind } from './resources';
import { ServeContext, serveCluster } from './serveCluster';
import {
  checkClusterName,
  checkCrd,
  checkStartOptions,
  checkWatchOptions,
  type DriftChange,
  type KubeSimulatorOptions,
  type WatchOptions,
} from './simulatorOptions';
import { HistoryEntry, HistoryFilter, SimObject } from './store';
import { DEFAULT_WATCH_SETTINGS, WatchSettings } from './watch';

export { DEFAULT_CRDS } from './simulatorOptions';
export type {
  DriftChange,
  KubeSimulatorOptions,
  WatchOptions,
} from './simulatorOptions';

export class KubeSimulator {
  readonly url: string;
  private readonly clusters = new Map<string, ClusterState>();
  private stopping?: Promise<void>;
  /** Set when the simulator created kubeconfigDir itself (removed on stop). */
  private ownsKubeconfigDir = false;
  private prometheus?: PrometheusSim;
  /** The cluster also served at the root of the listener (option `rootCluster`). */
  private rootCluster?: string;
  private watchSettings: WatchSettings = { ...DEFAULT_WATCH_SETTINGS };
  private watchHistoryLimit = DEFAULT_WATCH_HISTORY_LIMIT;

  private readonly listener: Listener;

  private constructor(
    server: Http2SecureServer,
    port: number,
    readonly caPem: string,
    readonly kubeconfigDir: string,
    private readonly readyDelayMs: number,
    private readonly now: () => number,
  ) {
    this.url = `https://127.0.0.1:${port}`;
    this.listener = new Listener(server, (req, res) =>
      this.onRequest(req, res),
    );
  }

  static async start(options: KubeSimulatorOptions): Promise<KubeSimulator> {
    const { names, port, readyDelayMs, now } = checkStartOptions(options);
    let outDir: string;
    if (options.outDir) {
      outDir = resolve(options.outDir);
      await mkdir(outDir, { recursive: true, mode: 0o700 });
    } else {
      outDir = await mkdtemp(join(tmpdir(), 'kube-simulator-'));
    }
    const cert = await createServerCertificate();
    const listener = await listen({
      port,
      http2: options.http2 !== false,
      certPem: cert.certPem,
      keyPem: cert.keyPem,
    });
    const sim = new KubeSimulator(
      listener.server,
      listener.port,
      cert.certPem,
      outDir,
      readyDelayMs,
      now,
    );
    sim.ownsKubeconfigDir = !options.outDir;
    try {
      await sim.configure(options, names);
    } catch (e) {
      await sim.stop();
      throw e;
    }
    return sim;
  }

  /** The clusters, root cluster, CRDs, watch settings and Prometheus endpoint of `options`. */
  private async configure(options: KubeSimulatorOptions, names: string[]) {
    this.configureWatch(options.watch ?? {});
    for (const name of names) await this.addCluster(name);
    if (options.rootCluster !== undefined) {
      if (!names.includes(options.rootCluster))
        throw new Error(
          `rootCluster "${options.rootCluster}" is not one of the clusters`,
        );
      this.rootCluster = options.rootCluster;
    }
    for (const [cluster, crds] of Object.entries(options.crds ?? {})) {
      if (!Array.isArray(crds))
        throw new Error(`crds.${cluster} must be an array of CRD names`);
      for (const crd of crds) checkCrd(crd);
      for (const crd of KNOWN_CRDS)
        this.setCrd(cluster, crd, crds.includes(crd));
    }
    const versions = Object.entries(options.serverVersions ?? {});
    for (const [c, v] of versions) this.cluster(c).store.setServerVersion(v);
    if (options.prometheus || options.prometheusPort !== undefined) {
      const promPort = options.prometheusPort ?? 0;
      if (!Number.isInteger(promPort) || promPort < 0 || promPort > 65535) {
        throw new Error(
          `prometheusPort must be an integer between 0 and 65535, got ${promPort}`,
        );
      }
      this.prometheus = await PrometheusSim.start(promPort);
    }
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
    const state = newClusterState(name, {
      readyDelayMs: this.readyDelayMs,
      kubeconfigPath: join(this.kubeconfigDir, `${name}.yaml`),
      historyLimit: this.watchHistoryLimit,
      now: this.now,
    });
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
    applyFault(this.cluster(name), parsed.fault);
  }

  // ---------------------------------------------------------------- watch

  private configureWatch(options: WatchOptions) {
    const { settings, historyLimit } = checkWatchOptions(options);
    this.watchSettings = settings;
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
    return watchConnections(this.cluster(cluster)).size;
  }

  /**
   * The client ports of the connections a cluster's open watches go over (one per client over
   * HTTP/2): with the client's address, which process watches the cluster.
   */
  watchPeerPorts(cluster: string): number[] {
    return watchPeerPorts(this.cluster(cluster));
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
    return states.reduce((n, state) => n + resetWatches(state), 0);
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
   * 'virtualservices.networking.istio.io' or 'httproutes.gateway.networking.k8s.io' (Gateway
   * API's HTTPRoute), neither installed by default.
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
   * A Prometheus answer for every query whose equality matchers include all of `match`: a number,
   * null (no data), `{ error }` (422 execution error) or `{ distribution, seed? }` (samples drawn
   * per timestamp). The most specific rule wins; the same `match` replaces a rule.
   */
  setPrometheusRule(match: PrometheusMatch, value: PrometheusAnswer): void {
    this.prom().setRule(match, value);
  }

  clearPrometheusRules(): void {
    this.prom().clearRules();
  }

  prometheusRules(): PrometheusRule[] {
    return this.prom().listRules();
  }

  /** 'down': every connection closed unanswered; 'unavailable': every answer a 503. */
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
    return applyDrift(this.cluster(name).store, def, change);
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
    return this.listener.tlsConnections;
  }

  /**
   * The HTTP/2 sessions open now, all clusters together: for a test that acts as the API server
   * would on a connection (sends GOAWAY, counts pings, reads its flow-control windows).
   */
  http2Sessions(): ServerHttp2Session[] {
    return this.listener.openSessions();
  }

  /**
   * Closes the listener and every open socket, including held 'timeout'
   * requests, and removes the kubeconfig directory if start() created it.
   */
  stop(): Promise<void> {
    if (!this.stopping) {
      const closed = this.listener.close(() => {
        for (const state of this.clusters.values()) {
          for (const w of [...state.watches]) w.reset();
          if (state.ticker) clearInterval(state.ticker);
          state.ticker = undefined;
        }
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

  private async onRequest(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://127.0.0.1');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    if (path === '/_sim/clusters' || path === '/_sim/clusters/') {
      if (req.method !== 'GET')
        return send(res, 405, errors.methodNotAllowed().toStatus());
      return send(res, 200, { clusters: this.clusterNames() });
    }
    if (path.startsWith('/_sim/prometheus/')) {
      const body = await readBody(req);
      const reply = prometheusControl(this.prometheus, { method, path, body });
      return send(res, reply.status, reply.body);
    }
    const found = findCluster(this.clusters, path, this.rootCluster);
    if ('status' in found) return send(res, found.status, found.body);
    const { state, rest } = found;
    const query = url.searchParams;
    if (rest === '/_sim' || rest.startsWith('/_sim/')) {
      const body = await readBody(req);
      const route = rest;
      const reply = clusterControl(this, state, { method, route, query, body });
      return send(res, reply.status, reply.body);
    }
    return serveCluster(this.serving(), { state, req, res, rest, query });
  }

  /** What serving a cluster's API needs of the simulator. */
  private serving(): ServeContext {
    return {
      url: this.url,
      watchSettings: this.watchSettings,
      stopping: () => this.stopping !== undefined,
      delay: ms => this.listener.delay(ms),
      openWatch: (state, stream) =>
        startWatch(state, stream, this.watchSettings.controllerTickMs),
      watchEnded: endWatch,
    };
  }
}
