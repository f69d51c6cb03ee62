/*
 * WHAT-IF, not Fleet: a leaner probe, to measure what a change in ClusterClients.probe would
 * buy at fleet scale. Fleet's probe makes two client-node requests per probe (list namespaces,
 * and /version), and client-node builds a new https.Agent — so a new TLS context from the CA and
 * a full TLS handshake — for every request. This one keeps one https.Agent per cluster (its TLS
 * context and session cache reused; no keep-alive, so every probe still opens a new connection)
 * and makes one request (list namespaces, limit 1). It still loads the kubeconfig through
 * Fleet's ClusterClients (access policy included) and applies the same timeout.
 */
import https from 'node:https';
import type {
  ClusterClients,
  ProbeOutcome,
} from '../../plugins/fleet-backend/src/kubernetes/ClusterClients';
import { describeKubeError } from '../../plugins/fleet-backend/src/kubernetes/requestOptions';
import type { ProbeFn } from './fleet';

export function leanProbe(clients: ClusterClients): ProbeFn {
  const agents = new Map<string, { key: string; agent: https.Agent }>();
  return async (cluster, timeoutMs): Promise<ProbeOutcome> => {
    const loaded = await clients.kubeConfigFor(cluster);
    if (loaded.kind === 'unusable')
      return { kind: 'not-probeable', message: loaded.reason };
    const server = loaded.kubeConfig.getCurrentCluster()!;
    const token = loaded.kubeConfig.getCurrentUser()?.token;
    const key = `${server.server}|${server.caData}|${token}`;
    let entry = agents.get(cluster.name);
    if (!entry || entry.key !== key) {
      entry = {
        key,
        agent: new https.Agent({
          ca: server.caData ? Buffer.from(server.caData, 'base64') : undefined,
          keepAlive: false,
          maxCachedSessions: 4,
        }),
      };
      agents.set(cluster.name, entry);
    }
    const url = new URL(
      `${server.server.replace(/\/+$/, '')}/api/v1/namespaces?limit=1`,
    );
    const started = performance.now();
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = https.request(
          url,
          {
            agent: entry!.agent,
            headers: token
              ? { Authorization: `Bearer ${token}`, Accept: 'application/json' }
              : {},
            signal: AbortSignal.timeout(timeoutMs),
          },
          res => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end();
      });
      const latencyMs = Math.round(performance.now() - started);
      if (status !== 200)
        return { kind: 'failure', latencyMs, message: `HTTP ${status}` };
      return { kind: 'success', latencyMs };
    } catch (error) {
      return {
        kind: 'failure',
        latencyMs: Math.round(performance.now() - started),
        message: describeKubeError(error, timeoutMs),
      };
    }
  };
}
