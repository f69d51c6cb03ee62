import type { FleetTrafficProvider } from '@cnp/plugin-fleet-node';
import { OwnershipConflictError } from '../../deploy/ownership';
import {
  canaryName,
  applyCanaryService,
  conflictOf,
  ensureCanary,
  guarded,
  openSession,
  readDeployment,
  readOwnedService,
  removeCanaryObjects,
  scale,
  servesResource,
  type CanaryTarget,
  type StepOutcome,
} from './canaryObjects';
import { narrowStableService, widenStableService } from './stableService';
import {
  readSteerableVirtualService,
  setRouteWeights,
  VIRTUAL_SERVICES,
} from './virtualService';

/**
 * The canary Deployment sized to the weight and its own Service, then the named VirtualService's
 * routes split between the stable and the canary host.
 */
function istioStep(
  target: CanaryTarget,
  weight: number,
  timeoutMs: number,
): Promise<StepOutcome> {
  return guarded(target, timeoutMs, async s => {
    const wantCanary = Math.min(
      target.replicas,
      Math.max(1, Math.ceil((target.replicas * weight) / 100)),
    );
    const canary = await ensureCanary(s, target, wantCanary);
    if ((canary.spec?.replicas ?? 0) !== wantCanary) {
      await scale(s, target.namespace, canaryName(target.name), wantCanary);
    }
    await applyCanaryService(s, target);
    const available = canary.status?.availableReplicas ?? 0;
    if (available < wantCanary || (canary.spec?.replicas ?? 0) !== wantCanary) {
      return {
        kind: 'waiting',
        message: `weight ${weight}%: canary ${available}/${wantCanary} replicas available`,
      };
    }
    // The stable Service narrowed to the stable pods before any weight goes to the canary.
    const note = await narrowStableService(s, target);
    const outcome = await setRouteWeights(s, target, weight);
    return note && outcome.kind === 'reached'
      ? { ...outcome, message: `${outcome.message} (${note})` }
      : outcome;
  });
}

/** The VirtualService back to the stable host only. */
function istioToStable(
  target: CanaryTarget,
  timeoutMs: number,
): Promise<StepOutcome> {
  return guarded(target, timeoutMs, async s => {
    let outcome: StepOutcome;
    try {
      outcome = await setRouteWeights(s, target, 0);
    } catch (error) {
      // One Fleet may not steer was never steered: it sends nothing to the canary.
      if (!(error instanceof OwnershipConflictError)) throw error;
      outcome = { kind: 'failed', message: error.message };
    }
    // A VirtualService that is gone carries no traffic to the canary.
    return outcome.kind === 'failed'
      ? { kind: 'reached', message: outcome.message }
      : outcome;
  });
}

/**
 * Istio route weights: where the strategy names a VirtualService and the cluster serves
 * `networking.istio.io` VirtualServices.
 */
export function createIstioTrafficProvider(options: {
  requestTimeoutMs: number;
}): FleetTrafficProvider {
  const timeoutMs = options.requestTimeoutMs;
  return {
    id: 'istio',
    description: 'Istio route weights',
    async detect({ cluster, strategy }) {
      if (!strategy.canary.trafficRouting?.istio) return false;
      const s = await openSession(cluster, timeoutMs);
      return servesResource(s, VIRTUAL_SERVICES);
    },
    async ownershipConflict(target) {
      const s = await openSession(target.cluster, timeoutMs);
      return conflictOf(async () => {
        await readDeployment(s, target, target.name);
        await readDeployment(s, target, canaryName(target.name));
        await readOwnedService(s, target);
        await readSteerableVirtualService(s, target);
      });
    },
    step: (target, { weight }) => istioStep(target, weight, timeoutMs),
    trafficToStable: target => istioToStable(target, timeoutMs),
    removeCanary: async target => {
      const removed = await removeCanaryObjects(target, timeoutMs);
      if (removed.kind !== 'reached') return removed;
      // No canary pod is left: the Service selects every pod of the application again.
      return guarded(target, timeoutMs, async s => {
        await widenStableService(s, target);
        return removed;
      });
    },
  };
}
