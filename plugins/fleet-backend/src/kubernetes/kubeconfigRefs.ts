import { KubeConfig, type V1Secret } from '@kubernetes/client-node';
import {
  MAX_KUBECONFIG_BYTES,
  parseErrorSummary,
} from '@cnp/plugin-fleet-node';
import { checkUntrustedKubeconfig } from './untrustedKubeconfig';

/** The `kubeconfigRef` of the cluster the backend runs in, reached with in-cluster config. */
export const IN_CLUSTER_REF = 'in-cluster';

/** The key of a kubeconfig Secret read when the reference names none. */
export const DEFAULT_SECRET_KEY = 'kubeconfig';

/** A kubeconfig held in a Secret of the hub cluster: `secret:<namespace>/<name>[#key]`. */
export interface SecretRef {
  namespace: string;
  name: string;
  key: string;
}

const SECRET_REF =
  /^secret:([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)(?:#([-._a-zA-Z0-9]+))?$/;

/** True when the reference is meant as a Secret reference (well formed or not). */
export function isSecretRef(ref: string): boolean {
  return ref.startsWith('secret:');
}

/**
 * Parses `secret:<namespace>/<name>[#key]` (namespace a DNS-1123 label, name a DNS-1123
 * subdomain, key a Secret key; default key `kubeconfig`); undefined when it is not one.
 */
export function parseSecretRef(ref: string): SecretRef | undefined {
  const m = SECRET_REF.exec(ref);
  if (!m || m[1].length > 63 || m[3].length > 253) return undefined;
  return { namespace: m[1], name: m[3], key: m[5] ?? DEFAULT_SECRET_KEY };
}

export function formatSecretRef(ref: SecretRef): string {
  return `secret:${ref.namespace}/${ref.name}${
    ref.key === DEFAULT_SECRET_KEY ? '' : `#${ref.key}`
  }`;
}

/** How a Secret reference is named in reasons and logs: the Secret, never its contents. */
export function describeSecretRef(ref: SecretRef): string {
  return `kubeconfig Secret '${ref.namespace}/${ref.name}' (key '${ref.key}')`;
}

/** A parsed kubeconfig, or what is wrong with the Secret's value (to follow the Secret's name). */
export type SecretKubeconfig =
  | { kind: 'ok'; kubeConfig: KubeConfig }
  | { kind: 'unusable'; problem: string };

/**
 * Parses the kubeconfig a Secret holds under `ref.key`: checked first (see
 * `untrustedKubeconfig.ts`: no file paths, no exec or auth-provider, in any entry), then read by
 * client-node. A missing key, an oversized value, a refused field or a kubeconfig that does not
 * parse is a problem that quotes nothing of the value (a parse error keeps its first line only,
 * which never carries the parser's excerpt of the text).
 */
export function kubeconfigFromSecret(
  secret: V1Secret,
  ref: SecretRef,
): SecretKubeconfig {
  const encoded = secret.data?.[ref.key];
  if (encoded === undefined) {
    return { kind: 'unusable', problem: 'has no such key' };
  }
  const bytes = Buffer.from(encoded, 'base64');
  if (bytes.length > MAX_KUBECONFIG_BYTES) {
    return {
      kind: 'unusable',
      problem: `is larger than ${MAX_KUBECONFIG_BYTES} bytes`,
    };
  }
  // Checked before client-node sees it: its parse alone would read a `token-file`.
  const checked = checkUntrustedKubeconfig(bytes.toString('utf8'));
  if (checked.kind === 'refused') {
    return { kind: 'unusable', problem: checked.problem };
  }
  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromString(checked.text);
  } catch (error) {
    return {
      kind: 'unusable',
      problem: `is not a valid kubeconfig: ${parseErrorSummary(error)}`,
    };
  }
  if (kubeConfig.getContexts().length === 0) {
    return {
      kind: 'unusable',
      problem: 'is not a valid kubeconfig: it has no contexts',
    };
  }
  return { kind: 'ok', kubeConfig };
}
