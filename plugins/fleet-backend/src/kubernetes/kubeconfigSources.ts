import { KubeConfig } from '@kubernetes/client-node';
import {
  KubeconfigAccessPolicy,
  parseErrorSummary,
  readKubeconfigFile,
} from '@cnp/plugin-fleet-node';
import type { HubCluster, HubSecretRead } from './HubCluster';
import {
  describeSecretRef,
  IN_CLUSTER_REF,
  isSecretRef,
  kubeconfigFromSecret,
  parseSecretRef,
} from './kubeconfigRefs';
import { matchesSelector, parseLabelSelector } from './labelSelector';
import type { ClusterAccess, SecretRules } from './ClusterClients';

/**
 * How long a kubeconfig Secret read from the hub serves deploys and reconciles; a probe always
 * reads it again, so a rotated or deleted Secret shows at the next health cycle.
 */
const SECRET_READ_TTL_MS = 5_000;

/** Where a cluster's kubeconfig comes from, once found: how to load it, and a key of its version. */
export type KubeconfigSource =
  | { kind: 'unusable'; reason: string }
  | {
      kind: 'source';
      /** Changes when the kubeconfig may have changed (file stat, Secret resourceVersion). */
      version: string;
      /** How reasons name it: the file or the Secret, never its contents. */
      label: string;
      /** Held where others can write it (a Secret): it may not run programs on this host. */
      untrusted: boolean;
      load: () => Promise<
        | { kind: 'ok'; kubeConfig: KubeConfig }
        | { kind: 'unusable'; reason: string }
      >;
    };

/**
 * client-node's in-cluster config (service account token file and CA), with its context named
 * `contextName`: the cluster the backend runs in, as Fleet registers it.
 */
export async function inClusterKubeConfig(
  hub: HubCluster,
  contextName: string,
): Promise<KubeConfig> {
  const base = await hub.kubeConfig();
  const context = base.getContextObject(base.getCurrentContext())!;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: base.clusters,
    users: base.users,
    contexts: [{ ...context, name: contextName }],
    currentContext: contextName,
  });
  return kc;
}

/**
 * Where a cluster's kubeconfig is, and how to load it: a file inside the allowed directories
 * (through the access policy), a Secret of the hub cluster, or the hub's in-cluster config.
 */
export class KubeconfigSources {
  /** Secret reads from the hub, shared for a few seconds (see SECRET_READ_TTL_MS). */
  private readonly secretReads = new Map<
    string,
    { at: number; read: Promise<HubSecretRead> }
  >();
  private readonly policy: KubeconfigAccessPolicy;
  private readonly hub: HubCluster | undefined;
  private readonly secretRules: SecretRules;

  constructor(options: {
    policy: KubeconfigAccessPolicy;
    hub?: HubCluster;
    secretRules: SecretRules;
  }) {
    this.policy = options.policy;
    this.hub = options.hub;
    this.secretRules = options.secretRules;
  }

  /**
   * Where a reference's kubeconfig is: a file inside the allowed directories, a Secret of the
   * hub cluster (`secret:<namespace>/<name>[#key]`), or in-cluster config (`in-cluster`).
   * With `fresh`, a Secret is read again rather than taken from a read of the last seconds.
   */
  async sourceFor(
    cluster: Pick<ClusterAccess, 'kubeconfigRef' | 'context'>,
    fresh: boolean,
  ): Promise<KubeconfigSource> {
    const ref = cluster.kubeconfigRef;
    if (ref === IN_CLUSTER_REF) return this.inClusterSource(cluster);
    if (isSecretRef(ref)) return this.secretSource(ref, fresh);
    const resolved = await this.policy.resolve(ref);
    if (resolved.kind === 'unusable') return resolved;
    const label = `kubeconfig file '${ref}'`;
    return {
      kind: 'source',
      // The policy's stat of the real path: the file is statted once per call.
      version: `${resolved.path}|${resolved.stat.mtimeMs}|${resolved.stat.size}`,
      label,
      untrusted: false,
      load: async () => {
        try {
          const read = await readKubeconfigFile(resolved.path, resolved.stat);
          if (read.kind === 'skipped') {
            return { kind: 'unusable', reason: `${label} is ${read.reason}` };
          }
          return read;
        } catch (error) {
          return {
            kind: 'unusable',
            reason: `${label} is malformed: ${parseErrorSummary(error)}`,
          };
        }
      },
    };
  }

  private async secretSource(
    ref: string,
    fresh: boolean,
  ): Promise<KubeconfigSource> {
    const parsed = parseSecretRef(ref);
    if (!parsed) {
      return {
        kind: 'unusable',
        reason: `kubeconfigRef '${ref}' is not a Secret reference Fleet can read: expected secret:<namespace>/<name>[#key]`,
      };
    }
    const label = describeSecretRef(parsed);
    const { selector, namespace } = this.secretRules;
    const labels = selector ? parseLabelSelector(selector) : undefined;
    if (!selector || !labels) {
      return {
        kind: 'unusable',
        reason: `${label} is not read: Fleet reads kubeconfig Secrets only with the labels of fleet.discovery.secretSelector, and none is configured`,
      };
    }
    if (namespace && parsed.namespace !== namespace) {
      return {
        kind: 'unusable',
        reason: `${label} is not read: kubeconfig Secrets are read only in namespace '${namespace}' (fleet.discovery.secretNamespace)`,
      };
    }
    if (!this.hub) {
      return {
        kind: 'unusable',
        reason: `${label} cannot be read: no hub cluster is configured (fleet.hub.kubeconfigPath, or in-cluster config when the backend runs in a pod)`,
      };
    }
    const id = `${parsed.namespace}/${parsed.name}`;
    let cached = this.secretReads.get(id);
    if (fresh || !cached || Date.now() - cached.at > SECRET_READ_TTL_MS) {
      cached = {
        at: Date.now(),
        read: this.hub.readSecret(parsed.namespace, parsed.name),
      };
      this.secretReads.set(id, cached);
    }
    const read = await cached.read;
    if (read.kind === 'not-found') {
      return {
        kind: 'unusable',
        reason: `${label} was not found on the hub cluster`,
      };
    }
    if (read.kind === 'failed') {
      return {
        kind: 'unusable',
        reason: `${label} could not be read from the hub cluster: ${read.reason}`,
      };
    }
    const meta = read.secret.metadata;
    if (!matchesSelector(meta?.labels ?? {}, labels)) {
      return {
        kind: 'unusable',
        reason: `${label} is not used: it does not carry the labels '${selector}' (fleet.discovery.secretSelector) that mark a Secret as a kubeconfig for Fleet`,
      };
    }
    return {
      kind: 'source',
      version: `${ref}|${meta?.uid ?? ''}|${meta?.resourceVersion ?? ''}`,
      label,
      untrusted: true,
      load: async () => {
        const loaded = kubeconfigFromSecret(read.secret, parsed);
        return loaded.kind === 'ok'
          ? loaded
          : { kind: 'unusable', reason: `${label} ${loaded.problem}` };
      },
    };
  }

  private async inClusterSource(
    cluster: Pick<ClusterAccess, 'context'>,
  ): Promise<KubeconfigSource> {
    const hub = this.hub;
    if (!hub?.inCluster) {
      return {
        kind: 'unusable',
        reason:
          'in-cluster config is not in use: the backend does not run in a pod (KUBERNETES_SERVICE_HOST), or fleet.hub says otherwise',
      };
    }
    return {
      kind: 'source',
      version: IN_CLUSTER_REF,
      label: 'in-cluster config',
      untrusted: false,
      load: async () => {
        try {
          return {
            kind: 'ok',
            kubeConfig: await inClusterKubeConfig(
              hub,
              cluster.context ?? IN_CLUSTER_REF,
            ),
          };
        } catch (error) {
          return {
            kind: 'unusable',
            reason: `in-cluster config is not usable: ${parseErrorSummary(
              error,
            )}`,
          };
        }
      },
    };
  }
}
