import { promises as fs } from 'node:fs';
import path from 'node:path';
import pLimit from 'p-limit';
import type { DiscoveredCluster } from '../database/types';
import {
  sanitizeK8sName,
  withStableSuffix,
} from '../kubernetes/sanitizeK8sName';
import {
  parseErrorSummary,
  readKubeconfigFile,
} from '../kubernetes/readKubeconfigFile';
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
}

/** Reads one kubeconfig file's contexts, or says why it is skipped. */
async function readKubeconfig(
  file: string,
): Promise<
  { kind: 'ok'; contexts: ContextSummary[] } | { kind: 'skip'; warning: string }
> {
  let read;
  try {
    read = await readKubeconfigFile(file);
  } catch (error) {
    return {
      kind: 'skip',
      // Never the parser's whole message: it quotes lines of the file, tokens included.
      warning: `Skipping kubeconfig file ${file}: ${parseErrorSummary(error)}`,
    };
  }
  if (read.kind === 'skipped') {
    return {
      kind: 'skip',
      warning: `Skipping kubeconfig file ${file}: ${read.reason}`,
    };
  }
  const kubeConfig = read.kubeConfig;
  return {
    kind: 'ok',
    contexts: kubeConfig.getContexts().map(context => ({
      name: context.name,
      cluster: context.cluster,
      server: kubeConfig.getCluster(context.cluster)?.server,
    })),
  };
}

/**
 * Reads every context of every kubeconfig file the sources name, with client-node's KubeConfig.
 * Each context is a cluster named after the context, made DNS-1123-safe; when two contexts get
 * the same name, the later one (in file order) gets a stable suffix and a warning. A malformed or
 * unreadable file is skipped with a warning naming it; the others are still read.
 *
 * `known` are the clusters discovered before: a (file, context) found again keeps its name, so a
 * new file that sorts earlier never takes the name, and with it the deployments and history, of
 * a cluster that is still there. A name whose (file, context) is gone is free again.
 */
export async function discoverKubeconfigClusters(
  sources: DiscoverySources,
  known: ReadonlyArray<DiscoveredCluster> = [],
): Promise<DiscoveryResult> {
  const warnings: string[] = [];
  const clusters: DiscoveredCluster[] = [];
  const taken = new Map<string, string>(); // cluster name -> "file#context" that took it
  const knownName = new Map(
    known.map(c => [`${c.kubeconfigRef}#${c.context ?? ''}`, c.name]),
  );

  // Files are read and parsed a few at a time (a fleet directory holds hundreds of them), then
  // taken in file order, so names and collision suffixes do not depend on read timing.
  const files = await listKubeconfigFiles(sources, warnings);
  const limit = pLimit(READ_CONCURRENCY);
  const loaded = await Promise.all(
    files.map(file => limit(() => readKubeconfig(file))),
  );
  // The names of known (file, context)s still present are theirs before any other takes them.
  for (const [i, file] of files.entries()) {
    const result = loaded[i];
    if (result.kind !== 'ok') continue;
    for (const context of result.contexts) {
      const origin = `${file}#${context.name}`;
      const name = knownName.get(origin);
      if (name !== undefined && context.server && !taken.has(name))
        taken.set(name, origin);
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
      warnings.push(`Skipping kubeconfig file ${file}: it has no contexts`);
      continue;
    }
    for (const context of contexts) {
      if (!context.server) {
        warnings.push(
          `Skipping context '${context.name}' of kubeconfig file ${file}: its cluster '${context.cluster}' has no server`,
        );
        continue;
      }
      // PostgreSQL text cannot hold NUL, and a context name is at most a DNS subdomain long.
      if (context.name.length > 253 || context.name.includes('\u0000')) {
        warnings.push(
          `Skipping a context of kubeconfig file ${file}: its name is longer than 253 characters or holds a NUL character`,
        );
        continue;
      }
      const origin = `${file}#${context.name}`;
      const kept = knownName.get(origin);
      let name =
        kept !== undefined && taken.get(kept) === origin
          ? kept
          : sanitizeK8sName(context.name);
      const holder = taken.get(name);
      if (holder !== undefined && holder !== origin) {
        const renamed = withStableSuffix(name, origin);
        warnings.push(
          `Context '${context.name}' of kubeconfig file ${file} collides with ${holder} as cluster '${name}'; it is named '${renamed}'`,
        );
        name = renamed;
      }
      taken.set(name, origin);
      clusters.push({
        name,
        endpoint: context.server,
        kubeconfigRef: file,
        context: context.name,
      });
    }
  }
  return { clusters, warnings };
}
