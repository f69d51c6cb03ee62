import type { KubernetesObject } from '@kubernetes/client-node';

/**
 * The order Fleet installs kinds in (Helm's): what others need first, namespaces and
 * accounts before the workloads that run in and as them, a workload before what points at it.
 * Any other kind (a custom resource) comes after all of these.
 */
export const INSTALL_ORDER: readonly string[] = [
  'Namespace',
  'NetworkPolicy',
  'ResourceQuota',
  'LimitRange',
  'PodDisruptionBudget',
  'ServiceAccount',
  'Secret',
  'ConfigMap',
  'StorageClass',
  'PersistentVolume',
  'PersistentVolumeClaim',
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
  'Service',
  'DaemonSet',
  'Pod',
  'ReplicationController',
  'ReplicaSet',
  'Deployment',
  'HorizontalPodAutoscaler',
  'StatefulSet',
  'Job',
  'CronJob',
  'IngressClass',
  'Ingress',
  'APIService',
];

const RANKS = new Map(INSTALL_ORDER.map((kind, rank) => [kind, rank]));

/** The place of `kind` in `INSTALL_ORDER`; every other kind shares the place after the last. */
export function kindRank(kind: string | undefined): number {
  return RANKS.get(kind ?? '') ?? INSTALL_ORDER.length;
}

/** The objects in install order; objects of one rank keep their order. */
export function dependencyOrder<T extends KubernetesObject>(
  objects: readonly T[],
): T[] {
  return objects
    .map((object, index) => ({ object, index, rank: kindRank(object.kind) }))
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .map(entry => entry.object);
}

/** Runs of neighbours of one rank, in their order: what may be written at once. */
export function rankGroups<T>(
  items: readonly T[],
  kindOf: (item: T) => string | undefined,
): T[][] {
  const groups: T[][] = [];
  let rank: number | undefined;
  for (const item of items) {
    const next = kindRank(kindOf(item));
    if (next !== rank) groups.push([]);
    rank = next;
    groups[groups.length - 1].push(item);
  }
  return groups;
}
