/**
 * One simulated cluster as the KubeSimulator serves it: its store, token, fault, watches and
 * counters, and what the simulator does with them.
 */
import { randomBytes } from 'node:crypto';
import { errors, failureStatus } from './errors';
import { Fault, NO_FAULT } from './faults';
import type { Reply } from './http';
import { PATCH_TYPES } from './patch';
import { ResourceDef } from './resourceDef';
import type { DriftChange } from './simulatorOptions';
import { ClusterStore, SimObject } from './store';
import { isPlainObject } from './util';
import { WatchStream } from './watch';

export interface ClusterState {
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

/**
 * A fault reaches open watches too: `down` resets their connections (the client sees
 * ECONNRESET or an aborted stream), `timeout` leaves them open and silent (no event, no
 * bookmark, no server-side end: only the client's timeout or `stop()` ends them). `error`
 * and `latencyMs` only affect new requests.
 */
export function applyFault(state: ClusterState, fault: Fault) {
  state.fault = fault;
  if (fault.mode === 'down') {
    for (const w of [...state.watches]) w.reset();
  } else if (fault.mode === 'timeout') {
    for (const w of state.watches) w.silence();
  }
}

/** A cluster-wide list or watch of a resource the cluster denies at cluster scope: its 403. */
export function clusterScopeDenial(
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

/** A new cluster: a fresh token and store, no fault, no requests yet. */
export function newClusterState(
  name: string,
  options: {
    readyDelayMs: number;
    kubeconfigPath: string;
    historyLimit: number;
    now?: () => number;
  },
): ClusterState {
  const state: ClusterState = {
    name,
    token: randomBytes(24).toString('hex'),
    store: new ClusterStore(options.readyDelayMs, options.now),
    fault: { ...NO_FAULT },
    requests: 0,
    held: 0,
    requestsByPath: new Map(),
    kubeconfigPath: options.kubeconfigPath,
    watches: new Set(),
    clusterScopeDenied: new Set(),
  };
  state.store.changes.limit = options.historyLimit;
  return state;
}

/** The connections the cluster's open watches go over (one per HTTP/2 client). */
export function watchConnections(state: ClusterState): Set<object> {
  const connections = new Set<object>();
  for (const w of state.watches) {
    const c = w.connection();
    if (c) connections.add(c);
  }
  return connections;
}

/** The client ports of those connections, in order. */
export function watchPeerPorts(state: ClusterState): number[] {
  const ports = new Set<number>();
  for (const c of watchConnections(state)) {
    const conn = c as { socket?: { remotePort?: number }; remotePort?: number };
    const port = conn.socket?.remotePort ?? conn.remotePort;
    if (port !== undefined) ports.add(port);
  }
  return [...ports].sort((a, b) => a - b);
}

/** Drift: a JSON merge patch or a deletion of a live object, as any client's write. */
export function applyDrift(
  store: ClusterStore,
  def: ResourceDef,
  change: DriftChange,
): SimObject | undefined {
  const namespace = def.namespaced ? change.namespace ?? 'default' : undefined;
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

/** Adds an open watch; the controllers then run every `controllerTickMs`, so that their changes are streamed. */
export function startWatch(
  state: ClusterState,
  stream: WatchStream,
  controllerTickMs: number,
): void {
  state.watches.add(stream);
  if (!state.ticker) {
    state.ticker = setInterval(() => state.store.tick(), controllerTickMs);
  }
  stream.start();
}

/** Removes an ended watch; the controllers' ticking stops with the last one. */
export function endWatch(state: ClusterState, stream: WatchStream) {
  state.watches.delete(stream);
  if (state.watches.size === 0 && state.ticker) {
    clearInterval(state.ticker);
    state.ticker = undefined;
  }
}

/** Resets every open watch connection of the cluster; returns how many. */
export function resetWatches(state: ClusterState): number {
  let dropped = 0;
  for (const w of [...state.watches]) {
    w.reset();
    dropped += 1;
  }
  return dropped;
}

/**
 * The cluster a request's path is for (`/clusters/<name>/...`, or any other path but `/_sim`
 * of the root cluster) and the rest of the path; or the 404 to answer.
 */
export function findCluster(
  clusters: ReadonlyMap<string, ClusterState>,
  path: string,
  rootCluster: string | undefined,
): { state: ClusterState; rest: string } | Reply {
  const m =
    path.match(/^\/clusters\/([^/]+)(\/.*)?$/) ??
    (rootCluster !== undefined && !path.startsWith('/_sim')
      ? ([path, encodeURIComponent(rootCluster), path] as const)
      : null);
  if (!m) return { status: 404, body: errors.notFoundPath().toStatus() };
  const state = clusters.get(decodeURIComponent(m[1]));
  if (!state) {
    return {
      status: 404,
      body: failureStatus(
        404,
        'NotFound',
        `cluster "${decodeURIComponent(m[1])}" not found`,
      ),
    };
  }
  return { state, rest: m[2] ?? '/' };
}
