/*
 * A cluster's identity: the API server, not the name. The CA half is computed from a kubeconfig
 * in `kubernetes/caFingerprint.ts`; the store keeps both halves and refuses a second cluster of
 * a known identity.
 */

/**
 * Who an API server is: its URL (normalized) and the fingerprint of the CA the kubeconfig
 * trusts for it. `ca` is `sha256:<hex>`, `none` when the kubeconfig names no CA (the system's
 * trust or no verification), and undefined when it is not known (a cluster stored before
 * identities were, or a manual cluster whose kubeconfig could not be read).
 */
export interface ClusterIdentity {
  server: string;
  ca?: string;
}

/** The kubeconfig names no CA of its own. */
export const NO_CA = 'none';

/** Host names that are this host's loopback address, however they are written. */
const LOOPBACK_ALIASES = new Set(['localhost', '[::1]', '127.0.0.1']);

/** `[::ffff:7f00:1]` (an IPv4-mapped IPv6 address, as WHATWG URL writes it) as `127.0.0.1`. */
function unmapIpv4(hostname: string): string {
  const m = /^\[::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/.exec(hostname);
  if (!m) return hostname;
  const high = parseInt(m[1], 16);
  const low = parseInt(m[2], 16);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** Percent-escapes of unreserved characters decoded, the others' hex upper-cased (RFC 3986). */
function normalizePercent(path: string): string {
  return path.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16));
    return /[A-Za-z0-9\-._~]/.test(char) ? char : `%${hex.toUpperCase()}`;
  });
}

/**
 * The server URL as one API server has one, so that another spelling of a known server is that
 * server (WHATWG URL parsing, then): scheme and host lower-case, a host name's trailing dot
 * dropped, an IPv4-mapped IPv6 address as IPv4, `localhost` and `[::1]` as `127.0.0.1` (one
 * loopback), the default port dropped, `.` and `..` segments resolved, repeated slashes
 * collapsed, percent-escapes of unreserved characters decoded and trailing slashes dropped. The
 * path keeps its case: one host may serve several clusters by path, and paths are
 * case-sensitive behind a proxy as on the API server. Credentials, query and fragment are not
 * part of it.
 */
export function normalizeServer(server: string): string {
  try {
    const url = new URL(server.trim());
    let hostname = unmapIpv4(url.hostname.replace(/\.$/, ''));
    if (LOOPBACK_ALIASES.has(hostname)) hostname = '127.0.0.1';
    const host = url.port ? `${hostname}:${url.port}` : hostname;
    const path = normalizePercent(url.pathname)
      .replace(/\/{2,}/g, '/')
      .replace(/\/+$/, '');
    return `${url.protocol}//${host}${path}`;
  } catch {
    return server.trim().replace(/\/+$/, '');
  }
}

/**
 * Whether two identities can be the same API server: the same server, and the same CA where
 * both are known.
 */
export function sameIdentity(a: ClusterIdentity, b: ClusterIdentity): boolean {
  if (a.server !== b.server) return false;
  return a.ca === undefined || b.ca === undefined || a.ca === b.ca;
}

/** A short text naming an identity, for messages. */
export function describeIdentity(identity: ClusterIdentity): string {
  let ca = `CA ${identity.ca?.slice(0, 'sha256:'.length + 12)}…`;
  if (identity.ca === undefined) ca = 'CA unknown';
  else if (identity.ca === NO_CA) ca = 'no CA';
  return `${identity.server} (${ca})`;
}

/** The seed of the name suffix a cluster gets when its name is held by another identity. */
export function identitySeed(identity: ClusterIdentity): string {
  return `${identity.server}#${identity.ca ?? ''}`;
}
