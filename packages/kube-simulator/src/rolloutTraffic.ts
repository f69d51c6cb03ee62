/**
 * Argo Rollouts' Istio traffic routing, simulated: for a Rollout whose canary strategy has
 * `trafficRouting.istio.virtualService` (with `stableService` and `canaryService`), the
 * controller sets the weights of the VirtualService's named routes (all of them when none are
 * named) to the canary's weight at the current step: the destination whose host names the
 * stable Service gets `100 - w`, the canary Service's `w`. As Argo does, a route that lacks
 * either destination is left alone (Argo reports the VirtualService invalid), and a missing
 * VirtualService changes nothing.
 */
import { serviceOfHost } from './meshTraffic';
import { canaryWeight } from './rollouts';
import { params } from './rolloutSpec';
import { RolloutState } from './rolloutState';
import { asArray, asObject, JsonObject } from './util';

/** The Istio routing of a Rollout: its VirtualService, routes and the two Services. */
function istioRoutingOf(rollout: JsonObject) {
  const canary = asObject(asObject(asObject(rollout.spec)?.strategy)?.canary);
  const istio = asObject(asObject(canary?.trafficRouting)?.istio);
  const vs = asObject(istio?.virtualService);
  if (!canary || typeof vs?.name !== 'string') return undefined;
  return {
    virtualService: vs.name,
    routes: asArray(vs.routes).map(String),
    stable: String(canary.stableService ?? ''),
    canary: String(canary.canaryService ?? ''),
  };
}

/**
 * Sets the weights of the Rollout's VirtualService (`vs`, as stored, changed in place) for the
 * Rollout's current step; true when it changed.
 */
export function routeRolloutTraffic(
  rollout: JsonObject,
  state: RolloutState,
  vs: JsonObject,
): boolean {
  const routing = istioRoutingOf(rollout);
  if (!routing) return false;
  const namespace = String(asObject(rollout.metadata)?.namespace ?? '');
  const weight = canaryWeight(state, params(rollout));
  const service = (host: unknown) =>
    serviceOfHost(String(host ?? ''), namespace);
  const stable = `${namespace}/${routing.stable}`;
  const canary = `${namespace}/${routing.canary}`;
  let changed = false;
  for (const raw of asArray(asObject(vs.spec)?.http)) {
    const route = asObject(raw);
    if (!route) continue;
    if (routing.routes.length && !routing.routes.includes(String(route.name)))
      continue;
    const entries = asArray(route.route).map(r => asObject(r) ?? {});
    const hosts = entries.map(r => service(asObject(r.destination)?.host));
    if (!hosts.includes(stable) || !hosts.includes(canary)) continue;
    for (const [i, entry] of entries.entries()) {
      if (hosts[i] !== stable && hosts[i] !== canary) continue;
      const want = hosts[i] === canary ? weight : 100 - weight;
      if (entry.weight !== want) {
        entry.weight = want;
        changed = true;
      }
    }
  }
  return changed;
}

/** The VirtualService a Rollout routes through, as `namespace/name`. */
export function routedVirtualService(rollout: JsonObject): string | undefined {
  const routing = istioRoutingOf(rollout);
  if (!routing) return undefined;
  const namespace = String(asObject(rollout.metadata)?.namespace ?? '');
  return `${namespace}/${routing.virtualService}`;
}
