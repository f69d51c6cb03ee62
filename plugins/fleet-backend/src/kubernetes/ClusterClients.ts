import { CoreV1Api, KubeConfig, VersionApi } from '@kubernetes/client-node';
import { promises as fs } from 'node:fs';
import type https from 'node:https';
import {
  KubeconfigAccessPolicy,
  parseErrorSummary,
  sameKubernetesServer as sameServer,
} from '@cnp/plugin-fleet-node';
import type { HubCluster } from './HubCluster';
import { caFingerprint } from './caFingerprint';
import { Http2Watches } from './Http2Watches';
import { KubeconfigSources, type KubeconfigSource } from './kubeconfigSources';
import { describeKubeError, withTimeout } from './requestOptions';
import { clusterAgentFor } from './secureContexts';
import type { ConfigurationOptions } from '@kubernetes/client-node';

export { inClusterKubeConfig } from './kubeconfigSources';

/** The cluster fields needed to reach it. */
export interface ClusterAccess {
  name: string;
  endpoint: string;
  kubeconfigRef: string;
  context?: string | null;
  source: 'discovered' | 'manual';
  /** The version last stored for it: a probe asks `/version` while there is none. */
  serverVersion?: string | null;
  /** The CA it was registered with (see `clusterIdentity.ts`); unknown when left out. */
  identityCa?: string | null;
}

/**
 * The Secrets a `secret:` reference may name, as discovery reads them: those with the labels of
 * `selector` (`fleet.discovery.secretSelector`), in `namespace` when one is set
 * (`fleet.discovery.secretNamespace`). Whoever registers a cluster could otherwise make Fleet
 * read, and use, any Secret of any namespace of the hub (another team's admin kubeconfig).
 */
export interface SecretRules {
  selector?: string;
  namespace?: string;
}

/** What one probe of a cluster found. */
export type ProbeOutcome =
  | { kind: 'success'; latencyMs: number; serverVersion?: string }
  | { kind: 'failure'; latencyMs: number; message: string }
  | { kind: 'not-probeable'; message: string };

export type KubeConfigResult =
  | {
      kind: 'ok';
      kubeConfig: KubeConfig;
      /** Per-call options: the cluster's own connection pool and a timeout that really aborts. */
      requestOptions: (timeoutMs: number) => ConfigurationOptions;
      /** The cluster's own connection pool, for requests that stream (watches). */
      agent?: https.Agent;
    }
  | { kind: 'unusable'; reason: string };

/**
 * What a probe needs of a cluster's HTTP/2 connection (`Http2Watches`, see `http2For`): the
 * probe then costs a stream on it, not a TLS connection of its own held idle afterwards.
 */
export interface SharedConnection {
  /** Open, and made with this agent (the kubeconfig has not changed since). */
  usable(agent: https.Agent): boolean;
  /** GET `path`: the parsed JSON; a non-2xx status rejects with `code` as client-node's errors. */
  get(
    kubeConfig: KubeConfig,
    agent: https.Agent,
    path: string,
    timeoutMs: number,
  ): Promise<unknown>;
}

/** How long a cluster's server version is trusted before a probe asks `/version` again. */
const VERSION_REFRESH_MS = 10 * 60_000;
/** How long an HTTP/2 connection (and a stream's first answer) may take: a watch's or list's request timeout. */
const HTTP2_CONNECT_TIMEOUT_MS = 30_000;

/**
 * One keep-alive HTTPS agent for a cluster, over a TLS context built once (and shared by the
 * clusters with the same CA and credentials, see `secureContexts.ts`). client-node builds a new
 * agent, so a new TLS context and a full handshake, for every request; at fleet scale that is
 * most of a probe's CPU. Only for direct HTTPS with static credentials: a proxy, plain HTTP, or an
 * exec / auth-provider user (whose plugin may supply a client certificate per request) keep
 * client-node's own per-request agent.
 */
async function clusterAgent(
  kubeConfig: KubeConfig,
): Promise<https.Agent | undefined> {
  const cluster = kubeConfig.getCurrentCluster();
  const user = kubeConfig.getCurrentUser();
  if (
    !cluster ||
    !user ||
    cluster.proxyUrl ||
    !cluster.server.startsWith('https:')
  )
    return undefined;
  if (user.exec || user.authProvider) return undefined;
  const options: https.RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(options); // TLS fields only are kept (headers go per request)
  const { ca, cert, key, rejectUnauthorized, servername } = options;
  return clusterAgentFor({ ca, cert, key, rejectUnauthorized, servername });
}

interface CacheEntry {
  key: string;
  kubeConfig: KubeConfig;
  agent?: https.Agent;
  /** CA, certificate and key files the kubeconfig names by path, and their stat when read. */
  tlsFiles: string[];
  tlsKey: string;
  versionAt?: number;
}

/** Changes when any of the files changes (or appears, or goes). */
async function filesKey(files: string[]): Promise<string> {
  const parts = await Promise.all(
    files.map(file =>
      fs.stat(file).then(
        s => `${file}:${s.ino}:${s.mtimeMs}:${s.size}`,
        () => `${file}:missing`,
      ),
    ),
  );
  return parts.join('|');
}

function closeIdle(agent: https.Agent): void {
  for (const sockets of Object.values(agent.freeSockets)) {
    for (const socket of sockets ?? []) socket.destroy();
  }
}

/**
 * One Kubernetes client per cluster, built from that cluster's own kubeconfig (never a global
 * singleton), rebuilt when the file, the context or the endpoint change.
 */
export class ClusterClients {
  private readonly cache = new Map<string, CacheEntry>();
  /** The build in flight per cluster, and the kubeconfig key it is for. */
  private readonly building = new Map<
    string,
    { key: string; result: Promise<KubeConfigResult> }
  >();

  /** Each watched cluster's HTTP/2 connection, by cluster name (see `http2For`). */
  private readonly http2 = new Map<string, Http2Watches>();

  /** Where each cluster's kubeconfig is, and how to load it. */
  private readonly sources: KubeconfigSources;

  private constructor(
    policy: KubeconfigAccessPolicy,
    private readonly allowExecForManual: boolean,
    hub: HubCluster | undefined,
    secretRules: SecretRules,
  ) {
    this.sources = new KubeconfigSources({ policy, hub, secretRules });
  }

  static create(options: {
    policy: KubeconfigAccessPolicy;
    /** A manual cluster's kubeconfig may run an exec credential plugin (default no). */
    allowExecForManual?: boolean;
    /** Where `secret:` references are read, and the `in-cluster` cluster is reached. */
    hub?: HubCluster;
    /**
     * Which Secrets a `secret:` reference may name: those discovery would read (see
     * `SecretRules`). Without a selector, no Secret reference is read.
     */
    secretRules?: SecretRules;
  }): ClusterClients {
    return new ClusterClients(
      options.policy,
      options.allowExecForManual ?? false,
      options.hub,
      options.secretRules ?? {},
    );
  }

  /** Loads the cluster's KubeConfig, or says why it cannot be used. */
  async kubeConfigFor(
    cluster: ClusterAccess,
    options: { fresh?: boolean } = {},
  ): Promise<KubeConfigResult> {
    const source = await this.sources.sourceFor(
      cluster,
      options.fresh ?? false,
    );
    if (source.kind === 'unusable') return source;
    const key = [
      source.version,
      cluster.context ?? '',
      cluster.endpoint,
      cluster.source,
      cluster.identityCa ?? '',
    ].join('|');
    const cached = this.cache.get(cluster.name);
    // A rotated client certificate or CA file, named by path in an unchanged kubeconfig, must
    // rebuild the client too: the pooled agent holds the TLS material it read.
    if (
      cached?.key === key &&
      (cached.tlsFiles.length === 0 ||
        (await filesKey(cached.tlsFiles)) === cached.tlsKey)
    ) {
      return this.loaded(cached);
    }
    // Callers that find the same change at once (a probe, a reconcile, a deploy) share one build:
    // each build makes a pool, and all but the last would be left to time out.
    const pending = this.building.get(cluster.name);
    if (pending?.key === key) return pending.result;
    const result = this.build(cluster, source, key).finally(() => {
      if (this.building.get(cluster.name)?.result === result)
        this.building.delete(cluster.name);
    });
    this.building.set(cluster.name, { key, result });
    return result;
  }

  /**
   * The CA half of the identity of a cluster about to be registered by hand: the fingerprint of
   * the CA its kubeconfig trusts for that endpoint, or undefined when the kubeconfig cannot be
   * read (or names another server; such a cluster is never used, see `build`).
   */
  async caFingerprintFor(
    cluster: Pick<ClusterAccess, 'endpoint' | 'kubeconfigRef' | 'context'>,
  ): Promise<string | undefined> {
    const source = await this.sources.sourceFor(cluster, true);
    if (source.kind === 'unusable') return undefined;
    try {
      const read = await source.load();
      if (read.kind === 'unusable') return undefined;
      const kubeConfig = read.kubeConfig;
      if (cluster.context) {
        if (!kubeConfig.getContextObject(cluster.context)) return undefined;
        kubeConfig.setCurrentContext(cluster.context);
      }
      const current = kubeConfig.getCurrentCluster();
      if (!current || !sameServer(current.server, cluster.endpoint))
        return undefined;
      return await caFingerprint(current);
    } catch {
      return undefined;
    }
  }

  private async build(
    cluster: ClusterAccess,
    source: Extract<KubeconfigSource, { kind: 'source' }>,
    key: string,
  ): Promise<KubeConfigResult> {
    const label = source.label;
    const read = await source.load();
    if (read.kind === 'unusable') return read;
    const kubeConfig = read.kubeConfig;
    if (cluster.context) {
      if (!kubeConfig.getContextObject(cluster.context)) {
        return {
          kind: 'unusable',
          reason: `${label} has no context '${cluster.context}'`,
        };
      }
      kubeConfig.setCurrentContext(cluster.context);
    }
    const current = kubeConfig.getCurrentCluster();
    if (!current) {
      return {
        kind: 'unusable',
        reason: `${label} names no cluster for its current context`,
      };
    }
    if (!sameServer(current.server, cluster.endpoint)) {
      // Never send a kubeconfig's credentials to a server it does not name: a manual
      // registration pointing a trusted kubeconfig at another endpoint would leak its token.
      // Nor a cluster's workloads to another API server its discovered kubeconfig names now:
      // that server is a new cluster (discovery names it), not this one.
      return {
        kind: 'unusable',
        reason: `endpoint ${cluster.endpoint} is not the server of ${label}; Fleet only sends a kubeconfig's credentials to its own server`,
      };
    }
    if (
      cluster.identityCa &&
      (await caFingerprint(current)) !== cluster.identityCa
    ) {
      // Same URL, another CA: another API server answers there (a cluster rebuilt at the same
      // address, or a kubeconfig swapped for another one's).
      return {
        kind: 'unusable',
        reason: `${label} trusts another CA than the one cluster '${cluster.name}' was registered with; it is another API server`,
      };
    }
    const user = kubeConfig.getCurrentUser();
    if (
      (user?.exec || user?.authProvider) &&
      (source.untrusted ||
        (cluster.source === 'manual' && !this.allowExecForManual))
    ) {
      // An exec plugin runs a program on this host, and so do client-node's auth providers
      // (gcp, azure run their cmd-path through a shell): whoever registers a manual cluster, or
      // may write a Secret of the hub, would choose it. Discovered kubeconfig files are the
      // operator's own. (A Secret's kubeconfig is refused before this, when it is read.)
      return {
        kind: 'unusable',
        reason: `${label} runs ${
          user.exec ? 'an exec credential plugin' : 'an auth-provider'
        }, which Fleet runs only for discovered kubeconfig${
          source.untrusted
            ? ' files, never for kubeconfigs held in Secrets'
            : 's (set fleet.discovery.allowExecForManual to allow it)'
        }`,
      };
    }
    const tlsFiles = [current.caFile, user?.certFile, user?.keyFile].filter(
      (f): f is string => !!f,
    );
    const tlsKey = await filesKey(tlsFiles);
    let agent: https.Agent | undefined;
    try {
      agent = await clusterAgent(kubeConfig);
    } catch (error) {
      return {
        kind: 'unusable',
        reason: `${label} has unusable TLS data: ${parseErrorSummary(error)}`,
      };
    }
    // Requests still running on the old pool finish there; its idle connections close now.
    const previous = this.cache.get(cluster.name);
    if (previous?.agent) closeIdle(previous.agent);
    const entry: CacheEntry = { key, kubeConfig, agent, tlsFiles, tlsKey };
    this.cache.set(cluster.name, entry);
    return this.loaded(entry);
  }

  private loaded(entry: {
    kubeConfig: KubeConfig;
    agent?: https.Agent;
  }): KubeConfigResult {
    return {
      kind: 'ok',
      kubeConfig: entry.kubeConfig,
      requestOptions: (timeoutMs: number) =>
        withTimeout(timeoutMs, entry.agent),
      agent: entry.agent,
    };
  }

  /**
   * Forgets the clients of clusters not in `names` (deleted, or renamed), closing their idle
   * connections: their credentials and pools are not kept for the life of the backend.
   */
  retainOnly(names: Iterable<string>): void {
    const keep = new Set(names);
    for (const [name, entry] of this.cache) {
      if (keep.has(name)) continue;
      if (entry.agent) closeIdle(entry.agent);
      this.cache.delete(name);
    }
  }

  /** Closes every idle connection (the next request to each cluster opens a new one). */
  closeIdleConnections(): void {
    for (const entry of this.cache.values())
      if (entry.agent) closeIdle(entry.agent);
  }

  /**
   * Backend shutdown: closes the idle connections and forgets the clients. Requests still running
   * finish on their connections (idle pooled sockets never keep the process alive).
   */
  dispose(): void {
    this.closeIdleConnections();
    this.cache.clear();
    this.building.clear();
  }

  /**
   * The cluster's one HTTP/2 connection, for its watches and lists (`livestate/`), made on the
   * first ask (it connects with its first stream) and kept until `closeHttp2`. While it is open,
   * the cluster's probes use it too, and open no connection of their own.
   */
  http2For(cluster: string): Http2Watches {
    let connection = this.http2.get(cluster);
    if (!connection) {
      connection = new Http2Watches(HTTP2_CONNECT_TIMEOUT_MS);
      this.http2.set(cluster, connection);
    }
    return connection;
  }

  /** Closes the cluster's HTTP/2 connection (its streams end) and forgets it. */
  closeHttp2(cluster: string): void {
    this.http2.get(cluster)?.close();
    this.http2.delete(cluster);
  }

  /**
   * Lists namespaces (limit 1) with a timeout that really aborts the request: one request per
   * probe, on the connection the cluster's watches hold when there is one open. `/version` is asked alongside only when the cluster's version is not known yet, or
   * was read more than ten minutes ago (an upgrade shows within that time).
   */
  async probe(
    cluster: ClusterAccess,
    timeoutMs: number,
  ): Promise<ProbeOutcome> {
    // A kubeconfig Secret is read again for each probe: rotated or deleted, it shows now.
    const loaded = await this.kubeConfigFor(cluster, { fresh: true });
    if (loaded.kind === 'unusable')
      return { kind: 'not-probeable', message: loaded.reason };
    const entry = this.cache.get(cluster.name);
    const askVersion =
      !cluster.serverVersion ||
      !entry?.versionAt ||
      Date.now() - entry.versionAt > VERSION_REFRESH_MS;
    const core = loaded.kubeConfig.makeApiClient(CoreV1Api);
    const overPool = {
      namespaces: () =>
        core.listNamespace({ limit: 1 }, loaded.requestOptions(timeoutMs)),
      version: () =>
        loaded.kubeConfig
          .makeApiClient(VersionApi)
          .getCode({}, loaded.requestOptions(timeoutMs)),
    };
    const { agent } = loaded;
    const shared: SharedConnection | undefined = this.http2.get(cluster.name);
    const connection = agent && shared?.usable(agent) ? shared : undefined;
    const ask = connection
      ? {
          namespaces: () =>
            connection.get(
              loaded.kubeConfig,
              agent!,
              '/api/v1/namespaces?limit=1',
              timeoutMs,
            ),
          version: () =>
            connection.get(
              loaded.kubeConfig,
              agent!,
              '/version',
              timeoutMs,
            ) as Promise<{ gitVersion?: string }>,
        }
      : overPool;
    const started = performance.now();
    const [namespaces, info] = await Promise.allSettled([
      ask.namespaces(),
      askVersion ? ask.version() : Promise.resolve(undefined),
    ]);
    const latencyMs = Math.round(performance.now() - started);
    if (namespaces.status === 'rejected') {
      if (entry) entry.versionAt = undefined; // ask again once it answers: it may come back upgraded
      return {
        kind: 'failure',
        latencyMs,
        message: describeKubeError(namespaces.reason, timeoutMs),
      };
    }
    const serverVersion =
      info.status === 'fulfilled' ? info.value?.gitVersion : undefined;
    if (entry && serverVersion) entry.versionAt = Date.now();
    return { kind: 'success', latencyMs, serverVersion };
  }
}
