/**
 * How the KubeSimulator serves one cluster's API request: counted, then the cluster's fault
 * (connection dropped, request held unanswered, latency, 500), the bearer token, RBAC's
 * cluster-scope denials and the body limit; then a watch stream or the API's answer (api.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { handleApi, watchTarget } from './api';
import { ClusterState, clusterScopeDenial } from './clusterState';
import { dropConnection } from './connections';
import { ApiError, errors, failureStatus } from './errors';
import { authorized, readBody, send } from './http';
import { parseWatchQuery, WatchSettings, WatchStream } from './watch';

/** What serving a cluster's API needs of the simulator. */
export interface ServeContext {
  /** The listener's `https://127.0.0.1:PORT`. */
  readonly url: string;
  readonly watchSettings: WatchSettings;
  /** Whether the simulator is stopping (a delayed request is then left unanswered). */
  stopping(): boolean;
  delay(ms: number): Promise<void>;
  openWatch(state: ClusterState, stream: WatchStream): void;
  watchEnded(state: ClusterState, stream: WatchStream): void;
}

/** One request to a cluster's API. */
export interface ClusterRequest {
  state: ClusterState;
  req: IncomingMessage;
  res: ServerResponse;
  /** The path after the cluster's prefix. */
  rest: string;
  query: URLSearchParams;
}

/** Serves one request to a cluster's API. */
export async function serveCluster(
  ctx: ServeContext,
  request: ClusterRequest,
): Promise<void> {
  const { state, req, res, rest, query } = request;
  const apiPath = rest.split('?')[0];
  countRequest(state, apiPath);
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
  const body = await readBody(req);
  if (fault.latencyMs) await ctx.delay(fault.latencyMs);
  if (ctx.stopping()) return undefined;
  if (fault.mode === 'error') {
    return send(
      res,
      500,
      errors
        .internal('simulated internal error (kube-simulator fault "error")')
        .toStatus(),
    );
  }
  if (!authorized(req, state.token))
    return send(res, 401, errors.unauthorized().toStatus());
  const denied = clusterScopeDenial(state, req.method ?? 'GET', apiPath);
  if (denied) return send(res, 403, denied);
  if (body === undefined) {
    return send(
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
    watch = watchStream(ctx, request);
  } catch (e) {
    const err =
      e instanceof ApiError ? e : errors.internal((e as Error).message);
    return send(res, err.code, err.toStatus());
  }
  if (watch) return ctx.openWatch(state, watch);
  const answer = handleApi(state.store, {
    method: req.method ?? 'GET',
    path: rest,
    query,
    contentType: req.headers['content-type'] ?? '',
    body,
    serverAddress: ctx.url.replace('https://', ''),
    userAgent: req.headers['user-agent'],
  });
  if (req.method === 'HEAD') {
    res.writeHead(answer.status);
    res.end();
    return undefined;
  }
  if (answer.warnings?.length)
    res.setHeader(
      'Warning',
      answer.warnings.map(w => `299 - ${JSON.stringify(w)}`),
    );
  return send(res, answer.status, answer.body, answer.text);
}

function countRequest(state: ClusterState, apiPath: string) {
  state.requests += 1;
  state.requestsByPath.set(
    apiPath,
    (state.requestsByPath.get(apiPath) ?? 0) + 1,
  );
}

/** The watch stream the request asks for, if it is a watch (not started yet). */
function watchStream(
  ctx: ServeContext,
  { state, req, res, rest, query }: ClusterRequest,
): WatchStream | undefined {
  const target = watchTarget(state.store, req.method ?? 'GET', rest, query);
  if (!target) return undefined;
  const request = parseWatchQuery(
    target.def,
    target.stored,
    target.namespace,
    query,
    target.nameSelector,
  );
  return new WatchStream(res, state.store, request, ctx.watchSettings, w =>
    ctx.watchEnded(state, w),
  );
}
