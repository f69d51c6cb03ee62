/*
 * What the objects of a component's manifests make the cluster do to objects that are not the
 * component's. Fleet checks that it writes only the component's own objects; these rules check
 * that those objects, once the cluster's controllers act on them, reach no further: the
 * identity the pods run as, the rights a Role grants and a binding gives, the Secrets an Argo
 * analysis reads, the workload, Services and routes an autoscaler or an Argo Rollout takes over.
 */
import type { ManifestObject } from './ProjectGuard';
import type { ProjectRules } from './manifestRules';
import { groupOf, kindName, projectKindOf } from './kinds';
import { podTemplatesOf } from './podSecurity';
import type { FleetProject } from './projects';

type Loose = Record<string, any>;

/** An object a reference names: its group, kind and name. */
type Target = [group: string, kind: string, name: unknown];

/** The objects of the manifests, rendered for a cluster, by `group/Kind/namespace/name`. */
export type OwnObjects = ReadonlySet<string>;

/** An object's or a reference's key: the group decides which kind it is. */
function key(
  group: string,
  kind: unknown,
  namespace: unknown,
  name: unknown,
): string {
  return `${group}/${String(kind)}/${String(namespace ?? '')}/${String(name)}`;
}

export function ownObjectsOf(objects: readonly ManifestObject[]): OwnObjects {
  return new Set(
    objects.map(o =>
      key(
        groupOf(o.kind, o.apiVersion),
        o.kind,
        o.metadata?.namespace,
        o.metadata?.name,
      ),
    ),
  );
}

function isObject(value: unknown): value is Loose {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A name as Kubernetes reads it: an empty string is no name. */
function nonEmpty(value: unknown): unknown {
  return value === '' || value === null ? undefined : value;
}

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
function roleRulesRefusal(
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
function bindingRefusal(
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

/** The Secrets an Argo AnalysisTemplate's arguments read (the controller reads them). */
function analysisSecretRefusal(
  rules: ProjectRules,
  project: FleetProject,
  template: ManifestObject,
  appName: string,
): string | undefined {
  const spec = isObject(template.spec) ? template.spec : {};
  for (const arg of list(spec.args)) {
    const name = isObject(arg) ? arg.valueFrom?.secretKeyRef?.name : undefined;
    if (name === undefined) continue;
    const refusal = rules.secretRefusal(
      project,
      'Secret',
      String(name),
      appName,
    );
    if (refusal) return `argument '${String((arg as Loose).name)}': ${refusal}`;
  }
  return undefined;
}

/**
 * What a Rollout's `trafficRouting` may hold: the routers whose targets are checked, and Argo's
 * own settings for any of them.
 */
const CHECKED_ROUTERS = new Set([
  'istio',
  'nginx',
  'alb',
  'smi',
  'plugins',
  'managedRoutes',
  'maxTrafficWeight',
]);

/** The Gateway API plugin's route kinds, by the fields that name them. */
const GATEWAY_ROUTES: Readonly<Record<string, string>> = {
  httpRoute: 'HTTPRoute',
  httpRoutes: 'HTTPRoute',
  grpcRoute: 'GRPCRoute',
  grpcRoutes: 'GRPCRoute',
  tcpRoute: 'TCPRoute',
  tcpRoutes: 'TCPRoute',
  tlsRoute: 'TLSRoute',
  tlsRoutes: 'TLSRoute',
};

/** Why a Rollout's traffic routing reaches what Fleet cannot check, or undefined. */
function routingRefusal(
  routing: Loose,
  namespace: unknown,
): string | undefined {
  const router = Object.keys(routing).find(
    k => !CHECKED_ROUTERS.has(k) && routing[k] !== undefined,
  );
  if (router) {
    return `traffic routing by ${router} is not one Fleet checks (istio, nginx, alb, smi, the Gateway API plugin): what it steers could be another component's`;
  }
  const plugins = isObject(routing.plugins) ? routing.plugins : {};
  const plugin = Object.keys(plugins).find(
    k => k !== 'argoproj-labs/gatewayAPI',
  );
  if (plugin) {
    return `traffic routing by the plugin ${plugin} is not one Fleet checks`;
  }
  const gateway = plugins['argoproj-labs/gatewayAPI'];
  if (isObject(gateway)) {
    if (
      nonEmpty(gateway.namespace) !== undefined &&
      gateway.namespace !== namespace
    ) {
      return `the Gateway API plugin steers routes of namespace '${String(
        gateway.namespace,
      )}', not the Rollout's`;
    }
    const unknown = Object.keys(gateway).find(
      k =>
        !(k in GATEWAY_ROUTES) &&
        !['namespace', 'configMap', 'useHeaderRoutes'].includes(k),
    );
    if (unknown) {
      return `the Gateway API plugin's ${unknown} is not a field Fleet checks`;
    }
  }
  const istio = isObject(routing.istio) ? routing.istio : {};
  for (const vs of [istio.virtualService, ...list(istio.virtualServices)]) {
    // Argo reads `name.namespace` as a VirtualService of that namespace.
    if (isObject(vs) && String(vs.name ?? '').includes('.')) {
      return `VirtualService '${String(
        vs.name,
      )}' names another namespace: a Rollout steers its own namespace's routes only`;
    }
  }
  return undefined;
}

/** What an Argo Rollout takes over, by group, kind and name: its workload, Services, routes. */
function rolloutTargets(spec: Loose): Target[] {
  const targets: Target[] = [];
  const ref = spec.workloadRef;
  if (isObject(ref)) {
    targets.push([
      groupOf(ref.kind, ref.apiVersion),
      String(ref.kind),
      ref.name,
    ]);
  }
  const canary = isObject(spec.strategy?.canary) ? spec.strategy.canary : {};
  const blueGreen = isObject(spec.strategy?.blueGreen)
    ? spec.strategy.blueGreen
    : {};
  const routing = isObject(canary.trafficRouting) ? canary.trafficRouting : {};
  const services = [
    canary.stableService,
    canary.canaryService,
    canary.pingPong?.pingService,
    canary.pingPong?.pongService,
    blueGreen.activeService,
    blueGreen.previewService,
    routing.alb?.rootService,
    routing.smi?.rootService,
  ];
  for (const name of services) targets.push(['', 'Service', name]);
  const ingresses = [
    routing.nginx?.stableIngress,
    ...list(routing.nginx?.stableIngresses),
    routing.alb?.ingress,
    ...list(routing.alb?.ingresses),
  ];
  for (const name of ingresses) {
    targets.push(['networking.k8s.io', 'Ingress', name]);
  }
  targets.push([
    'split.smi-spec.io',
    'TrafficSplit',
    routing.smi?.trafficSplitName,
  ]);
  const istio = isObject(routing.istio) ? routing.istio : {};
  for (const vs of [istio.virtualService, ...list(istio.virtualServices)]) {
    if (isObject(vs)) {
      targets.push(['networking.istio.io', 'VirtualService', vs.name]);
    }
  }
  if (isObject(istio.destinationRule)) {
    targets.push([
      'networking.istio.io',
      'DestinationRule',
      istio.destinationRule.name,
    ]);
  }
  const gateway = isObject(routing.plugins)
    ? routing.plugins['argoproj-labs/gatewayAPI']
    : undefined;
  if (isObject(gateway)) {
    for (const [field, kind] of Object.entries(GATEWAY_ROUTES)) {
      const names = field.endsWith('s')
        ? list(gateway[field]).map(r => (isObject(r) ? r.name : r))
        : [gateway[field]];
      for (const name of names) {
        targets.push(['gateway.networking.k8s.io', kind, name]);
      }
    }
    targets.push(['', 'ConfigMap', gateway.configMap]);
  }
  return targets.filter(([, , name]) => nonEmpty(name) !== undefined);
}

/**
 * Why the project refuses what an object of the manifests makes the cluster do beyond the
 * component: pods that run as a ServiceAccount the manifests do not hold (the namespace's
 * `default` aside), a ServiceAccount token Secret for another account, a role or binding that
 * grants more than the component's own (see `roleRulesRefusal`, `bindingRefusal`), an Argo
 * analysis argument read from a Secret outside the project, an autoscaler or an Argo Rollout
 * that takes over a workload, a Service or a route the manifests do not hold. Undefined when it
 * may.
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
    const account =
      nonEmpty(spec.serviceAccountName) ?? nonEmpty(spec.serviceAccount);
    if (
      account !== undefined &&
      account !== 'default' &&
      !own.has(key('', 'ServiceAccount', namespace, account))
    ) {
      return `pods run as ServiceAccount '${String(
        account,
      )}', which the component's manifests do not hold: pods run as the namespace's default ServiceAccount or one of the manifests`;
    }
  }
  // Another group's kind of a known name (`Role.iam.services.k8s.aws`) is not that kind.
  if (
    projectKindOf(String(object.kind ?? ''), object.apiVersion) !== object.kind
  ) {
    return undefined;
  }
  const loose = object as Loose;
  const spec = isObject(object.spec) ? (object.spec as Loose) : {};
  const takenOver = (targets: Target[]) => {
    const [group, kind, name] =
      targets.find(([g, k, n]) => !own.has(key(g, k, namespace, n))) ?? [];
    return kind === undefined
      ? undefined
      : `it takes over ${kindName(kind, group!)} '${String(
          name,
        )}', which the component's manifests do not hold`;
  };
  switch (object.kind) {
    case 'Secret': {
      if (loose.type !== 'kubernetes.io/service-account-token') break;
      const annotations = isObject(loose.metadata?.annotations)
        ? loose.metadata.annotations
        : {};
      const account = annotations['kubernetes.io/service-account.name'];
      if (!own.has(key('', 'ServiceAccount', namespace, account))) {
        return `a token Secret for ServiceAccount '${String(
          account,
        )}', which the component's manifests do not hold`;
      }
      break;
    }
    case 'Role':
    case 'ClusterRole':
      return roleRulesRefusal(rules, project, object, appName);
    case 'RoleBinding':
    case 'ClusterRoleBinding':
      return bindingRefusal(object, own);
    case 'AnalysisTemplate':
    case 'ClusterAnalysisTemplate':
      return analysisSecretRefusal(rules, project, object, appName);
    case 'HorizontalPodAutoscaler':
      if (isObject(spec.scaleTargetRef)) {
        const target = spec.scaleTargetRef;
        return takenOver([
          [
            groupOf(target.kind, target.apiVersion),
            String(target.kind),
            target.name,
          ],
        ]);
      }
      break;
    case 'Rollout': {
      const routing = spec.strategy?.canary?.trafficRouting;
      return (
        (isObject(routing) ? routingRefusal(routing, namespace) : undefined) ??
        takenOver(rolloutTargets(spec))
      );
    }
    default:
      break;
  }
  return undefined;
}
