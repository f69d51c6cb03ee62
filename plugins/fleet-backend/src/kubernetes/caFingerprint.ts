import { createHash } from 'node:crypto';
import { constants as fsConstants, promises as fs } from 'node:fs';
import { NO_CA } from '../database/clusterIdentity';

/** The largest certificate-authority file Fleet reads to fingerprint it. */
const MAX_CA_FILE_BYTES = 1024 * 1024;

/** What a kubeconfig says of its cluster's CA: client-node's `Cluster` fields. */
export interface KubeconfigCa {
  caData?: string;
  caFile?: string;
}

/** The DER bytes of every certificate in a PEM bundle, or the bytes as they are. */
function caBytes(raw: Buffer): Buffer {
  const text = raw.toString('utf8');
  const blocks = [
    ...text.matchAll(
      /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g,
    ),
  ];
  if (blocks.length === 0) return raw;
  return Buffer.concat(
    blocks.map(block => Buffer.from(block[1].replace(/\s+/g, ''), 'base64')),
  );
}

/** `sha256:<hex>` of a CA (its certificates' DER bytes, so PEM line breaks do not matter). */
export function fingerprintCa(raw: Buffer): string {
  return `sha256:${createHash('sha256').update(caBytes(raw)).digest('hex')}`;
}

async function readCaFile(file: string): Promise<Buffer | undefined> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(file, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
    const info = await handle.stat();
    if (!info.isFile() || info.size > MAX_CA_FILE_BYTES) return undefined;
    const buffer = Buffer.alloc(info.size);
    const { bytesRead } = await handle.read(buffer, 0, info.size, 0);
    return buffer.subarray(0, bytesRead);
  } catch {
    return undefined;
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/**
 * The fingerprint of the CA a kubeconfig's cluster trusts: `certificate-authority-data`, else
 * the `certificate-authority` file (read, bounded); `none` when it names neither; undefined
 * when the file cannot be read.
 */
export async function caFingerprint(
  cluster: KubeconfigCa | undefined | null,
): Promise<string | undefined> {
  if (cluster?.caData)
    return fingerprintCa(Buffer.from(cluster.caData, 'base64'));
  if (cluster?.caFile) {
    const raw = await readCaFile(cluster.caFile);
    return raw ? fingerprintCa(raw) : undefined;
  }
  return NO_CA;
}
