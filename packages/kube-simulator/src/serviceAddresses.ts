/**
 * Service IP and port allocation, as the API server does it: a clusterIP from 10.96.0.0/16 and
 * nodePorts from 30000-32767, each held by one Service at a time; on update a Service keeps the
 * ones a client omitted.
 */
import { Allocator, clusterIpAllocator, nodePortAllocator } from './allocators';
import { cause, StatusCause } from './errors';
import { ResourceDef } from './resourceDef';
import { asArray, asObject, clone, JsonObject } from './util';

export class ServiceAddresses {
  private readonly ips: Allocator<string> = clusterIpAllocator();
  private readonly nodePorts: Allocator<number> = nodePortAllocator();

  /** On update, a Service keeps the clusterIP(s) and nodePorts a client omitted. */
  retain(def: ResourceDef, next: JsonObject, old: JsonObject) {
    if (def.kind !== 'Service') return;
    const spec = asObject(next.spec) ?? {};
    const oldSpec = asObject(old.spec) ?? {};
    if (
      (spec.clusterIP === undefined || spec.clusterIP === '') &&
      oldSpec.clusterIP
    ) {
      spec.clusterIP = oldSpec.clusterIP;
    }
    if (
      asArray(spec.clusterIPs).length === 0 &&
      oldSpec.clusterIPs &&
      spec.clusterIP === oldSpec.clusterIP
    ) {
      spec.clusterIPs = clone(oldSpec.clusterIPs);
    }
    if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') {
      for (const raw of asArray(spec.ports)) {
        const p = asObject(raw);
        if (!p || p.nodePort !== undefined) continue;
        const match = asArray(oldSpec.ports)
          .map(asObject)
          .find(
            o =>
              o &&
              o.port === p.port &&
              (o.protocol ?? 'TCP') === (p.protocol ?? 'TCP'),
          );
        if (match && typeof match.nodePort === 'number')
          p.nodePort = match.nodePort;
      }
    }
  }

  /**
   * Assigns clusterIP(s) and nodePorts (422 when a requested one is taken or


  /**
   * Assigns clusterIP(s) and nodePorts (422 when a requested one is taken or
   * out of range): the causes of a 422 if any, and the function that commits the reservations.
   */
  allocate(
    def: ResourceDef,
    obj: JsonObject,
    old: JsonObject | undefined,
  ): { causes: StatusCause[]; commit: () => void } {
    if (def.kind !== 'Service') return { causes: [], commit: () => {} };
    const spec = asObject(obj.spec) ?? {};
    const oldSpec = asObject(old?.spec) ?? {};
    const causes: StatusCause[] = [];
    const newIps: string[] = [];
    if (spec.type === 'ExternalName') {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    } else if (spec.clusterIP === 'None') {
      spec.clusterIPs = ['None'];
    } else if (spec.clusterIP === undefined || spec.clusterIP === '') {
      const ip = this.ips.next();
      spec.clusterIP = ip;
      spec.clusterIPs = [ip];
      newIps.push(ip);
    } else if (spec.clusterIP !== oldSpec.clusterIP) {
      const ip = String(spec.clusterIP);
      if (!this.ips.contains(ip)) {
        causes.push(
          cause.invalid(
            'spec.clusterIPs',
            [ip],
            `failed to allocate IP ${ip}: provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/16`,
          ),
        );
      } else if (this.ips.isAllocated(ip)) {
        causes.push(
          cause.invalid(
            'spec.clusterIPs',
            [ip],
            `failed to allocate IP ${ip}: provided IP is already allocated`,
          ),
        );
      }
      spec.clusterIPs = [ip];
      newIps.push(ip);
    } else if (asArray(spec.clusterIPs).length === 0) {
      spec.clusterIPs = [spec.clusterIP];
    }
    const oldPorts = new Set(
      asArray(oldSpec.ports)
        .map(p => asObject(p)?.nodePort)
        .filter((p): p is number => typeof p === 'number'),
    );
    const newPorts: number[] = [];
    const keptPorts = new Set<number>();
    if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') {
      asArray(spec.ports).forEach((raw, i) => {
        const p = asObject(raw);
        if (!p) return;
        if (p.nodePort === undefined) {
          p.nodePort = this.nodePorts.next();
          newPorts.push(p.nodePort as number);
        } else if (typeof p.nodePort === 'number' && oldPorts.has(p.nodePort)) {
          keptPorts.add(p.nodePort);
        } else {
          const port = Number(p.nodePort);
          if (!this.nodePorts.contains(port)) {
            causes.push(
              cause.invalid(
                `spec.ports[${i}].nodePort`,
                port,
                'provided port is not in the valid range. The range of valid ports is 30000-32767',
              ),
            );
          } else if (
            this.nodePorts.isAllocated(port) ||
            newPorts.includes(port)
          ) {
            causes.push(
              cause.invalid(
                `spec.ports[${i}].nodePort`,
                port,
                'provided port is already allocated',
              ),
            );
          }
          newPorts.push(port);
        }
      });
    }
    const commit = () => {
      for (const ip of newIps) this.ips.reserve(ip);
      for (const ip of asArray(oldSpec.clusterIPs)) {
        if (!asArray(spec.clusterIPs).includes(ip))
          this.ips.release(String(ip));
      }
      for (const port of newPorts) this.nodePorts.reserve(port);
      for (const port of oldPorts)
        if (!keptPorts.has(port)) this.nodePorts.release(port);
    };
    return { causes, commit };
  }

  /** Frees the addresses of a Service that goes away. */
  release(service: JsonObject) {
    const spec = asObject(service.spec) ?? {};
    for (const ip of asArray(spec.clusterIPs)) this.ips.release(String(ip));
    for (const p of asArray(spec.ports)) {
      const port = asObject(p)?.nodePort;
      if (typeof port === 'number') this.nodePorts.release(port);
    }
  }
}
