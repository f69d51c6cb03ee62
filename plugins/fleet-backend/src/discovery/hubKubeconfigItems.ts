import type { HubCluster } from '../kubernetes/HubCluster';
import { inClusterKubeConfig } from '../kubernetes/ClusterClients';
import {
  DEFAULT_SECRET_KEY,
  describeSecretRef,
  formatSecretRef,
  IN_CLUSTER_REF,
  kubeconfigFromSecret,
} from '../kubernetes/kubeconfigRefs';
import { parseErrorSummary } from '@cnp/plugin-fleet-node';
import type { KubeconfigItem } from './discoverKubeconfigClusters';

/** The keys a discovered kubeconfig Secret is read from, in order (`value`: Cluster API's). */
const SECRET_KEYS = [DEFAULT_SECRET_KEY, 'value'];

export interface HubDiscoveryOptions {
  hub?: HubCluster;
  /** Registers the cluster the backend runs in under this name (in-cluster config only). */
  inClusterName?: string;
  /** Secrets on the hub with these labels hold kubeconfigs (e.g. `cnp.io/kubeconfig=true`). */
  secretSelector?: string;
  /** Where they are listed (default: every namespace). */
  secretNamespace?: string;
}

/**
 * The kubeconfigs discovery reads from the hub cluster besides files: in-cluster config (the
 * cluster the backend runs in, under its configured name) and every Secret with the configured
 * labels, each read from its `kubeconfig` key (else `value`). The clusters they name store
 * `in-cluster` or `secret:<namespace>/<name>[#key]` as their kubeconfigRef, never the contents.
 */
export async function hubKubeconfigItems(
  options: HubDiscoveryOptions,
): Promise<{ items: KubeconfigItem[]; warnings: string[] }> {
  const { hub } = options;
  const items: KubeconfigItem[] = [];
  const warnings: string[] = [];
  if (hub?.inCluster && options.inClusterName) {
    const name = options.inClusterName;
    items.push({
      ref: IN_CLUSTER_REF,
      label: 'in-cluster config',
      read: async () => ({
        kind: 'ok',
        kubeConfig: await inClusterKubeConfig(hub, name),
      }),
    });
  }
  if (!options.secretSelector) return { items, warnings };
  if (!hub) {
    warnings.push(
      `Skipping kubeconfig Secrets (fleet.discovery.secretSelector '${options.secretSelector}'): no hub cluster is configured (fleet.hub.kubeconfigPath, or in-cluster config when the backend runs in a pod)`,
    );
    return { items, warnings };
  }
  let secrets;
  try {
    secrets = await hub.listSecrets(
      options.secretSelector,
      options.secretNamespace,
    );
  } catch (error) {
    warnings.push(
      `Skipping kubeconfig Secrets with labels '${
        options.secretSelector
      }': listing them on ${hub.describe()} failed: ${parseErrorSummary(
        error,
      )}`,
    );
    return { items, warnings };
  }
  const sorted = secrets
    .filter(s => s.metadata?.namespace && s.metadata?.name)
    .sort((a, b) =>
      `${a.metadata!.namespace}/${a.metadata!.name}`.localeCompare(
        `${b.metadata!.namespace}/${b.metadata!.name}`,
      ),
    );
  for (const secret of sorted) {
    const namespace = secret.metadata!.namespace!;
    const name = secret.metadata!.name!;
    const key = SECRET_KEYS.find(k => secret.data?.[k] !== undefined);
    if (!key) {
      warnings.push(
        `Skipping kubeconfig Secret '${namespace}/${name}': it has no key ${SECRET_KEYS.map(
          k => `'${k}'`,
        ).join(' or ')}`,
      );
      continue;
    }
    const ref = { namespace, name, key };
    items.push({
      ref: formatSecretRef(ref),
      label: describeSecretRef(ref),
      read: async () => {
        const loaded = kubeconfigFromSecret(secret, ref);
        return loaded.kind === 'ok'
          ? loaded
          : { kind: 'skipped', reason: loaded.problem };
      },
    });
  }
  return { items, warnings };
}
