/*
 * The HTTP requests the Kubernetes tab sends to a Fleet cluster: GETs with the cluster's CA, TLS
 * settings and credential, over one keep-alive agent per cluster, each cancellable (its socket is
 * closed when its signal aborts, so a cluster that never answers holds no connection).
 */
import type {
  ClusterDetails,
  KubernetesCredential,
} from '@backstage/plugin-kubernetes-node';
import http from 'node:http';
import https from 'node:https';
import fs from 'node:fs';

/** A cluster's answer: its status and body (any status; the caller judges it). */
export interface ClusterAnswer {
  status: number;
  body: string;
}

/**
 * The agent of each cluster, replaced when its TLS settings or client certificate change. The
 * old one is retired, not destroyed under a request still using it: its idle sockets close at
 * once, and the rest once `retireAfterMs` has passed (the per-cluster deadline: no request of it
 * outlives that). An agent no request asked for during `idleAfterMs` (a cluster removed from the
 * fleet, or one no page shows) is retired too, so the map holds the clusters in use, not every
 * cluster the backend ever served.
 */
export class ClusterAgents {
  private readonly agents = new Map<
    string,
    { key: string; agent: https.Agent; usedAt: number }
  >();
  // A monotonic clock: a wall-clock step neither stops the sweeps nor retires every agent.
  private sweptAt = performance.now();

  constructor(
    private readonly retireAfterMs: number,
    private readonly idleAfterMs: number = 10 * 60_000,
  ) {}

  /** Retires the agents unused for `idleAfterMs`; looks at most ten times per such period. */
  private sweep(now: number) {
    if (now - this.sweptAt < this.idleAfterMs / 10) return;
    this.sweptAt = now;
    for (const [name, entry] of this.agents) {
      if (now - entry.usedAt < this.idleAfterMs) continue;
      this.agents.delete(name);
      this.retire(entry.agent);
    }
  }

  private retire(agent: https.Agent) {
    for (const sockets of Object.values(agent.freeSockets)) {
      for (const socket of sockets ?? []) socket.destroy();
    }
    setTimeout(() => agent.destroy(), this.retireAfterMs).unref();
  }

  agentFor(
    details: ClusterDetails,
    credential: KubernetesCredential,
  ): https.Agent | undefined {
    const now = performance.now();
    this.sweep(now);
    if (new URL(details.url).protocol !== 'https:') return undefined;
    const cert =
      credential.type === 'x509 client certificate'
        ? { cert: credential.cert, key: credential.key }
        : {};
    const key = JSON.stringify([
      details.url,
      details.skipTLSVerify ?? false,
      details.caData ?? '',
      details.caFile ?? '',
      cert,
    ]);
    const cached = this.agents.get(details.name);
    if (cached?.key === key) {
      cached.usedAt = now;
      return cached.agent;
    }
    if (cached) this.retire(cached.agent);
    let ca: Buffer | undefined;
    if (details.caFile) ca = fs.readFileSync(details.caFile);
    else if (details.caData) ca = Buffer.from(details.caData, 'base64');
    const agent = new https.Agent({
      ca,
      rejectUnauthorized: !details.skipTLSVerify,
      keepAlive: true,
      ...cert,
    });
    this.agents.set(details.name, { key, agent, usedAt: now });
    return agent;
  }
}

/** The URL of `resourcePath` on the cluster (its URL may have a path, e.g. behind a proxy). */
export function clusterUrl(
  details: ClusterDetails,
  resourcePath: string,
  labelSelector?: string,
): URL {
  const url = new URL(details.url);
  url.pathname =
    url.pathname === '/' ? resourcePath : `${url.pathname}${resourcePath}`;
  if (labelSelector)
    url.search = `labelSelector=${encodeURIComponent(labelSelector)}`;
  return url;
}

/** GETs `url`; rejects with the signal's reason when it aborts first (the socket is closed). */
export function getFromCluster(
  url: URL,
  options: {
    agent?: https.Agent;
    credential: KubernetesCredential;
    signal: AbortSignal;
  },
): Promise<ClusterAnswer> {
  const { agent, credential, signal } = options;
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (credential.type === 'bearer token')
    headers.Authorization = `Bearer ${credential.token}`;
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const send = url.protocol === 'https:' ? https.request : http.request;
    const request = send(url, { method: 'GET', agent, headers });
    // Settles the promise on abort even if the request or its answer emits nothing more.
    const onAbort = () => {
      request.destroy();
      reject(signal.reason);
    };
    const done = () => signal.removeEventListener('abort', onAbort);
    signal.addEventListener('abort', onAbort, { once: true });
    request.on('response', response => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        done();
        resolve({
          status: response.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
        });
      });
      response.on('error', error => {
        done();
        reject(error);
      });
    });
    request.on('error', error => {
      done();
      reject(error);
    });
    request.end();
  });
}
