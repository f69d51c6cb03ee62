import { promises as fs } from 'node:fs';
import path from 'node:path';
import pLimit from 'p-limit';
import type { ClusterSource } from '@cnp/plugin-fleet-common';
import type { DiscoveredCluster } from '../database/types';
import { caFingerprint } from '../kubernetes/caFingerprint';
import {
  describeIdentity,
  identitySeed,
  normalizeServer,
  sameIdentity,
  type ClusterIdentity,
} from '../database/clusterIdentity';
import {
  sanitizeK8sName,
  withStableSuffix,
} from '../kubernetes/sanitizeK8sName';
import {
  parseErrorSummary,
  readKubeconfigFile,
  type KubeconfigFileRead,
} from '@cnp/plugin-fleet-node';
import { asError } from '../util/errors';

const READ_CONCURRENCY = 8; // at most 8 × MAX_KUBECONFIG_BYTES held at once

export interface DiscoverySources {
  kubeconfigPath?: string;
  kubeconfigDir?: string;
}

export interface DiscoveryResult {
  clusters: DiscoveredCluster[];
  /** One message per skipped file, context or renamed cluster; each names the file. */
  warnings: string[];
}

async function listKubeconfigFiles(
  sources: DiscoverySources,
  warnings: string[],
): Promise<string[]> {
  const files: string[] = [];
  if (sources.kubeconfigPath) files.push(path.resolve(sources.kubeconfigPath));
  if (sources.kubeconfigDir) {
    const dir = path.resolve(sources.kubeconfigDir);
    try {
      const entries = await fs.readdir(dir, { withFileTypes: true });
      for (const entry of entries.sort((a, b) =>
        a.name.localeCompare(b.name),
      )) {
        if (entry.name.startsWith('.')) continue;
        const file = path.join(dir, entry.name);
        // Symlinks are followed when read: a dangling one is reported like an unreadable file.
        if ((entry.isFile() || entry.isSymbolicLink()) && !files.includes(file))
          files.push(file);
      }
    } catch (error) {
      warnings.push(
        `Skipping kubeconfig directory ${dir}: ${asError(error).message}`,
      );
    }
  }
  return files;
}

/** What discovery needs of one context (not the credentials: files are read 8 at a time). */
interface ContextSummary {
  name: string;
  cluster: string;
  server?: string;
  /** The fingerprint of the CA it trusts (see `caFingerprint`). */
  ca?: string;
}

/**
 * A kubeconfig that is not a file of the sources: a Secret of the hub cluster, or in-cluster
 * config. `ref` is what the clusters it names store as `kubeconfigRef`; `label` names it in
 * warnings (never its contents).
 */
export interface KubeconfigItem {
  ref: string;
  label: string;
  read: () => Promise<KubeconfigFileRead>;
}

/** Reads one kubeconfig's contexts, or says why it is skipped. */
async function readKubeconfig(item: KubeconfigItem): Promise<
  | {
      kind: 'ok';
      contexts: ContextSummary[];
      /** It names a CA file, whose fingerprint may change while the kubeconfig does not. */
      namesCaFile: boolean;
    }
  | { kind: 'skip'; warning: string }
> {
  let read;
  try {
    read = await item.read();
  } catch (error) {
    return {
      kind: 'skip',
      // Never the parser's whole message: it quotes lines of the file, tokens included.
      warning: `Skipping ${item.label}: ${parseErrorSummary(error)}`,
    };
  }
  if (read.kind === 'skipped') {
    return {
      kind: 'skip',
      warning: `Skipping ${item.label}: ${read.reason}`,
    };
  }
  const kubeConfig = read.kubeConfig;
  return {
    kind: 'ok',
    namesCaFile: kubeConfig.getClusters().some(cluster => !!cluster.caFile),
    contexts: await Promise.all(
      kubeConfig.getContexts().map(async context => {
        const cluster = kubeConfig.getCluster(context.cluster);
        return {
          name: context.name,
          cluster: context.cluster,
          server: cluster?.server,
          ca: await caFingerprint(cluster),
        };
      }),
    ),
  };
}

type KubeconfigRead = Awaited<ReturnType<typeof readKubeconfig>>;

/**
 * What discovery read of each kubeconfig file, by path, with the file's identity then (device,
 * inode, size, modification and change times): a file whose identity is unchanged is not read
 * and parsed again. Rewritten in place, replaced by a rename (a new inode), or swapped behind a
 * symlink (a mounted Secret's `..data`), a file has another identity and is read again. A
 * kubeconfig that names a CA file is read each time (its CA's fingerprint is part of what
 * discovery reads), and so is one that could not be read, or changed within the last second.
 */
export type KubeconfigReadCache = Map<
  string,
  { identity: string; read: KubeconfigRead }
>;

/**
 * A file changed this recently may change again within the same tick of its timestamps (same
 * size, same times): what is read of it now is not kept, as git does with "racily clean" files.
 */
const RACY_MS = 1_000;

async function fileIdentity(
  file: string,
): Promise<{ identity: string; recent: boolean } | undefined> {
  try {
    const stat = await fs.stat(file, { bigint: true });
    if (!stat.isFile()) return undefined; // special files are read (and refused) each time
    return {
      identity: [
        stat.dev,
        stat.ino,
        stat.size,
        stat.mtimeNs,
        stat.ctimeNs,
      ].join(':'),
      recent: Date.now() - Number(stat.ctimeMs) < RACY_MS,
    };
  } catch {
    return undefined;
  }
}

/** `readKubeconfig`, or what it gave for the same file identity (see `KubeconfigReadCache`). */
async function readKubeconfigCached(
  item: KubeconfigItem,
  file: boolean,
  cache: KubeconfigReadCache | undefined,
): Promise<KubeconfigRead> {
  if (!cache || !file) return readKubeconfig(item);
  // Identity first, then the read: a file changed in between is read again next time.
  const stat = await fileIdentity(item.ref);
  const cached = cache.get(item.ref);
  if (stat && cached?.identity === stat.identity) return cached.read;
  const read = await readKubeconfig(item);
  // Only what was read whole is kept: a skip may be a passing failure (too many open files).
  if (stat && !stat.recent && read.kind === 'ok' && !read.namesCaFile)
    cache.set(item.ref, { identity: stat.identity, read });
  else cache.delete(item.ref);
  return read;
}

/** A stored cluster, as discovery sees it (`source` and `identityServer` default from it). */
export type KnownCluster = DiscoveredCluster & {
  source?: ClusterSource;
  identityServer?: string;
};

const originOf = (c: { kubeconfigRef: string; context?: string }) =>
  `${c.kubeconfigRef}#${c.context ?? ''}`;

/**
 * Reads every context of every kubeconfig file the sources name, with client-node's KubeConfig.
 * A cluster is an API server: its identity is the server URL and the CA the context trusts (see
 * `database/clusterIdentity.ts`), and its name is only a label for it.
 *
 * - A context whose API server is a stored cluster's is that cluster, under the cluster's name
 *   (its file or context may have moved); when that cluster's own (file, context) is still there,
 *   or the cluster is manual, the context is skipped with a warning: one API server, one cluster.
 * - Any other context is a new cluster named after the context, made DNS-1123-safe. When the
 *   name is a stored cluster's (another API server), it gets `<name>-<short hash of identity>`
 *   and a warning, and the stored cluster keeps its deployments, labels and history; when it is
 *   taken by another context in this cycle, the later one (in file order) gets a stable suffix.
 *
 * So a new file that sorts earlier, a kubeconfig that vanished, or one unreadable for a cycle
 * never hands a cluster's name, and with it its workloads, to another API server. A malformed or
 * unreadable file is skipped with a warning naming it; the names of the clusters stored from it
 * stay taken while it is listed. `known` are the stored clusters.
 */
export async function discoverKubeconfigClusters(
  sources: DiscoverySources,
  known: ReadonlyArray<KnownCluster> = [],
  extra: ReadonlyArray<KubeconfigItem> = [],
  /** Kept by the caller from one discovery to the next: unchanged files are not read again. */
  cache?: KubeconfigReadCache,
): Promise<DiscoveryResult> {
  const warnings: string[] = [];
  const clusters: DiscoveredCluster[] = [];
  const taken = new Map<string, string>(); // cluster name -> "file#context" that took it
  const stored = known.map(c => ({
    ...c,
    source: c.source ?? 'discovered',
    identity: {
      server: c.identityServer ?? normalizeServer(c.endpoint),
      ca: c.identityCa,
    } as ClusterIdentity,
  }));
  const storedByName = new Map(stored.map(c => [c.name, c]));
  // Indexed by server and by origin: a fleet directory holds hundreds of files.
  const byServer = <T extends { identity: ClusterIdentity }>(
    index: Map<string, T[]>,
    item: T,
  ) => {
    const list = index.get(item.identity.server);
    if (list) list.push(item);
    else index.set(item.identity.server, [item]);
  };
  const storedByServer = new Map<string, typeof stored>();
  for (const c of stored) byServer(storedByServer, c);
  const storedByOrigin = new Map<string, typeof stored>();
  for (const c of stored) {
    if (c.source !== 'discovered') continue;
    const list = storedByOrigin.get(originOf(c));
    if (list) list.push(c);
    else storedByOrigin.set(originOf(c), [c]);
  }
  const found = new Map<
    string,
    Array<{ name: string; identity: ClusterIdentity }>
  >();
  const foundTwin = (name: string, identity: ClusterIdentity) =>
    (found.get(identity.server) ?? []).find(
      c => c.name !== name && sameIdentity(c.identity, identity),
    );

  // Files are read and parsed a few at a time (a fleet directory holds hundreds of them), then
  // taken in file order, so names and collision suffixes do not depend on read timing.
  const listed = await listKubeconfigFiles(sources, warnings);
  const items: KubeconfigItem[] = [
    ...listed.map(file => ({
      ref: file,
      label: `kubeconfig file ${file}`,
      read: () => readKubeconfigFile(file),
    })),
    ...extra,
  ];
  const files = items.map(item => item.ref);
  const labels = items.map(item => item.label);
  const limit = pLimit(READ_CONCURRENCY);
  // Files only: a hub Secret or in-cluster config is read each time.
  const loaded = await Promise.all(
    items.map((item, i) =>
      limit(() => readKubeconfigCached(item, i < listed.length, cache)),
    ),
  );
  if (cache) {
    const present = new Set(listed);
    for (const file of cache.keys()) if (!present.has(file)) cache.delete(file);
  }
  // The names of stored clusters still present (same file, context and API server) are theirs
  // before any other takes them; so are those of a file that is listed but unreadable now.
  for (const [i, file] of files.entries()) {
    const result = loaded[i];
    if (result.kind !== 'ok') {
      for (const c of stored) {
        if (c.source === 'discovered' && c.kubeconfigRef === file)
          if (!taken.has(c.name)) taken.set(c.name, originOf(c));
      }
      continue;
    }
    for (const context of result.contexts) {
      if (!context.server) continue;
      const origin = `${file}#${context.name}`;
      const identity = {
        server: normalizeServer(context.server),
        ca: context.ca,
      };
      const own = storedByOrigin
        .get(origin)
        ?.find(c => sameIdentity(c.identity, identity));
      if (own && !taken.has(own.name)) taken.set(own.name, origin);
    }
  }
  for (const [i, file] of files.entries()) {
    const result = loaded[i];
    if (result.kind === 'skip') {
      warnings.push(result.warning);
      continue;
    }
    const contexts = result.contexts;
    if (contexts.length === 0) {
      warnings.push(`Skipping ${labels[i]}: it has no contexts`);
      continue;
    }
    for (const context of contexts) {
      if (!context.server) {
        warnings.push(
          `Skipping context '${context.name}' of ${labels[i]}: its cluster '${context.cluster}' has no server`,
        );
        continue;
      }
      // PostgreSQL text cannot hold NUL, and a context name is at most a DNS subdomain long.
      if (context.name.length > 253 || context.name.includes('\u0000')) {
        warnings.push(
          `Skipping a context of ${labels[i]}: its name is longer than 253 characters or holds a NUL character`,
        );
        continue;
      }
      const origin = `${file}#${context.name}`;
      const identity: ClusterIdentity = {
        server: normalizeServer(context.server),
        ca: context.ca,
      };
      const entry = {
        endpoint: context.server,
        kubeconfigRef: file,
        context: context.name,
        identityCa: context.ca,
      };

      const skip = (why: string) =>
        warnings.push(
          `Skipping context '${context.name}' of ${
            labels[i]
          }: its API server ${describeIdentity(identity)} ${why}`,
        );

      // An API server Fleet knows is that cluster, whatever its context is called now.
      const same = (storedByServer.get(identity.server) ?? []).filter(c =>
        sameIdentity(c.identity, identity),
      );
      const mine =
        same.find(c => c.source === 'discovered' && originOf(c) === origin) ??
        same.find(c => c.identity.ca === identity.ca) ??
        same[0];
      if (mine) {
        const holder = taken.get(mine.name);
        const twin = foundTwin(mine.name, identity);
        if (twin) {
          // Two stored clusters of one API server (stored before identities were): the first
          // found keeps it; the other is left as it is.
          skip(`is cluster '${twin.name}' already`);
        } else if (mine.source !== 'discovered') {
          skip(`is registered manually as cluster '${mine.name}'`);
        } else if (holder !== undefined && holder !== origin) {
          skip(`is cluster '${mine.name}' (${holder})`);
        } else {
          taken.set(mine.name, origin);
          byServer(found, { name: mine.name, identity });
          clusters.push({ name: mine.name, ...entry });
        }
        continue;
      }
      const twin = foundTwin('', identity);
      if (twin) {
        skip(`is cluster '${twin.name}' already`);
        continue;
      }

      // A new API server: named after its context, never after a stored cluster's name.
      let name = sanitizeK8sName(context.name);
      let nameHeldBy: DiscoveredCluster['nameHeldBy'];
      const namesake = storedByName.get(name);
      if (namesake && !taken.has(name)) {
        // The namesake's (file, context) is gone: this is another API server with its name.
        const renamed = withStableSuffix(name, identitySeed(identity));
        const outcome = `it is a new cluster '${renamed}', and '${name}' keeps its deployments, labels and history`;
        warnings.push(
          `Context '${context.name}' of ${
            labels[i]
          } names API server ${describeIdentity(
            identity,
          )}, not ${describeIdentity(
            namesake.identity,
          )} of cluster '${name}'; ${outcome}`,
        );
        // The event is shown to every reader: no file path in it.
        nameHeldBy = {
          name,
          message: `A kubeconfig context named '${
            context.name
          }' names another API server, ${describeIdentity(
            identity,
          )}; ${outcome}`,
        };
        name = renamed;
      }
      const holder = taken.get(name);
      if (holder !== undefined && holder !== origin) {
        const renamed = withStableSuffix(name, origin);
        warnings.push(
          `Context '${context.name}' of ${labels[i]} collides with ${holder} as cluster '${name}'; it is named '${renamed}'`,
        );
        name = renamed;
      }
      taken.set(name, origin);
      byServer(found, { name, identity });
      clusters.push({ name, ...entry, ...(nameHeldBy ? { nameHeldBy } : {}) });
    }
  }
  return { clusters, warnings };
}
