import {
  CoreV1Api,
  KubeConfig,
  VersionApi,
} from '@kubernetes/client-node';
import { promises as fs } from 'node:fs';
import { KubeconfigAccessPolicy } from './KubeconfigAccessPolicy';
import { describeKubeError, withTimeout } from './requestOptions';

/** The cluster fields needed to reach it. */
export interface ClusterAccess {
  name: string;
  endpoint: string;
  kubeconfigRef: string;
  context?: string;
  source: 'discovered' | 'manual';
}

/** What one probe of a cluster found. */
export type ProbeOutcome =
  | { kind: 'success'; latencyMs: number; serverVersion?: string }
  | { kind: 'failure'; latencyMs: number; message: string }
  | { kind: 'not-probeable'; message: string };

export type KubeConfigResult = { kind: 'ok'; kubeConfig: KubeConfig } | { kind: 'unusable'; reason: string };

/**
 * The first line of a parse error, without the excerpt of the file that YAML parsers append
 * (which could quote a token or a key).
 */
function parseErrorSummary(error: unknown): string {
  const e = error as { reason?: unknown; message?: unknown };
  const text = typeof e?.reason === 'string' ? e.reason : String(e?.message ?? error);
  return text.split('\n')[0].slice(0, 200);
}

function sameServer(a: string, b: string): boolean {
  const normalize = (value: string) => {
    try {
      return new URL(value).href.replace(/\/+$/, '');
    } catch {
      return value.replace(/\/+$/, '');
    }
  };
  return normalize(a) === normalize(b);
}

/**
 * One Kubernetes client per cluster, built from that cluster's own kubeconfig (never a global
 * singleton), rebuilt when the file, the context or the endpoint change.
 */
export class ClusterClients {
  private readonly cache = new Map<string, { key: string; kubeConfig: KubeConfig }>();

  private constructor(private readonly policy: KubeconfigAccessPolicy) {}

  static create(options: { policy: KubeconfigAccessPolicy }): ClusterClients {
    return new ClusterClients(options.policy);
  }

  /** Loads the cluster's KubeConfig, or says why it cannot be used. */
  async kubeConfigFor(cluster: ClusterAccess): Promise<KubeConfigResult> {
    const resolved = await this.policy.resolve(cluster.kubeconfigRef);
    if (resolved.kind === 'unusable') return resolved;
    let stat;
    try {
      stat = await fs.stat(resolved.path);
    } catch (error) {
      return { kind: 'unusable', reason: `kubeconfig file '${cluster.kubeconfigRef}' is not readable (${(error as NodeJS.ErrnoException).code})` };
    }
    const key = [resolved.path, cluster.context ?? '', cluster.endpoint, cluster.source, stat.mtimeMs, stat.size].join('|');
    const cached = this.cache.get(cluster.name);
    if (cached?.key === key) return { kind: 'ok', kubeConfig: cached.kubeConfig };

    const kubeConfig = new KubeConfig();
    try {
      kubeConfig.loadFromFile(resolved.path);
    } catch (error) {
      return {
        kind: 'unusable',
        reason: `kubeconfig file '${cluster.kubeconfigRef}' is malformed: ${parseErrorSummary(error)}`,
      };
    }
    if (cluster.context) {
      if (!kubeConfig.getContextObject(cluster.context)) {
        return { kind: 'unusable', reason: `kubeconfig file '${cluster.kubeconfigRef}' has no context '${cluster.context}'` };
      }
      kubeConfig.setCurrentContext(cluster.context);
    }
    const current = kubeConfig.getCurrentCluster();
    if (!current) {
      return { kind: 'unusable', reason: `kubeconfig file '${cluster.kubeconfigRef}' names no cluster for its current context` };
    }
    if (cluster.source === 'manual' && !sameServer(current.server, cluster.endpoint)) {
      // Never send a kubeconfig's credentials to a server it does not name: a manual
      // registration pointing a trusted kubeconfig at another endpoint would leak its token.
      return {
        kind: 'unusable',
        reason: `endpoint ${cluster.endpoint} is not the server of kubeconfig file '${cluster.kubeconfigRef}'; Fleet only sends a kubeconfig's credentials to its own server`,
      };
    }
    this.cache.set(cluster.name, { key, kubeConfig });
    return { kind: 'ok', kubeConfig };
  }

  /** Lists namespaces (limit 1) with a timeout that really aborts the request. */
  async probe(cluster: ClusterAccess, timeoutMs: number): Promise<ProbeOutcome> {
    const loaded = await this.kubeConfigFor(cluster);
    if (loaded.kind === 'unusable') return { kind: 'not-probeable', message: loaded.reason };
    const core = loaded.kubeConfig.makeApiClient(CoreV1Api);
    const version = loaded.kubeConfig.makeApiClient(VersionApi);
    const started = performance.now();
    const [namespaces, info] = await Promise.allSettled([
      core.listNamespace({ limit: 1 }, withTimeout(timeoutMs)),
      version.getCode({}, withTimeout(timeoutMs)),
    ]);
    const latencyMs = Math.round(performance.now() - started);
    if (namespaces.status === 'rejected') {
      return { kind: 'failure', latencyMs, message: describeKubeError(namespaces.reason, timeoutMs) };
    }
    return {
      kind: 'success',
      latencyMs,
      serverVersion: info.status === 'fulfilled' ? info.value.gitVersion : undefined,
    };
  }
}
