import { KubeConfig } from '@kubernetes/client-node';
import { promises as fs, type Stats } from 'node:fs';
import path from 'node:path';

/** The largest kubeconfig file Fleet reads. */
export const MAX_KUBECONFIG_BYTES = 16 * 1024 * 1024;

export type KubeconfigFileRead =
  | { kind: 'ok'; kubeConfig: KubeConfig }
  | { kind: 'skipped'; reason: string };

/**
 * Reads and parses one kubeconfig file without blocking the event loop, as client-node's
 * `loadFromFile` would (relative certificate paths made absolute). Only a regular file of at most
 * MAX_KUBECONFIG_BYTES is read: a FIFO would block the read forever and /dev/zero would never end
 * (both reachable through a symlink). `stat` saves a second stat when the caller has one. A
 * file that does not parse throws, with the parser's message.
 */
export async function readKubeconfigFile(
  file: string,
  stat?: Stats,
): Promise<KubeconfigFileRead> {
  const info = stat ?? (await fs.stat(file));
  if (!info.isFile()) return { kind: 'skipped', reason: 'not a regular file' };
  if (info.size > MAX_KUBECONFIG_BYTES) {
    return {
      kind: 'skipped',
      reason: `larger than ${MAX_KUBECONFIG_BYTES} bytes`,
    };
  }
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(await fs.readFile(file, 'utf8'));
  kubeConfig.makePathsAbsolute(path.dirname(file));
  return { kind: 'ok', kubeConfig };
}

/**
 * The first line of a parse error, without the excerpt of the file that YAML parsers append
 * (which could quote a token or a key): what may be logged or answered about a kubeconfig.
 */
export function parseErrorSummary(error: unknown): string {
  const e = error as { reason?: unknown; message?: unknown };
  const text =
    typeof e?.reason === 'string' ? e.reason : String(e?.message ?? error);
  return text.split('\n')[0].slice(0, 200);
}
