import { createHash } from 'node:crypto';
import https from 'node:https';
import tls from 'node:tls';

/** The TLS options of a cluster's agent (see `clusterAgentFor`). */
export interface ClusterTlsOptions {
  ca?: tls.SecureContextOptions['ca'];
  cert?: tls.SecureContextOptions['cert'];
  key?: tls.SecureContextOptions['key'];
  rejectUnauthorized?: boolean;
  servername?: string;
}

/**
 * Idle connections are closed after this long: below kube-apiserver's 90 s idle timeout and the
 * usual load-balancer idle timeouts, so Fleet never sends a request on a connection the server is
 * closing at that moment.
 */
export const IDLE_SOCKET_TIMEOUT_MS = 30_000;

/**
 * Idle connections an agent keeps per cluster. Fleet sends a cluster a few requests at a time (a
 * probe, a reconcile's reads, a deploy's apply): one kept connection serves the next probe
 * without a handshake, and the others close when their request ends instead of holding their
 * TLS buffers until the idle timeout (Node's default keeps up to 256).
 */
export const MAX_FREE_SOCKETS = 1;

/**
 * A secure context parses its CA into a certificate store of its own, with Node's root
 * certificates (and NODE_EXTRA_CA_CERTS) added to it: built per cluster, every cluster paid for
 * it, even clusters that trust the same CA with the same credentials. One is built per distinct
 * (CA, certificate, key) and shared while an agent uses it; it is freed with the last one.
 */
const contexts = new Map<string, WeakRef<tls.SecureContext>>();
const forgetContext = new FinalizationRegistry<string>(id => {
  if (!contexts.get(id)?.deref()) contexts.delete(id);
});
/** Agents built here and still alive, for `poolStats`. */
const agents = new Set<WeakRef<https.Agent>>();
const forgetAgent = new FinalizationRegistry<WeakRef<https.Agent>>(ref =>
  agents.delete(ref),
);

type Part = string | Buffer | { pem: string | Buffer; passphrase?: string };

function digest(
  hash: ReturnType<typeof createHash>,
  material: Part | Part[] | undefined,
) {
  let parts: Part[] = [];
  if (Array.isArray(material)) parts = material;
  else if (material !== undefined) parts = [material];
  hash.update(`${parts.length};`);
  const field = (value: string | Buffer) => {
    const bytes = typeof value === 'string' ? Buffer.from(value) : value;
    hash.update(`${bytes.length}:`);
    hash.update(bytes);
  };
  for (const part of parts) {
    if (typeof part === 'string' || Buffer.isBuffer(part)) {
      field(part);
    } else {
      // A key with its passphrase: both tell contexts apart.
      hash.update('k');
      field(part.pem);
      field(part.passphrase ?? '');
    }
  }
}

/** The secure context for this CA, certificate and key: built once, shared while in use. */
export function sharedSecureContext(
  options: Pick<ClusterTlsOptions, 'ca' | 'cert' | 'key'>,
): tls.SecureContext {
  const hash = createHash('sha256');
  digest(hash, options.ca as Part | Part[] | undefined);
  digest(hash, options.cert as Part | Part[] | undefined);
  digest(hash, options.key as Part | Part[] | undefined);
  const id = hash.digest('hex');
  const existing = contexts.get(id)?.deref();
  if (existing) return existing;
  const context = tls.createSecureContext({
    ca: options.ca,
    cert: options.cert,
    key: options.key,
  });
  contexts.set(id, new WeakRef(context));
  forgetContext.register(context, id);
  return context;
}

/**
 * One cluster's keep-alive HTTPS agent: its own connection pool (at most MAX_FREE_SOCKETS idle
 * connections, closed after IDLE_SOCKET_TIMEOUT_MS), over the secure context shared by every
 * cluster with the same TLS material. Throws when the material does not parse.
 */
export function clusterAgentFor(options: ClusterTlsOptions): https.Agent {
  const { ca, cert, key, rejectUnauthorized, servername } = options;
  const agent = new https.Agent({
    keepAlive: true,
    maxFreeSockets: MAX_FREE_SOCKETS,
    timeout: IDLE_SOCKET_TIMEOUT_MS,
    secureContext: sharedSecureContext({ ca, cert, key }),
    ...(rejectUnauthorized === undefined ? {} : { rejectUnauthorized }),
    ...(servername ? { servername } : {}),
  });
  const ref = new WeakRef(agent);
  agents.add(ref);
  forgetAgent.register(agent, ref);
  return agent;
}

/** What the cluster agents hold now: for the memory benchmark and tests. */
export interface PoolStats {
  /** Secure contexts alive (one per distinct CA, certificate and key in use). */
  secureContexts: number;
  /** Cluster agents alive (about one per cluster with a client). */
  agents: number;
  /** Connections carrying a request. */
  activeSockets: number;
  /** Idle connections kept for the next request. */
  freeSockets: number;
}

/** Counts the secure contexts, cluster agents and their connections alive in this process. */
export function poolStats(): PoolStats {
  let secureContexts = 0;
  for (const ref of contexts.values()) if (ref.deref()) secureContexts += 1;
  let liveAgents = 0;
  let activeSockets = 0;
  let freeSockets = 0;
  const count = (lists: NodeJS.ReadOnlyDict<unknown[]>) =>
    Object.values(lists).reduce((n, list) => n + (list?.length ?? 0), 0);
  for (const ref of agents) {
    const agent = ref.deref();
    if (!agent) continue;
    liveAgents += 1;
    activeSockets += count(agent.sockets);
    freeSockets += count(agent.freeSockets);
  }
  return {
    secureContexts,
    agents: liveAgents,
    activeSockets,
    freeSockets,
  };
}
