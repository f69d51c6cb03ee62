/**
 * Where a Gateway API implementation sends the requests of one rule of an HTTPRoute, computed
 * from the stored objects as the Gateway API specification words it for `backendRefs`: each
 * backend gets `weight / sum of weights` of the rule's requests, a backend without a weight
 * weighs 1 and one of weight 0 gets none. A backend names a Service (no `group` and no `kind`
 * mean a core Service; no `namespace` the route's own); its share is spread evenly over the
 * ready pods the Service selects. A backend that resolves to nothing (its Service missing, or
 * selecting no ready pod) gets its share answered 500, as the specification requires: counted
 * as `unavailable`, with the reason. References to another namespace, which the specification
 * allows only with a ReferenceGrant, are not modelled: they are `unavailable` too.
 */
import { destinationPods, MeshTraffic } from './meshTraffic';
import { asArray, asObject, JsonObject } from './util';

const meta = (o: JsonObject) => asObject(o.metadata) ?? {};

/** The pods a backendRef reaches, or why it reaches none. */
function backendPods(
  objects: JsonObject[],
  ref: JsonObject,
  namespace: string,
): { pods: string[]; unavailable?: string } {
  const group = typeof ref.group === 'string' ? ref.group : '';
  const kind = typeof ref.kind === 'string' ? ref.kind : 'Service';
  if (group !== '' || kind !== 'Service')
    return { pods: [], unavailable: `backend ${kind} is not a Service` };
  if (typeof ref.namespace === 'string' && ref.namespace !== namespace)
    return {
      pods: [],
      unavailable: `no ReferenceGrant for namespace ${ref.namespace}`,
    };
  return destinationPods(objects, { host: String(ref.name ?? '') }, namespace);
}

/**
 * The traffic of rule `rule` (an index, the first when none is given) of the HTTPRoute
 * `namespace/name` among `objects` (one cluster's stored objects). Destinations are named by
 * the backends' Service names.
 */
export function gatewayTraffic(
  objects: JsonObject[],
  namespace: string,
  name: string,
  rule = 0,
): MeshTraffic {
  const route = objects.find(
    o =>
      o.kind === 'HTTPRoute' &&
      meta(o).namespace === namespace &&
      meta(o).name === name,
  );
  if (!route) throw new Error(`no HTTPRoute ${namespace}/${name}`);
  const chosen = asObject(asArray(asObject(route.spec)?.rules)[rule]);
  if (!chosen)
    throw new Error(`HTTPRoute ${namespace}/${name} has no rule ${rule}`);
  const refs = asArray(chosen.backendRefs).map(r => asObject(r) ?? {});
  const weightOf = (r: JsonObject) =>
    typeof r.weight === 'number' ? r.weight : 1;
  const total = refs.reduce((sum, r) => sum + weightOf(r), 0);
  const out: MeshTraffic = { pods: {}, unavailable: 0, destinations: [] };
  for (const ref of refs) {
    const share = total > 0 ? weightOf(ref) / total : 0;
    const reached = backendPods(objects, ref, namespace);
    out.destinations.push({ host: String(ref.name ?? ''), share, ...reached });
    if (reached.unavailable) {
      // A backend of weight 0 gets no request: nothing is answered 500 for it.
      out.unavailable += share;
      continue;
    }
    for (const pod of reached.pods)
      out.pods[pod] = (out.pods[pod] ?? 0) + share / reached.pods.length;
  }
  return out;
}
