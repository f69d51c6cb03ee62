/*
 * Kinds with their API group. A project names kinds (`Deployment`); another API group may define
 * a kind of the same name (a batch scheduler's `Job`, a cloud controller's `Role`) whose objects
 * do something else entirely, so a kind Kubernetes or Argo Rollouts defines stands for its own
 * group only, and another group's is named with it (`Job.batch.volcano.sh`).
 */

/** The API group of the kinds Kubernetes and Argo Rollouts define that manifests hold. */
const KIND_GROUPS: Readonly<Record<string, string>> = {
  Pod: '',
  PodTemplate: '',
  ReplicationController: '',
  Service: '',
  Endpoints: '',
  ConfigMap: '',
  Secret: '',
  ServiceAccount: '',
  PersistentVolumeClaim: '',
  PersistentVolume: '',
  Namespace: '',
  LimitRange: '',
  ResourceQuota: '',
  Deployment: 'apps',
  StatefulSet: 'apps',
  DaemonSet: 'apps',
  ReplicaSet: 'apps',
  Job: 'batch',
  CronJob: 'batch',
  Role: 'rbac.authorization.k8s.io',
  RoleBinding: 'rbac.authorization.k8s.io',
  ClusterRole: 'rbac.authorization.k8s.io',
  ClusterRoleBinding: 'rbac.authorization.k8s.io',
  Ingress: 'networking.k8s.io',
  IngressClass: 'networking.k8s.io',
  NetworkPolicy: 'networking.k8s.io',
  PodDisruptionBudget: 'policy',
  HorizontalPodAutoscaler: 'autoscaling',
  CustomResourceDefinition: 'apiextensions.k8s.io',
  StorageClass: 'storage.k8s.io',
  PriorityClass: 'scheduling.k8s.io',
  Rollout: 'argoproj.io',
  AnalysisTemplate: 'argoproj.io',
  ClusterAnalysisTemplate: 'argoproj.io',
  VirtualService: 'networking.istio.io',
  DestinationRule: 'networking.istio.io',
  HTTPRoute: 'gateway.networking.k8s.io',
};

/** The group of an `apiVersion` (`apps/v1` → `apps`, `v1` → the core group, ''). */
export function apiGroupOf(apiVersion: unknown): string | undefined {
  if (typeof apiVersion !== 'string' || apiVersion === '') return undefined;
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/**
 * The group of an object or a reference: its `apiVersion`'s, else (no apiVersion: the API
 * server refuses the object, or the reference means the kind's usual group) the group
 * Kubernetes defines the kind in, else ''.
 */
export function groupOf(kind: unknown, apiVersion: unknown): string {
  return apiGroupOf(apiVersion) ?? KIND_GROUPS[String(kind)] ?? '';
}

/**
 * A kind as a project names it: `Deployment` for Kubernetes' own, `Job.batch.volcano.sh` for a
 * kind of that name in another group, and the bare kind for a kind Kubernetes does not define
 * (`Certificate`), which a project may also name with its group.
 */
export function projectKindOf(kind: string, apiVersion: unknown): string {
  return kindName(kind, groupOf(kind, apiVersion));
}

/** A kind of a group as a project names it (see `projectKindOf`). */
export function kindName(kind: string, group: string): string {
  const known = KIND_GROUPS[kind];
  if (known === undefined || known === group) return kind;
  return `${kind}.${group}`;
}

/** Whether a project's list of kinds names this one (as `projectKindOf` does, or with its group). */
export function kindListed(
  kinds: readonly string[],
  kind: string,
  apiVersion: unknown,
): boolean {
  // Bare as a project names it, or with its group (`Role.rbac.authorization.k8s.io`).
  return (
    kinds.includes(projectKindOf(kind, apiVersion)) ||
    kinds.includes(`${kind}.${groupOf(kind, apiVersion)}`)
  );
}
