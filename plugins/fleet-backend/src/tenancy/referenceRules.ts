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
import {
  isObject,
  key,
  list,
  nonEmpty,
  type Loose,
  type OwnObjects,
  type Target,
} from './ownObjects';
import { podTemplatesOf } from './podSecurity';
import type { FleetProject } from './projects';
import { bindingRefusal, roleRulesRefusal } from './rbacRules';
import { rolloutTargets, routingRefusal } from './rolloutRules';

export { ownObjectsOf, type OwnObjects } from './ownObjects';

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
