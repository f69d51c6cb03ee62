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

/**
 * The server URL as one API server has one: scheme and host lower-cased, the default port and
 * trailing slashes dropped; the path is kept (one host may serve several clusters by path).
 */
export function normalizeServer(server: string): string {
  try {
    const url = new URL(server.trim());
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
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
