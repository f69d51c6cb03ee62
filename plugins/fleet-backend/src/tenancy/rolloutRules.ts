/*
 * What an Argo Rollout of a component's manifests takes over: its workload, its Services and the
 * routes it steers, by router, all of which must be the manifests' own.
 */
import { groupOf } from './kinds';
import {
  isObject,
  list,
  nonEmpty,
  type Loose,
  type Target,
} from './ownObjects';

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
export function routingRefusal(
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
export function rolloutTargets(spec: Loose): Target[] {
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
