import type { ManifestObject, ProjectGuard } from './ProjectGuard';
import { expand, hostRefusal } from './patterns';
import { podSecurityProblem, podTemplatesOf } from './podSecurity';
import type { FleetProject } from './projects';
import { kindListed, projectKindOf } from './kinds';
import { ownObjectsOf, referencesRefusal } from './referenceRules';

/** The ConfigMap of the cluster's CA certificates that every namespace holds. */
const ROOT_CA_CONFIG_MAP = 'kube-root-ca.crt';

/** The parts of an Ingress's spec the project rules look at. */
interface IngressRules {
  defaultBackend?: unknown;
  rules?: Array<{ host?: unknown } | null>;
  tls?: Array<{ hosts?: unknown; secretName?: unknown } | null>;
}

type Loose = Record<string, any> | undefined;

/** What the rules on a component's own objects ask of the project guard. */
export type ProjectRules = Pick<
  ProjectGuard,
  'namespaceRefusal' | 'secretRefusal' | 'isForbiddenNamespace'
>;

/**
 * Why the project refuses a component's own manifests, rendered for a cluster (namespaced
 * objects carry their namespace, cluster-scoped ones none): a kind its `kinds.deny` names or
 * its `kinds.allow` does not (a cluster-scoped kind only when allowed by name), a namespace
 * outside it, a Namespace it does not name exactly, a Secret named outside its secrets, pods
 * that read a Secret or ConfigMap named outside them (see `podReferencesRefusal`), a pod
 * template below the project's Pod Security Standards level (see `podSecurityRefusal`), an
 * object that reaches beyond the component's own (see `referencesRefusal`), a Service with
 * external IPs, or an Ingress for a host outside its ingress hosts (see `ingressRefusal`).
 * Undefined when it may.
 */
export function objectsRefusal(
  rules: ProjectRules,
  project: FleetProject,
  objects: readonly ManifestObject[],
  appName: string,
): string | undefined {
  const own = ownObjectsOf(objects);
  for (const object of objects) {
    const kind = object.kind ?? '';
    const name = object.metadata?.name ?? '';
    const namespace = object.metadata?.namespace;
    const what = `${kind} '${name}'`;
    const named = projectKindOf(kind, object.apiVersion);
    if (
      project.kinds.deny.includes(kind) ||
      kindListed(project.kinds.deny, kind, object.apiVersion)
    ) {
      return `${what}: kind ${named} is denied in project ${project.name}`;
    }
    if (!kindListed(project.kinds.allow, kind, object.apiVersion)) {
      return `${what}: kind ${named}${
        namespace === undefined ? ' (cluster-scoped)' : ''
      } is not allowed in project ${
        project.name
      } (its kinds: ${project.kinds.allow.join(', ')})`;
    }
    // Another group's kind of a known name (`Job.batch.volcano.sh`) gets no rule of Kubernetes'
    // own kind below: the project allowed it by that name.
    const builtIn = named === kind;
    if (namespace !== undefined) {
      const refusal = rules.namespaceRefusal(project, namespace, appName);
      if (refusal) return `${what}: ${refusal}`;
    }
    if (builtIn && kind === 'Namespace') {
      const refusal = namespaceObjectRefusal(rules, project, name, appName);
      if (refusal) return `${what}: ${refusal}`;
    }
    if (builtIn && kind === 'Secret') {
      const refusal = rules.secretRefusal(project, 'Secret', name, appName);
      if (refusal) return refusal;
    }
    const podRefusal = podReferencesRefusal(rules, project, object, appName);
    if (podRefusal) return `${what}: ${podRefusal}`;
    const securityRefusal = podSecurityRefusal(project, object);
    if (securityRefusal) return `${what}${securityRefusal}`;
    const reach = referencesRefusal(rules, project, object, own, appName);
    if (reach) return `${what}: ${reach}`;
    if (builtIn && kind === 'Service') {
      const refusal = externalIpsRefusal(object.spec);
      if (refusal) return `${what}: ${refusal}`;
    }
    if (builtIn && kind === 'Ingress') {
      const refusal = ingressRefusal(
        rules,
        project,
        (object.spec ?? {}) as IngressRules,
        appName,
      );
      if (refusal) return `${what}: ${refusal}`;
    }
  }
  return undefined;
}

/**
 * Why the project refuses an Ingress of a component's own manifests: each rule and each TLS
 * entry names only hosts of the project (no wildcard), its certificate Secret is among the
 * project's secrets, and nothing answers for every host (a rule without a host, a default
 * backend).
 */
function ingressRefusal(
  rules: ProjectRules,
  project: FleetProject,
  spec: IngressRules,
  appName: string,
): string | undefined {
  if (spec.defaultBackend !== undefined) {
    return 'a default backend answers for every host: name the hosts in rules';
  }
  for (const rule of spec.rules ?? []) {
    if (typeof rule?.host !== 'string' || rule.host === '') {
      return 'a rule names no host, and would answer for every host';
    }
    const refusal = hostRefusal(project, rule.host);
    if (refusal) return refusal;
  }
  for (const tls of spec.tls ?? []) {
    const hosts: unknown[] = Array.isArray(tls?.hosts) ? tls!.hosts : [];
    for (const host of hosts) {
      const refusal = hostRefusal(project, String(host));
      if (refusal) return refusal;
    }
    if (tls?.secretName !== undefined) {
      const refusal = rules.secretRefusal(
        project,
        'TLS Secret',
        String(tls.secretName),
        appName,
      );
      if (refusal) return refusal;
    }
  }
  return undefined;
}

/**
 * Why the project refuses a Namespace of a component's manifests: as for a namespace Fleet
 * creates, only one the project names exactly (not through a pattern) and no system one. The
 * component owns it then, and removing the component deletes it with all it holds.
 */
function namespaceObjectRefusal(
  rules: ProjectRules,
  project: FleetProject,
  name: string,
  appName: string,
): string | undefined {
  if (rules.isForbiddenNamespace(name)) {
    return `namespace '${name}' is a system namespace Fleet does not deploy to`;
  }
  if (
    project.namespaces.some(
      p => !p.includes('*') && expand(p, appName) === name,
    )
  ) {
    return undefined;
  }
  return `project ${
    project.name
  } names no namespace '${name}' exactly, and a Namespace of the manifests must be one it names so (its namespaces: ${project.namespaces.join(
    ', ',
  )})`;
}

/**
 * Why the project refuses what the pods of an object read: a Secret or ConfigMap named outside
 * its secrets by a container's `env` or `envFrom`, or by a volume (also a projected one). The
 * pod spec is found where the built-in kinds and most custom ones keep it: a Pod's `spec`, a
 * PodTemplate's `template.spec`, `spec.template.spec`, and a CronJob's job template.
 */
function podReferencesRefusal(
  rules: ProjectRules,
  project: FleetProject,
  object: ManifestObject,
  appName: string,
): string | undefined {
  for (const [what, name] of podReferencesOf(object)) {
    // The cluster's public CA bundle, which Kubernetes puts in every namespace.
    if (what === 'ConfigMap' && name === ROOT_CA_CONFIG_MAP) continue;
    const refusal = rules.secretRefusal(project, what, name, appName);
    if (refusal) return refusal;
  }
  return undefined;
}

/** The pod specs of an object (see `podTemplatesOf`). */
function podSpecsOf(object: ManifestObject): Loose[] {
  return podTemplatesOf(object).map(template => template.spec);
}

/**
 * Why the project refuses the pods of an object for how they run: the first rule of the Pod
 * Security Standards level it holds them to (`podSecurity`, see `podSecurityProblem`) that a pod
 * template breaks, as `` container 'app': privileged containers are not allowed by project
 * default's pod security (baseline)`` (to follow the object's kind and name), or undefined.
 * Fleet applies them with its own credentials, on nodes other teams' pods share: a privileged
 * container, a host namespace or a hostPath volume would be root on the node.
 */
function podSecurityRefusal(
  project: FleetProject,
  object: ManifestObject,
): string | undefined {
  const problem = podSecurityProblem(object, project.podSecurity);
  if (!problem) return undefined;
  return `${problem.container ? ` ${problem.container}` : ''}: ${
    problem.rule
  } by project ${project.name}'s pod security (${project.podSecurity})`;
}

/** The Secrets and ConfigMaps the pods of an object read, as `[what, name]`. */
function podReferencesOf(object: ManifestObject): Array<[string, string]> {
  const found: Array<[string, string]> = [];
  const add = (what: 'Secret' | 'ConfigMap', name: unknown) => {
    if (typeof name === 'string') found.push([what, name]);
  };
  const list = (value: unknown): Loose[] =>
    Array.isArray(value) ? (value as Loose[]) : [];
  for (const pod of podSpecsOf(object)) {
    for (const container of [
      ...list(pod?.containers),
      ...list(pod?.initContainers),
      ...list(pod?.ephemeralContainers),
    ]) {
      for (const env of list(container?.env)) {
        add('Secret', env?.valueFrom?.secretKeyRef?.name);
        add('ConfigMap', env?.valueFrom?.configMapKeyRef?.name);
      }
      for (const from of list(container?.envFrom)) {
        add('Secret', from?.secretRef?.name);
        add('ConfigMap', from?.configMapRef?.name);
      }
    }
    for (const volume of list(pod?.volumes)) {
      add('Secret', volume?.secret?.secretName);
      add('ConfigMap', volume?.configMap?.name);
      for (const source of list(volume?.projected?.sources)) {
        add('Secret', source?.secret?.name);
        add('ConfigMap', source?.configMap?.name);
      }
    }
  }
  return found;
}

/**
 * Why a Service of a component's manifests may not be applied: external IPs make every node
 * route the traffic of the whole cluster for those addresses to its pods (CVE-2020-8554), a
 * reach no project rule bounds.
 */
function externalIpsRefusal(spec: unknown): string | undefined {
  const ips = (spec as { externalIPs?: unknown } | undefined)?.externalIPs;
  if (!Array.isArray(ips) || ips.length === 0) return undefined;
  return `external IPs (${ips.join(
    ', ',
  )}) would take the traffic for those addresses of every pod of the cluster: Fleet applies no Service with spec.externalIPs`;
}
