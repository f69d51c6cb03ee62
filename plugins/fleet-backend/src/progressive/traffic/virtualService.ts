import { isKubeStatus } from '../../kubernetes/requestOptions';
import { FIELD_MANAGER } from '../../kubernetes/serverSideApply';
import { serviceNameFor } from '../../deploy/manifests';
import { isSteerableBy, ownershipConflict } from '../../deploy/ownership';
import { baselineWeight } from './baselineObjects';
import {
  baselineServiceName,
  canaryServiceName,
  entityRefOf,
  ISTIO_GROUP,
  type CanaryTarget,
  type Session,
  type StepOutcome,
} from './canaryObjects';

export const VIRTUAL_SERVICES = {
  group: ISTIO_GROUP,
  version: 'v1beta1',
  plural: 'virtualservices',
};

/** Reads the VirtualService Fleet steers; its owner must have annotated it for this component. */
export async function readSteerableVirtualService(
  s: Session,
  target: CanaryTarget,
): Promise<any | undefined> {
  const name = target.istio!.virtualService;
  let vs: any;
  try {
    vs = await s.custom.getNamespacedCustomObject(
      { ...VIRTUAL_SERVICES, namespace: target.namespace, name },
      s.opts(),
    );
  } catch (error) {
    if (isKubeStatus(error, 404)) return undefined;
    throw error;
  }
  const entityRef = entityRefOf(target);
  if (!isSteerableBy(vs, entityRef)) {
    throw ownershipConflict(
      'VirtualService',
      target.namespace,
      name,
      vs,
      entityRef,
      'steered',
    );
  }
  return vs;
}

/**
 * The host of the canary's Service, in the form the user wrote the stable one: `payments`,
 * `payments.shop`, `payments.shop.svc.cluster.local` give `payments-canary` with the same tail.
 */
export function canaryHostLike(stableHost: string, target: CanaryTarget) {
  const service = serviceNameFor(target.name);
  const canary = canaryServiceName(target);
  if (stableHost.startsWith(`${service}.`))
    return `${canary}${stableHost.slice(service.length)}`;
  return canary;
}

/** The host of the baseline's Service, in the form the user wrote the stable one. */
function baselineHostLike(stableHost: string, target: CanaryTarget) {
  const service = serviceNameFor(target.name);
  const baseline = baselineServiceName(target);
  if (stableHost.startsWith(`${service}.`))
    return `${baseline}${stableHost.slice(service.length)}`;
  return baseline;
}

/** Whether a destination's host names the canary's Service, or the baseline's (any form). */
function isCanaryHost(host: unknown, target: CanaryTarget) {
  return [canaryServiceName(target), baselineServiceName(target)].some(
    name =>
      typeof host === 'string' &&
      (host === name || host.startsWith(`${name}.`)),
  );
}

/**
 * The route's destinations for a weight: the user's stable destination exactly as written
 * (host form, subset, port), and the canary's Service in the same host form and port without
 * the subset: the canary's Service selects the canary's pods alone, and a subset only the
 * stable host's DestinationRule defines would make Envoy answer 503. `keepCanary` keeps the
 * canary's destination at weight 0 (Argo Rollouts needs it there to steer). A `baseline` share
 * adds the baseline's Service as a third destination, taken from the stable's share.
 */
export function routeFor(
  route: any,
  target: CanaryTarget,
  weight: number,
  keepCanary = false,
  baseline = 0,
): any[] {
  const stable = (route.route ?? []).find(
    (r: any) => !isCanaryHost(r.destination?.host, target),
  )?.destination ?? { host: serviceNameFor(target.name) };
  const canary = {
    host: canaryHostLike(String(stable.host), target),
    ...(stable.port ? { port: stable.port } : {}),
  };
  const third = {
    host: baselineHostLike(String(stable.host), target),
    ...(stable.port ? { port: stable.port } : {}),
  };
  return [
    { destination: stable, weight: 100 - weight - baseline },
    ...(weight > 0 || keepCanary ? [{ destination: canary, weight }] : []),
    ...(baseline > 0 ? [{ destination: third, weight: baseline }] : []),
  ];
}

/** Splits the named routes of the strategy's VirtualService between stable and canary. */
export async function setRouteWeights(
  s: Session,
  target: CanaryTarget,
  weight: number,
  options: { keepCanary?: boolean; baseline?: boolean } = {},
): Promise<StepOutcome> {
  const baseline = options.baseline ? baselineWeight(weight) : 0;
  const vsName = target.istio!.virtualService;
  const vs = await readSteerableVirtualService(s, target);
  if (!vs) {
    return {
      kind: 'failed',
      message: `VirtualService ${target.namespace}/${vsName} not found`,
    };
  }
  const wanted = target.istio!.routes;
  const http: any[] = vs.spec?.http ?? [];
  const chosen = http.filter(
    route => !wanted?.length || wanted.includes(route.name),
  );
  if (chosen.length === 0) {
    return {
      kind: 'failed',
      message: `VirtualService ${
        target.namespace
      }/${vsName} has no route named ${wanted?.join(', ')}`,
    };
  }
  let changed = false;
  for (const route of chosen) {
    const next = routeFor(route, target, weight, options.keepCanary, baseline);
    if (JSON.stringify(route.route) !== JSON.stringify(next)) {
      route.route = next;
      changed = true;
    }
  }
  if (changed) {
    // The body keeps the resourceVersion read: a change meanwhile makes this a 409, not an
    // overwrite. The VirtualService is its owner's (Fleet only steers its weights): an update
    // as field manager `fleet`, not an apply that would take its routes over.
    await s.custom.replaceNamespacedCustomObject(
      {
        ...VIRTUAL_SERVICES,
        namespace: target.namespace,
        name: vsName,
        body: vs,
        fieldManager: FIELD_MANAGER,
      },
      s.opts(),
    );
  }
  return {
    kind: 'reached',
    message: `weight ${weight}%: VirtualService ${vsName} routes ${
      100 - weight - baseline
    }/${weight}${baseline ? `/${baseline} (stable/canary/baseline)` : ''}`,
  };
}
