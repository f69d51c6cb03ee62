import { KubeConfig } from '@kubernetes/client-node';
import { constants as fsConstants, promises as fs, type Stats } from 'node:fs';
import path from 'node:path';

/**
 * The largest kubeconfig file Fleet reads.
 *
 * @public
 */
export const MAX_KUBECONFIG_BYTES = 16 * 1024 * 1024;

/** @public */
export type KubeconfigFileRead =
  | { kind: 'ok'; kubeConfig: KubeConfig }
  | { kind: 'skipped'; reason: string };

/**
 * Reads and parses one kubeconfig file without blocking the event loop, as client-node's
 * `loadFromFile` would (relative certificate paths made absolute). The file is opened once,
 * without following a symlink and without blocking (a FIFO would block an open forever), and
 * everything after that goes through that descriptor: its `fstat` must say a regular file of at
 * most MAX_KUBECONFIG_BYTES, and the read stops there whatever the file grows to. With `checked`
 * (the stat a caller made when it decided the path may be read), the opened file must be that
 * same file (device and inode): a file swapped in between the check and the open (for
 * /dev/zero, a FIFO or a file outside the allowed directories) is refused, not read. A file
 * that does not parse throws, with the parser's message.
 *
 * @public
 */
export async function readKubeconfigFile(
  file: string,
  checked?: Stats,
): Promise<KubeconfigFileRead> {
  let handle: fs.FileHandle;
  try {
    // A checked path is a real path: a symlink there now is a swap. Discovery reads the
    // directory's entries as they are (a mounted Secret's files are symlinks).
    handle = await fs.open(
      file,
      fsConstants.O_RDONLY |
        fsConstants.O_NONBLOCK |
        (checked ? fsConstants.O_NOFOLLOW : 0),
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') {
      return { kind: 'skipped', reason: 'a symlink where a file was checked' };
    }
    throw error;
  }
  let text: string;
  try {
    const info = await handle.stat();
    if (!info.isFile())
      return { kind: 'skipped', reason: 'not a regular file' };
    if (checked && (info.dev !== checked.dev || info.ino !== checked.ino)) {
      return {
        kind: 'skipped',
        reason: 'not the file that was checked (it changed in between)',
      };
    }
    if (info.size > MAX_KUBECONFIG_BYTES) {
      return {
        kind: 'skipped',
        reason: `larger than ${MAX_KUBECONFIG_BYTES} bytes`,
      };
    }
    const bytes = await readAtMost(handle, info.size, MAX_KUBECONFIG_BYTES);
    if (!bytes) {
      return {
        kind: 'skipped',
        reason: `larger than ${MAX_KUBECONFIG_BYTES} bytes`,
      };
    }
    text = bytes.toString('utf8');
  } finally {
    await handle.close();
  }
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(text);
  kubeConfig.makePathsAbsolute(path.dirname(file));
  return { kind: 'ok', kubeConfig };
}

/** What `readAtMost` reads through: an open file's `read` (a `FileHandle` has it). */
export interface ReadableHandle {
  read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
  ): Promise<{ bytesRead: number }>;
}

/**
 * Reads a whole file through `handle`, or undefined when it holds more than `max` bytes. The
 * buffer is sized by `size` (the file's fstat), one byte more to see that it grew, and grows only
 * when the file did, never past `max + 1`: a kubeconfig of a few KiB holds a few KiB while it is
 * read, not the bound (reading into a buffer of the bound held 16 MiB per file read, outside the
 * JS heap, until a GC freed it).
 */
export async function readAtMost(
  handle: ReadableHandle,
  size: number,
  max: number,
): Promise<Buffer | undefined> {
  let buffer = Buffer.allocUnsafe(Math.min(Math.max(size, 0), max) + 1);
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length > max) return undefined;
      // The file grew since its fstat: double the buffer, up to the bound (and one byte over).
      const grown = Buffer.allocUnsafe(
        Math.min(Math.max(buffer.length * 2, 4096), max + 1),
      );
      buffer.copy(grown, 0, 0, length);
      buffer = grown;
    }
    const { bytesRead } = await handle.read(
      buffer,
      length,
      buffer.length - length,
      length,
    );
    if (bytesRead === 0) break;
    length += bytesRead;
  }
  if (length > max) return undefined;
  return buffer.subarray(0, length);
}

/**
 * The first line of a parse error, without the excerpt of the file that YAML parsers append
 * (which could quote a token or a key): what may be logged or answered about a kubeconfig.
 *
 * @public
 */
export function parseErrorSummary(error: unknown): string {
  const e = error as { reason?: unknown; message?: unknown };
  const text =
    typeof e?.reason === 'string' ? e.reason : String(e?.message ?? error);
  return text.split('\n')[0].slice(0, 200);
}
