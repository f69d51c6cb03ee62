/**
 * The KubeSimulator's control API, served on its HTTPS listener beside the simulated API
 * servers: what a test or a demo in another process uses to inject faults and drift and to
 * read what a cluster received.
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
 *        (Istio VirtualService, v1beta1 and v1; not installed by default) or
 *        'httproutes.gateway.networking.k8s.io' (Gateway API HTTPRoute, v1 and v1beta1; not
 *        installed by default). Uninstalling
 *        deletes the CRD's objects; an uninstalled kind answers 404 and leaves discovery.
 *   POST /clusters/<name>/_sim/drift         ← { kind, namespace?, name, patch? | delete: true } (drift injection)
 *   GET  /clusters/<name>/_sim/history?kind=&namespace=&name=&verb=
 *        → { items: [{ at, verb: 'create'|'update'|'patch'|'delete'|'status', kind,
 *            namespace?, name, resourceVersion, object }] } (API writes, oldest first,
 *            the last 2,000 per cluster; controllers' status updates are not writes here)
 *   GET  /clusters/<name>/_sim/traffic?namespace=&virtualService=&route=
 *        → { pods: { <pod>: share }, unavailable, destinations } (where the mesh sends one
 *          HTTP route's requests, shares 0 to 1; see meshTraffic.ts)
 *   GET  /clusters/<name>/_sim/traffic?namespace=&httpRoute=&rule=
 *        → the same for one rule (an index, default 0) of a Gateway API HTTPRoute, as its
 *          backendRefs' weights send them (see gatewayTraffic.ts)
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
 * Prometheus (option `prometheus: true` or `prometheusPort`; plain HTTP on
 * `prometheusUrl`, see prometheus.ts), controlled on this HTTPS listener:
 *   GET    /_sim/prometheus/rules   → { rules: [{ match, value } | { match, distribution, seed }] }
 *   POST   /_sim/prometheus/rules   ← { match: { label: value, ... }, value: number | null | { error } }
 *                                   ← { match, distribution: { kind: 'normal', mean, sd } |
 *                                       { kind: 'lognormal', mu, sigma } | { kind: 'constant', value } |
 *                                       { kind: 'none' }, seed?: integer (default 1) }
 *          (match may also be PromQL matchers as a string: 'app="payments",variant="canary"')
 *   DELETE /_sim/prometheus/rules   (clears every rule)
 *   GET    /_sim/prometheus/fault   → { mode }
 *   POST   /_sim/prometheus/fault   ← { mode: 'ok' | 'down' | 'unavailable' } (down: connections
 *          closed unanswered; unavailable: 503 "Service Unavailable")
 *   GET    /_sim/prometheus/queries → { queries: string[] } (query strings received, oldest first)
 */
import { ClusterState, applyFault } from './clusterState';
import { ApiError, errors } from './errors';
import { parseFault } from './faults';
import type { Reply } from './http';
import { parseRule, PrometheusSim } from './prometheus';
import { meshTraffic } from './meshTraffic';
import { gatewayTraffic } from './gatewayTraffic';
import { KNOWN_CRDS, resourceForKind } from './resources';
import type { DriftChange } from './simulatorOptions';
import type { SimObject, WriteVerb } from './store';
import { isPlainObject, JsonObject } from './util';

/** What the control API needs of the simulator (its library API). */
export interface SimulatorControls {
  setReadiness(
    name: string,
    opts: { readyDelayMs?: number; neverReady?: boolean },
  ): void;
  drift(name: string, change: DriftChange): SimObject | undefined;
  expireWatchHistory(cluster: string): string;
  denyClusterScope(cluster: string, resource: string, denied?: boolean): void;
  dropWatches(cluster?: string): number;
  crds(cluster: string): string[];
  setCrd(cluster: string, name: string, installed: boolean): void;
}

interface ControlRequest {
  sim: SimulatorControls;
  state: ClusterState;
  query: URLSearchParams;
  /** The body as JSON (400 when it is not). */
  input(): unknown;
}

/** A route's answer: the body of a 200. */
type Handler = (req: ControlRequest) => unknown;

function parseJson(body: Buffer | undefined): unknown {
  try {
    return JSON.parse(body?.toString('utf8') ?? '');
  } catch {
    throw errors.badRequest('the body must be valid JSON');
  }
}

function errorReply(e: unknown): Reply {
  const err = e instanceof ApiError ? e : errors.internal((e as Error).message);
  return { status: err.code, body: err.toStatus() };
}

const setFault: Handler = ({ state, input }) => {
  const parsed = parseFault(input());
  if (!parsed.fault) throw errors.badRequest(`invalid fault: ${parsed.error}`);
  applyFault(state, parsed.fault);
  return state.fault;
};

const setReadiness: Handler = ({ sim, state, input }) => {
  const body = input();
  if (!isPlainObject(body))
    throw errors.badRequest('readiness must be a JSON object');
  const { readyDelayMs, neverReady } = body;
  if (
    readyDelayMs !== undefined &&
    (typeof readyDelayMs !== 'number' || readyDelayMs < 0)
  ) {
    throw errors.badRequest('readyDelayMs must be a non-negative number');
  }
  if (neverReady !== undefined && typeof neverReady !== 'boolean') {
    throw errors.badRequest('neverReady must be a boolean');
  }
  sim.setReadiness(state.name, {
    readyDelayMs: readyDelayMs as number | undefined,
    neverReady: neverReady as boolean | undefined,
  });
  return state.store.readiness;
};

const drift: Handler = ({ sim, state, input }) => {
  const body = input();
  if (
    !isPlainObject(body) ||
    typeof body.kind !== 'string' ||
    typeof body.name !== 'string' ||
    (body.delete !== true && !isPlainObject(body.patch))
  ) {
    throw errors.badRequest(
      'expected {"kind":"Deployment","namespace":"default","name":"web","patch":{...}} or {...,"delete":true}',
    );
  }
  if (!resourceForKind(body.kind))
    throw errors.badRequest(`unknown kind ${body.kind}`);
  const object = sim.drift(state.name, body as unknown as DriftChange);
  return object ?? { deleted: true };
};

const denyClusterScope: Handler = ({ sim, state, input }) => {
  const body = input();
  if (
    !isPlainObject(body) ||
    typeof body.resource !== 'string' ||
    typeof body.denied !== 'boolean'
  ) {
    throw errors.badRequest('expected { resource: string, denied: boolean }');
  }
  sim.denyClusterScope(state.name, body.resource, body.denied);
  return { resources: [...state.clusterScopeDenied].sort() };
};

const setCrd: Handler = ({ sim, state, input }) => {
  const body = input();
  if (
    !isPlainObject(body) ||
    !(KNOWN_CRDS as readonly unknown[]).includes(body.name) ||
    typeof body.installed !== 'boolean'
  ) {
    throw errors.badRequest(
      `expected {"name":${KNOWN_CRDS.map(n => `"${n}"`).join(
        '|',
      )},"installed":true|false}`,
    );
  }
  sim.setCrd(state.name, String(body.name), body.installed);
  return { crds: sim.crds(state.name) };
};

const history: Handler = ({ state, query }) => {
  const verb = query.get('verb') ?? undefined;
  const verbs = ['create', 'update', 'patch', 'delete', 'status'];
  if (verb !== undefined && !verbs.includes(verb))
    throw errors.badRequest(`verb must be one of ${verbs.join(', ')}`);
  return {
    items: state.store.history({
      kind: query.get('kind') ?? undefined,
      namespace: query.get('namespace') ?? undefined,
      name: query.get('name') ?? undefined,
      verb: verb as WriteVerb | undefined,
    }),
  };
};

/**
 * Where a VirtualService's route (meshTraffic.ts) or an HTTPRoute's rule (gatewayTraffic.ts)
 * sends its requests.
 */
const traffic: Handler = ({ state, query }) => {
  const namespace = query.get('namespace');
  const httpRoute = query.get('httpRoute');
  const name = query.get('virtualService');
  const objects = state.store.objects() as unknown as JsonObject[];
  if (namespace && httpRoute) {
    const rule = Number(query.get('rule') ?? 0);
    if (!Number.isInteger(rule) || rule < 0)
      throw errors.badRequest('rule must be a rule index');
    try {
      return gatewayTraffic(objects, namespace, httpRoute, rule);
    } catch (error) {
      throw errors.badRequest(String((error as Error).message));
    }
  }
  if (!namespace || !name)
    throw errors.badRequest(
      'namespace and virtualService (or httpRoute) are required',
    );
  try {
    return meshTraffic(
      objects,
      namespace,
      name,
      query.get('route') ?? undefined,
    );
  } catch (error) {
    throw errors.badRequest(String((error as Error).message));
  }
};

const CLUSTER_ROUTES: Record<string, Handler> = {
  'GET /_sim/traffic': traffic,
  'GET /_sim/fault': ({ state }) => state.fault,
  'POST /_sim/fault': setFault,
  'PUT /_sim/fault': setFault,
  'GET /_sim/objects': ({ state }) => ({ items: state.store.objects() }),
  'GET /_sim/readiness': ({ state }) => state.store.readiness,
  'POST /_sim/readiness': setReadiness,
  'PUT /_sim/readiness': setReadiness,
  'POST /_sim/drift': drift,
  'GET /_sim/watches': ({ state }) => ({
    open: state.watches.size,
    historyLimit: state.store.changes.limit,
    oldestResourceVersion: String(state.store.changes.oldestWatchable),
    resourceVersion: state.store.resourceVersion(),
  }),
  'POST /_sim/watches/expire': ({ sim, state }) => ({
    oldestResourceVersion: sim.expireWatchHistory(state.name),
  }),
  'GET /_sim/cluster-scope-denied': ({ state }) => ({
    resources: [...state.clusterScopeDenied].sort(),
  }),
  'POST /_sim/cluster-scope-denied': denyClusterScope,
  'POST /_sim/watches/drop': ({ sim, state }) => ({
    dropped: sim.dropWatches(state.name),
  }),
  'GET /_sim/crds': ({ sim, state }) => ({ crds: sim.crds(state.name) }),
  'POST /_sim/crds': setCrd,
  'PUT /_sim/crds': setCrd,
  'GET /_sim/history': history,
};

/** The answer to a control request on one cluster (`route`: its path after the cluster's). */
export function clusterControl(
  sim: SimulatorControls,
  state: ClusterState,
  request: {
    method: string;
    route: string;
    query: URLSearchParams;
    body: Buffer | undefined;
  },
): Reply {
  const route = request.route.replace(/\/+$/, '');
  const handler = CLUSTER_ROUTES[`${request.method} ${route}`];
  if (!handler) return { status: 404, body: errors.notFoundPath().toStatus() };
  try {
    const input = () => parseJson(request.body);
    return {
      status: 200,
      body: handler({ sim, state, query: request.query, input }),
    };
  } catch (e) {
    return errorReply(e);
  }
}

type PrometheusHandler = (
  prometheus: PrometheusSim,
  input: () => unknown,
) => unknown;

const setRule: PrometheusHandler = (prometheus, input) => {
  const rule = parseRule(input());
  if (typeof rule === 'string') throw errors.badRequest(rule);
  prometheus.setRule(
    rule.match,
    rule.distribution
      ? { distribution: rule.distribution, seed: rule.seed }
      : rule.value ?? null,
  );
  return { rules: prometheus.listRules() };
};

const setPrometheusFault: PrometheusHandler = (prometheus, input) => {
  const body = input();
  const mode = isPlainObject(body) ? body.mode : undefined;
  if (mode !== 'ok' && mode !== 'down' && mode !== 'unavailable')
    throw errors.badRequest('expected {"mode":"ok"|"down"|"unavailable"}');
  prometheus.setFault(mode);
  return { mode };
};

const PROMETHEUS_ROUTES: Record<string, PrometheusHandler> = {
  'GET /_sim/prometheus/rules': p => ({ rules: p.listRules() }),
  'POST /_sim/prometheus/rules': setRule,
  'PUT /_sim/prometheus/rules': setRule,
  'DELETE /_sim/prometheus/rules': p => {
    p.clearRules();
    return { rules: [] };
  },
  'GET /_sim/prometheus/fault': p => ({ mode: p.getFault() }),
  'POST /_sim/prometheus/fault': setPrometheusFault,
  'PUT /_sim/prometheus/fault': setPrometheusFault,
  'GET /_sim/prometheus/queries': p => ({ queries: p.queryLog() }),
};

/** The answer to a request on `/_sim/prometheus/...` (404 when Prometheus is not started). */
export function prometheusControl(
  prometheus: PrometheusSim | undefined,
  request: { method: string; path: string; body: Buffer | undefined },
): Reply {
  try {
    if (!prometheus)
      throw new ApiError(
        404,
        'NotFound',
        'the Prometheus endpoint is not started (option prometheus: true, CLI --prometheus-port)',
      );
    const route = `${request.method} ${request.path.replace(/\/+$/, '')}`;
    const handler = PROMETHEUS_ROUTES[route];
    if (!handler)
      return { status: 404, body: errors.notFoundPath().toStatus() };
    return {
      status: 200,
      body: handler(prometheus, () => parseJson(request.body)),
    };
  } catch (e) {
    return errorReply(e);
  }
}
