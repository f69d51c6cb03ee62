/**
 * The status of the kinds whose controllers follow time since creation: a Job's (jobPods.ts
 * runs its pods), a PersistentVolumeClaim's (bound `readyDelayMs` after its creation), a
 * LoadBalancer Service's (provisioned `readyDelayMs` after it asked for one) and an Ingress's
 * (the ingress controller's address, `readyDelayMs` after its creation).
 */
import { claimStatus } from './configAndAccess';
import {
  ingressLoadBalancerStatus,
  serviceLoadBalancerStatus,
} from './loadBalancers';
import { jobStatus } from './podWorkloadStatus';
import { atLeast, ServerVersion } from './serverVersion';
import { Entry } from './storeTypes';
import { JsonObject } from './util';
import { Readiness } from './workloads';

/** What the timed status depends on besides the object and the time. */
export interface TimedStatusContext {
  readiness: Readiness;
  serverVersion: ServerVersion;
  /** The address the cluster's ingress controller publishes on every Ingress. */
  ingressAddress: string;
}

/** The entry's status at `now`, or undefined for a kind whose status does not follow time. */
export function timedStatusOf(
  entry: Entry,
  now: number,
  ctx: TimedStatusContext,
): JsonObject | undefined {
  const { readiness, serverVersion } = ctx;
  const created = entry.createdAt ?? now;
  switch (entry.def.kind) {
    case 'Job':
      return jobStatus(entry.obj, {
        readiness,
        created,
        now,
        interimConditions: atLeast(serverVersion, 1, 31),
      });
    case 'PersistentVolumeClaim':
      return claimStatus(entry.obj, now - created >= readiness.readyDelayMs);
    case 'Service': {
      const requested = entry.loadBalancerRequestedAt ?? created;
      return serviceLoadBalancerStatus(
        entry.obj,
        now - requested >= readiness.readyDelayMs,
        atLeast(serverVersion, 1, 30),
      );
    }
    case 'Ingress':
      return ingressLoadBalancerStatus(
        ctx.ingressAddress,
        now - created >= readiness.readyDelayMs,
      );
    default:
      return undefined;
  }
}
