import { isKubeStatus } from '../../kubernetes/requestOptions';
import { FIELD_MANAGER } from '../../kubernetes/serverSideApply';
import { serviceNameFor } from '../../deploy/manifests';
import {
  describeObject,
  isSteerableBy,
  OWNERSHIP_CONFLICT,
  ownershipConflict,
  OwnershipConflictError,
} from '../../deploy/ownership';
import { baselineWeight } from './baselineObjects';
import {
  baselineServiceName,
  canaryServiceName,
  entityRefOf,
  type CanaryTarget,
  type Session,
  type StepOutcome,
} from './canaryObjects';

export const HTTP_ROUTES = {
  group: 'gateway.networking.k8s.io',
  version: 'v1',
  plural: 'httproutes',
};

/**
 * Whether a backendRef names the Service `name` in the route's namespace. Gateway API's
 * defaults: no `group` is the core group, no `kind` a Service, no `namespace` the route's own.
 */
function namesService(ref: any, name: string, namespace: string): boolean {
  return (
    (ref?.group ?? '') === '' &&
    (ref?.kind ?? 'Service') === 'Service' &&
    (ref?.namespace ?? namespace) === namespace &&
    ref?.name === name
  );
}

/**
 * The indexes of the route's rules Fleet splits: those whose backendRefs name the application's
 * Service. Such a rule that also sends to anything but it, the canary's and the baseline's
 * Service is someone else's traffic as well: an ownership conflict, and the route is left as it
 * is.
 */
export function steeredRules(route: any, target: CanaryTarget): number[] {
  const { namespace } = target;
  const stable = serviceNameFor(target.name);
  const canary = canaryServiceName(target);
  const baseline = baselineServiceName(target);
  const rules: any[] = route.spec?.rules ?? [];
  const chosen: number[] = [];
  rules.forEach((rule, index) => {
    const refs: any[] = rule.backendRefs ?? [];
    if (!refs.some(ref => namesService(ref, stable, namespace))) return;
    const other = refs.find(
      ref =>
        !namesService(ref, stable, namespace) &&
        !namesService(ref, canary, namespace) &&
        !namesService(ref, baseline, namespace),
    );
    if (other) {
      const what = describeObject('HTTPRoute', namespace, route.metadata.name);
      throw new OwnershipConflictError(
        'HTTPRoute',
        namespace,
        route.metadata.name,
        `${OWNERSHIP_CONFLICT}: ${what} rule ${index} sends to ${
          other.kind ?? 'Service'
        } ${
          other.name
        } besides the application's Service ${stable}; Fleet splits only rules whose backends are ${stable} and its canary ${canary}. It was left untouched.`,
      );
    }
    chosen.push(index);
  });
  return chosen;
}

/**
 * Reads the HTTPRoute Fleet steers, in the application's namespace: Fleet's own for the
 * component or annotated for it by its owner, and no rule sending to the application's
 * Service shared with another backend. Undefined when there is none.
 */
export async function readSteerableHTTPRoute(
  s: Session,
  target: CanaryTarget,
): Promise<any | undefined> {
  const name = target.gatewayAPI!.httpRoute;
  let route: any;
  try {
    route = await s.custom.getNamespacedCustomObject(
      { ...HTTP_ROUTES, namespace: target.namespace, name },
      s.opts(),
    );
  } catch (error) {
    if (isKubeStatus(error, 404)) return undefined;
    throw error;
  }
  const entityRef = entityRefOf(target);
  if (!isSteerableBy(route, entityRef)) {
    throw ownershipConflict(
      'HTTPRoute',
      target.namespace,
      name,
      route,
      entityRef,
      'steered',
    );
  }
  steeredRules(route, target);
  return route;
}

/**
 * A rule's backendRefs for a weight: the application's Service exactly as written (port,
 * filters) at what is left, the canary's Service like it at `weight` (none at weight 0), and,
 * for a canary judged against a baseline, the baseline's Service like it at `baseline`.
 */
export function backendRefsFor(
  rule: any,
  target: CanaryTarget,
  weight: number,
  baseline = 0,
): any[] {
  const stable = (rule.backendRefs as any[]).find(ref =>
    namesService(ref, serviceNameFor(target.name), target.namespace),
  );
  const { weight: _written, ...as } = stable;
  return [
    { ...as, weight: 100 - weight - baseline },
    ...(weight > 0 ? [{ ...as, name: canaryServiceName(target), weight }] : []),
    ...(baseline > 0
      ? [{ ...as, name: baselineServiceName(target), weight: baseline }]
      : []),
  ];
}

/**
 * Splits the rules of the strategy's HTTPRoute that send to the application's Service between
 * it and the canary's (and the baseline's, at the canary's share, when `baseline`); other rules
 * stay as they are.
 */
export async function setBackendWeights(
  s: Session,
  target: CanaryTarget,
  weight: number,
  options: { baseline?: boolean } = {},
): Promise<StepOutcome> {
  const baseline = options.baseline ? baselineWeight(weight) : 0;
  const name = target.gatewayAPI!.httpRoute;
  const what = describeObject('HTTPRoute', target.namespace, name);
  const route = await readSteerableHTTPRoute(s, target);
  if (!route) return { kind: 'failed', message: `${what} not found` };
  const chosen = steeredRules(route, target);
  if (chosen.length === 0) {
    return {
      kind: 'failed',
      message: `${what} has no rule sending to Service ${serviceNameFor(
        target.name,
      )}`,
    };
  }
  let changed = false;
  for (const index of chosen) {
    const rule = route.spec.rules[index];
    const next = backendRefsFor(rule, target, weight, baseline);
    if (JSON.stringify(rule.backendRefs) !== JSON.stringify(next)) {
      rule.backendRefs = next;
      changed = true;
    }
  }
  if (changed) {
    // As for a VirtualService: the body keeps the resourceVersion read (a change meanwhile is a
    // 409, not an overwrite), and it is an update as field manager `fleet`, not an apply that
    // would take the owner's rules over.
    await s.custom.replaceNamespacedCustomObject(
      {
        ...HTTP_ROUTES,
        namespace: target.namespace,
        name,
        body: route,
        fieldManager: FIELD_MANAGER,
      },
      s.opts(),
    );
  }
  return {
    kind: 'reached',
    message: `weight ${weight}%: HTTPRoute ${name} backends ${
      100 - weight - baseline
    }/${weight}${baseline ? `/${baseline} (stable/canary/baseline)` : ''}`,
  };
}
