/** Writes the kubeconfig of one simulated cluster (YAML, mode 0600). */
import { chmod, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';

export interface KubeconfigInput {
  name: string;
  server: string;
  caPem: string;
  token: string;
}

export function kubeconfigDocument(input: KubeconfigInput) {
  const user = `${input.name}-admin`;
  return {
    apiVersion: 'v1',
    kind: 'Config',
    preferences: {},
    clusters: [
      {
        name: input.name,
        cluster: {
          server: input.server,
          'certificate-authority-data': Buffer.from(
            input.caPem,
            'utf8',
          ).toString('base64'),
        },
      },
    ],
    users: [{ name: user, user: { token: input.token } }],
    contexts: [{ name: input.name, context: { cluster: input.name, user } }],
    'current-context': input.name,
  };
}

/** Writes `<dir>/<name>.yaml` atomically with mode 0600; returns its path. */
export async function writeKubeconfig(
  dir: string,
  input: KubeconfigInput,
): Promise<string> {
  const path = join(dir, `${input.name}.yaml`);
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, stringify(kubeconfigDocument(input)), { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, path);
  return path;
}
