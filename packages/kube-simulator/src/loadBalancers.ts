/**
 * The addresses a cluster's load balancers publish, as a cloud's (or MetalLB's) Service
 * controller and an ingress controller write them to `status.loadBalancer.ingress`, both
 * `readyDelayMs` after the object was created (or after a Service became a LoadBalancer):
 * - a Service of type LoadBalancer gets its own address, from 172.18.0.0/16, mirroring its
 *   clusterIP (unique in the cluster, stable for the Service's life), with `ipMode: VIP` from
 *   Kubernetes 1.30 (the API server's default once the address is set);
 * - an Ingress gets the address of the cluster's ingress controller, one per cluster from
 *   172.19.0.0/16, the same for every Ingress of the cluster.
 * Other Services, and everything before the delay, keep `{ loadBalancer: {} }`.
 */
import { asObject, JsonObject } from './util';

/** The address of a cluster's (simulated) ingress controller. */
export function ingressControllerAddress(): string {
  const n = 1 + Math.floor(Math.random() * 65533);
  return `172.19.${n >> 8}.${n & 255}`;
}

/** A Service's status: its load balancer's address once provisioned. */
export function serviceLoadBalancerStatus(
  service: JsonObject,
  provisioned: boolean,
  ipMode: boolean,
): JsonObject {
  const spec = asObject(service.spec) ?? {};
  const clusterIP = typeof spec.clusterIP === 'string' ? spec.clusterIP : '';
  const m = clusterIP.match(/^10\.96\.(\d+)\.(\d+)$/);
  if (!provisioned || spec.type !== 'LoadBalancer' || !m)
    return { loadBalancer: {} };
  const ip = `172.18.${m[1]}.${m[2]}`;
  return {
    loadBalancer: { ingress: [ipMode ? { ip, ipMode: 'VIP' } : { ip }] },
  };
}

/** An Ingress's status: the ingress controller's address once it has taken the Ingress. */
export function ingressLoadBalancerStatus(
  address: string,
  provisioned: boolean,
): JsonObject {
  return provisioned
    ? { loadBalancer: { ingress: [{ ip: address }] } }
    : { loadBalancer: {} };
}
