/*
 * The RBAC of a component's manifests: what a Role or a ClusterRole may grant and what a binding
 * may give, so that the component's pods get no more than the project lets the component do.
 */
import type { ManifestObject } from './ProjectGuard';
import type { ProjectRules } from './manifestRules';
import {
  isObject,
  key,
  list,
  nonEmpty,
  type Loose,
  type OwnObjects,
} from './ownObjects';
import type { FleetProject } from './projects';

const RBAC = 'rbac.authorization.k8s.io';

/** Verbs that only read. */
const READ_VERBS = new Set(['get', 'list', 'watch']);

/** Resources a Role of the manifests may write without naming them: coordination, events. */
const FREE_WRITE_RESOURCES: Readonly<Record<string, readonly string[]>> = {
  leases: ['coordination.k8s.io'],
  events: ['', 'events.k8s.io'],
};

/** Resources a Role of the manifests may touch only by name, among the project's `secrets`. */
const NAMED_RESOURCES: Record<string, string> = {
  secrets: 'Secret',
  configmaps: 'ConfigMap',
};

/** Subresources a Role of the manifests may read (never write). */
const READABLE_SUBRESOURCES = new Set(['log', 'status', 'scale']);

/** Verbs that grant more than their resource: never in a role of the manifests. */
const ESCALATING_VERBS = new Set(['escalate', 'bind', 'impersonate']);

/**
 * What a ClusterRole of the manifests may not even read: it applies in every namespace once
 * bound cluster-wide, and these hold Secrets' and ConfigMaps' data, or pods' specs with their
 * environment values, of every team (or the nodes').
 */
const CLUSTER_UNREADABLE = new Set([
  'secrets',
  'configmaps',
  'pods',
  'podtemplates',
  'replicationcontrollers',
  'deployments',
  'replicasets',
  'statefulsets',
  'daemonsets',
  'jobs',
  'cronjobs',
  'rollouts',
  'controllerrevisions',
  'analysistemplates',
  'clusteranalysistemplates',
  'analysisruns',
  'experiments',
  'nodes',
]);

/** The label that adds a ClusterRole's rules to another (`aggregate-to-view`, ...). */
const AGGREGATE_LABEL_PREFIX = 'rbac.authorization.k8s.io/aggregate-to-';

/**
 * Why a Role's (or a ClusterRole's) rules grant more than the component may have: a wildcard
 * (`*`, alone or in a resource: every resource's `exec`), an escalating verb, an endpoint outside the API's resources, a Secret or a
 * ConfigMap not named or named outside the project's secrets, a subresource other than a read
 * of `log`, `status` or `scale`, or a write of anything but leases and events. What the
 * component's pods could write otherwise (pods, workloads, Services, Ingresses, autoscalers, Argo
 * analyses, RBAC) would reach other components and escape the project's rules.
 */
export function roleRulesRefusal(
  rules: ProjectRules,
  project: FleetProject,
  role: ManifestObject,
  appName: string,
): string | undefined {
  const loose = role as Loose;
  if (role.kind === 'ClusterRole') {
    const labels = isObject(loose.metadata?.labels)
      ? loose.metadata.labels
      : {};
    const aggregate = Object.keys(labels).find(l =>
      l.startsWith(AGGREGATE_LABEL_PREFIX),
    );
    if (aggregate || loose.aggregationRule !== undefined) {
      return `an aggregated ClusterRole (${
        aggregate ?? 'aggregationRule'
      }) adds rules to roles other subjects hold`;
    }
  }
  for (const rule of list(loose.rules)) {
    if (!isObject(rule)) continue;
    const verbs = list(rule.verbs).map(String);
    const resources = list(rule.resources).map(String);
    const groups = list(rule.apiGroups).map(String);
    if ([...verbs, ...resources, ...groups].some(v => v.includes('*'))) {
      return 'a rule with a wildcard (*) grants what no project bounds: name the verbs, resources and API groups';
    }
    if (list(rule.nonResourceURLs).length > 0) {
      return "a rule on nonResourceURLs reaches the API server's own endpoints";
    }
    const escalating = verbs.find(v => ESCALATING_VERBS.has(v));
    if (escalating) {
      return `the verb '${escalating}' grants rights beyond the role's own`;
    }
    const writes = verbs.filter(v => !READ_VERBS.has(v));
    if (role.kind === 'ClusterRole') {
      const refusal = clusterRuleRefusal(resources, verbs, writes);
      if (refusal) return refusal;
      continue;
    }
    for (const resource of resources) {
      const [base, sub] = resource.split('/');
      if (sub !== undefined) {
        if (!READABLE_SUBRESOURCES.has(sub) || writes.length > 0) {
          return `a rule lets the component's pods ${verbs.join(
            ', ',
          )} ${resource}: a role of the manifests may only read the log, status and scale of what it reads`;
        }
        continue;
      }
      const named = NAMED_RESOURCES[base];
      if (named) {
        const names = list(rule.resourceNames).map(String);
        if (names.length === 0) {
          return `a rule on ${base} without resourceNames reaches every ${named} of the namespace: name the component's own (project ${
            project.name
          }'s secrets: ${project.secrets.join(', ')})`;
        }
        for (const name of names) {
          const refusal = rules.secretRefusal(project, named, name, appName);
          if (refusal) return refusal;
        }
        continue;
      }
      // Of their own groups only: another group's `leases` is another resource.
      const free = FREE_WRITE_RESOURCES[base];
      const freeWrite = !!free && groups.every(g => free.includes(g));
      if (writes.length > 0 && !freeWrite) {
        return `a rule lets the component's pods ${writes.join(
          ', ',
        )} ${resource}: a role of the manifests may write only leases, events, and the project's Secrets and ConfigMaps by name (what its pods would make otherwise meets none of the project's rules)`;
      }
    }
  }
  return undefined;
}

/**
 * Why a ClusterRole's rule reaches other teams: it applies in every namespace (a
 * ClusterRoleBinding) or in any namespace a RoleBinding names, so it may only read, never a
 * subresource, and not what holds Secrets, ConfigMaps, pods' specs or nodes.
 */
function clusterRuleRefusal(
  resources: string[],
  verbs: string[],
  writes: string[],
): string | undefined {
  if (writes.length > 0) {
    return `a rule lets the component's pods ${writes.join(
      ', ',
    )} ${resources.join(
      ', ',
    )}: a ClusterRole applies in every namespace, and one of the manifests may only read`;
  }
  const reached = resources.find(
    r => r.includes('/') || CLUSTER_UNREADABLE.has(r),
  );
  if (reached) {
    return `a rule lets the component's pods ${verbs.join(
      ', ',
    )} ${reached} in every namespace: other teams' Secrets, ConfigMaps, pods and nodes stay out of a ClusterRole of the manifests`;
  }
  return undefined;
}

/**
 * Why a RoleBinding (or a ClusterRoleBinding) gives rights beyond the component: to a subject
 * that is not one of its ServiceAccounts, or a role that is not one of its own.
 */
export function bindingRefusal(
  binding: ManifestObject,
  own: OwnObjects,
): string | undefined {
  const loose = binding as Loose;
  const cluster = binding.kind === 'ClusterRoleBinding';
  const namespace = binding.metadata?.namespace;
  for (const subject of list(loose.subjects)) {
    const s = isObject(subject) ? subject : {};
    const at = cluster
      ? nonEmpty(s.namespace)
      : nonEmpty(s.namespace) ?? namespace;
    if (
      s.kind !== 'ServiceAccount' ||
      !own.has(key('', 'ServiceAccount', at, s.name))
    ) {
      return `subject ${String(s.kind)} '${String(s.name)}'${
        s.kind === 'ServiceAccount' ? ` of namespace '${String(at ?? '')}'` : ''
      } is not a ServiceAccount of the component's manifests: a binding gives rights to the component's own ServiceAccounts only`;
    }
  }
  const ref = isObject(loose.roleRef) ? loose.roleRef : {};
  const ownRole =
    ref.apiGroup === RBAC &&
    ((ref.kind === 'Role' &&
      !cluster &&
      own.has(key(RBAC, 'Role', namespace, ref.name))) ||
      (ref.kind === 'ClusterRole' &&
        own.has(key(RBAC, 'ClusterRole', undefined, ref.name))));
  if (ownRole) return undefined;
  return `roleRef ${String(ref.kind)} '${String(
    ref.name,
  )}' is not a role of the component's manifests (a ClusterRole such as view, edit or admin reads other components' ConfigMaps and pods, or more)`;
}
