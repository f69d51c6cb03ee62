/*
 * What the objects of a component's manifests make the cluster do to objects that are not the
 * component's. Fleet checks that it writes only the component's own objects; these rules check
 * that those objects, once the cluster's controllers act on them, reach no further: the
 * identity the pods run as, the rights a Role grants and a RoleBinding gives, the workload an
 * autoscaler or an Argo Rollout takes over.
 */
import type { ManifestObject } from './ProjectGuard';
import type { ProjectRules } from './manifestRules';
import { podTemplatesOf } from './podSecurity';
import type { FleetProject } from './projects';

type Loose = Record<string, any>;

/** The objects of the manifests, rendered for a cluster, by `Kind/namespace/name`. */
export type OwnObjects = ReadonlySet<string>;

function key(kind: unknown, namespace: unknown, name: unknown): string {
  return `${String(kind)}/${String(namespace ?? '')}/${String(name)}`;
}

export function ownObjectsOf(objects: readonly ManifestObject[]): OwnObjects {
  return new Set(
    objects.map(o => key(o.kind, o.metadata?.namespace, o.metadata?.name)),
  );
}

function isObject(value: unknown): value is Loose {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** The one ClusterRole a RoleBinding of the manifests may give: Kubernetes' read-only `view`. */
const BINDABLE_CLUSTER_ROLES = new Set(['view']);

/** Verbs that only read. */
const READ_VERBS = new Set(['get', 'list', 'watch']);

/**
 * Resources whose write would make pods Fleet never checks (their pod security, what they read),
 * or hand out identities and rights: a Role of the manifests may only read them.
 */
const GUARDED_RESOURCES = new Set([
  'pods',
  'pods/exec',
  'pods/attach',
  'pods/portforward',
  'pods/ephemeralcontainers',
  'podtemplates',
  'replicationcontrollers',
  'deployments',
  'replicasets',
  'statefulsets',
  'daemonsets',
  'jobs',
  'cronjobs',
  'rollouts',
  'serviceaccounts',
  'serviceaccounts/token',
  'roles',
  'rolebindings',
  'clusterroles',
  'clusterrolebindings',
]);

/** Verbs that grant more than their resource: never in a Role of the manifests. */
const ESCALATING_VERBS = new Set(['escalate', 'bind', 'impersonate']);

/**
 * Why a Role's rules grant more than the component may have: a wildcard, a Secret outside the
 * project's secrets (or every Secret), an escalating verb, or a write (or `pods/exec`) on what
 * makes pods or hands out identities and rights.
 */
function roleRulesRefusal(
  rules: ProjectRules,
  project: FleetProject,
  role: ManifestObject,
  appName: string,
): string | undefined {
  for (const rule of list((role as Loose).rules)) {
    if (!isObject(rule)) continue;
    const verbs = list(rule.verbs).map(String);
    const resources = list(rule.resources).map(String);
    const groups = list(rule.apiGroups).map(String);
    if ([...verbs, ...resources, ...groups].includes('*')) {
      return 'a rule with a wildcard (*) grants what no project bounds: name the verbs, resources and API groups';
    }
    const escalating = verbs.find(v => ESCALATING_VERBS.has(v));
    if (escalating) {
      return `the verb '${escalating}' grants rights beyond the Role's own`;
    }
    if (resources.includes('secrets')) {
      const names = list(rule.resourceNames).map(String);
      if (names.length === 0) {
        return `a rule on secrets without resourceNames reads every Secret of the namespace: name the component's own (project ${
          project.name
        }'s secrets: ${project.secrets.join(', ')})`;
      }
      for (const name of names) {
        const refusal = rules.secretRefusal(project, 'Secret', name, appName);
        if (refusal) return refusal;
      }
    }
    const written = verbs.filter(v => !READ_VERBS.has(v));
    const guarded = resources.find(r => GUARDED_RESOURCES.has(r));
    if (guarded && (written.length > 0 || guarded.includes('/'))) {
      return `a rule lets the component's pods ${
        written.length > 0 ? written.join(', ') : verbs.join(', ')
      } ${guarded}: pods, workloads, identities and rights are Fleet's to apply, checked against the project, not the component's pods'`;
    }
  }
  return undefined;
}

/**
 * Why a RoleBinding gives rights beyond the component: to a subject that is not one of its
 * ServiceAccounts, or a role that is neither one of its Roles nor the read-only `view`.
 */
function roleBindingRefusal(
  binding: ManifestObject,
  own: OwnObjects,
): string | undefined {
  const loose = binding as Loose;
  const namespace = binding.metadata?.namespace;
  for (const subject of list(loose.subjects)) {
    const s = isObject(subject) ? subject : {};
    const ownAccount =
      s.kind === 'ServiceAccount' &&
      (s.namespace === undefined || s.namespace === namespace) &&
      own.has(key('ServiceAccount', namespace, s.name));
    if (!ownAccount) {
      return `subject ${String(s.kind)} '${String(
        s.name,
      )}' is not a ServiceAccount of the component's manifests: a binding gives rights to the component's own ServiceAccounts only`;
    }
  }
  const ref = isObject(loose.roleRef) ? loose.roleRef : {};
  if (ref.kind === 'Role' && own.has(key('Role', namespace, ref.name))) {
    return undefined;
  }
  if (ref.kind === 'ClusterRole' && BINDABLE_CLUSTER_ROLES.has(ref.name)) {
    return undefined;
  }
  return `roleRef ${String(ref.kind)} '${String(
    ref.name,
  )}' is neither a Role of the component's manifests nor the ClusterRole view`;
}

/**
 * Why the project refuses what an object of the manifests makes the cluster do beyond the
 * component: pods that run as a ServiceAccount the manifests do not hold (the namespace's
 * `default` aside), a ServiceAccount token Secret for another account, a Role or RoleBinding
 * that grants more than the component's own (see `roleRulesRefusal`, `roleBindingRefusal`), an
 * autoscaler or an Argo Rollout (`workloadRef`) that takes over a workload the manifests do
 * not hold. Undefined when it may.
 */
export function referencesRefusal(
  rules: ProjectRules,
  project: FleetProject,
  object: ManifestObject,
  own: OwnObjects,
  appName: string,
): string | undefined {
  const namespace = object.metadata?.namespace;
  for (const { spec } of podTemplatesOf(object)) {
    const account = spec.serviceAccountName ?? spec.serviceAccount;
    if (
      account !== undefined &&
      account !== 'default' &&
      !own.has(key('ServiceAccount', namespace, account))
    ) {
      return `pods run as ServiceAccount '${String(
        account,
      )}', which the component's manifests do not hold: pods run as the namespace's default ServiceAccount or one of the manifests`;
    }
  }
  const loose = object as Loose;
  switch (object.kind) {
    case 'Secret': {
      if (loose.type !== 'kubernetes.io/service-account-token') break;
      const account =
        object.metadata && isObject((object.metadata as Loose).annotations)
          ? (object.metadata as Loose).annotations[
              'kubernetes.io/service-account.name'
            ]
          : undefined;
      if (!own.has(key('ServiceAccount', namespace, account))) {
        return `a token Secret for ServiceAccount '${String(
          account,
        )}', which the component's manifests do not hold`;
      }
      break;
    }
    case 'Role':
      return roleRulesRefusal(rules, project, object, appName);
    case 'RoleBinding':
      return roleBindingRefusal(object, own);
    case 'HorizontalPodAutoscaler':
    case 'Rollout': {
      const target = isObject(object.spec)
        ? (object.spec as Loose)[
            object.kind === 'Rollout' ? 'workloadRef' : 'scaleTargetRef'
          ]
        : undefined;
      if (!isObject(target)) break;
      if (!own.has(key(target.kind, namespace, target.name))) {
        return `it takes over ${String(target.kind)} '${String(
          target.name,
        )}', which the component's manifests do not hold`;
      }
      break;
    }
    default:
      break;
  }
  return undefined;
}
