/**
 * Where an Istio mesh sends the requests of one HTTP route of a VirtualService, computed from
 * the stored objects as the sidecars would route them: each destination gets its `weight` (a
 * lone destination without one gets everything); its host names a Service (`name`,
 * `name.namespace`, `name.namespace.svc` or `name.namespace.svc.cluster.local`, a short name
 * relative to the VirtualService's namespace); its `subset`, when it names one, must be defined
 * by a DestinationRule for that host, whose labels are added to the Service's selector; and the
 * destination's share is spread evenly over the ready pods those labels select. A destination
 * whose Service is missing, whose subset no DestinationRule defines, or that selects no ready
 * pod is answered 503 by Envoy: its share is counted as `unavailable`, with the reason.
 */
import { isReady } from './podStatus';
import { asArray, asObject, JsonObject } from './util';

/** One destination of the route and what it reached. */
export interface MeshDestinationShare {
  host: string;
  subset?: string;
  /** Its part of the route's requests, 0 to 1. */
  share: number;
  /** The ready pods it spreads over. */
  pods: string[];
  /** Why Envoy answers 503 for it, when it does. */
  unavailable?: string;
}

/** The route's requests per pod (0 to 1), and the part answered 503. */
export interface MeshTraffic {
  pods: Record<string, number>;
  unavailable: number;
  destinations: MeshDestinationShare[];
}

const meta = (o: JsonObject) => asObject(o.metadata) ?? {};
const nameOf = (o: JsonObject) => String(meta(o).name ?? '');
const namespaceOf = (o: JsonObject) => String(meta(o).namespace ?? '');
const labelsOf = (o: JsonObject) =>
  (asObject(meta(o).labels) ?? {}) as Record<string, unknown>;

/** The Service a host names, as `namespace/name`; undefined for a host outside the cluster. */
export function serviceOfHost(
  host: string,
  namespace: string,
): string | undefined {
  const parts = host.replace(/\.svc(\.cluster\.local)?$/, '').split('.');
  if (parts.length === 1) return `${namespace}/${parts[0]}`;
  if (parts.length === 2) return `${parts[1]}/${parts[0]}`;
  return undefined;
}

function subsetLabels(
  objects: JsonObject[],
  service: string,
  subset: string,
): Record<string, string> | undefined {
  for (const dr of objects) {
    if (dr.kind !== 'DestinationRule') continue;
    const host = String(asObject(dr.spec)?.host ?? '');
    if (serviceOfHost(host, namespaceOf(dr)) !== service) continue;
    const found = asArray(asObject(dr.spec)?.subsets)
      .map(asObject)
      .find(s => s?.name === subset);
    if (found) return (asObject(found.labels) ?? {}) as Record<string, string>;
  }
  return undefined;
}

/** The ready pods a destination (a host, maybe a subset) reaches, or why it reaches none. */
export function destinationPods(
  objects: JsonObject[],
  destination: JsonObject,
  namespace: string,
): { pods: string[]; unavailable?: string } {
  const host = String(destination.host ?? '');
  const service = serviceOfHost(host, namespace);
  const svc = objects.find(
    o => o.kind === 'Service' && `${namespaceOf(o)}/${nameOf(o)}` === service,
  );
  if (!service || !svc) return { pods: [], unavailable: `no Service ${host}` };
  const selector = asObject(asObject(svc.spec)?.selector) ?? {};
  let labels: Record<string, unknown> = { ...selector };
  if (typeof destination.subset === 'string') {
    const extra = subsetLabels(objects, service, destination.subset);
    if (!extra) {
      return {
        pods: [],
        unavailable: `no DestinationRule defines subset ${destination.subset} of ${host}`,
      };
    }
    labels = { ...labels, ...extra };
  }
  if (Object.keys(selector).length === 0)
    return { pods: [], unavailable: `Service ${host} has no selector` };
  const svcNamespace = service.split('/')[0];
  const pods = objects
    .filter(
      o =>
        o.kind === 'Pod' &&
        namespaceOf(o) === svcNamespace &&
        !meta(o).deletionTimestamp &&
        isReady(o) &&
        Object.entries(labels).every(([k, v]) => labelsOf(o)[k] === v),
    )
    .map(nameOf)
    .sort();
  return pods.length
    ? { pods }
    : { pods, unavailable: `no ready pod behind ${host}` };
}

/**
 * The traffic of the route named `route` (the first HTTP route when none is named) of the
 * VirtualService `namespace/name`, among `objects` (one cluster's stored objects).
 */
export function meshTraffic(
  objects: JsonObject[],
  namespace: string,
  name: string,
  route?: string,
): MeshTraffic {
  const vs = objects.find(
    o =>
      o.kind === 'VirtualService' &&
      namespaceOf(o) === namespace &&
      nameOf(o) === name,
  );
  if (!vs) throw new Error(`no VirtualService ${namespace}/${name}`);
  const routes = asArray(asObject(vs.spec)?.http).map(r => asObject(r) ?? {});
  const chosen = route ? routes.find(r => r.name === route) : routes[0];
  if (!chosen)
    throw new Error(`VirtualService ${namespace}/${name} has no such route`);
  const entries = asArray(chosen.route).map(r => asObject(r) ?? {});
  // A lone destination without a weight gets every request; others without one get none.
  const unweighted = entries.length === 1 ? 100 : 0;
  const weightOf = (r: JsonObject) =>
    typeof r.weight === 'number' ? r.weight : unweighted;
  const total = entries.reduce((sum, r) => sum + weightOf(r), 0);
  const out: MeshTraffic = { pods: {}, unavailable: 0, destinations: [] };
  for (const entry of entries) {
    const destination = asObject(entry.destination) ?? {};
    const share = total > 0 ? weightOf(entry) / total : 0;
    const reached = destinationPods(objects, destination, namespace);
    out.destinations.push({
      host: String(destination.host ?? ''),
      ...(typeof destination.subset === 'string'
        ? { subset: destination.subset }
        : {}),
      share,
      ...reached,
    });
    if (reached.unavailable) {
      out.unavailable += share;
      continue;
    }
    for (const pod of reached.pods)
      out.pods[pod] = (out.pods[pod] ?? 0) + share / reached.pods.length;
  }
  return out;
}
