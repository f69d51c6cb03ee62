import type { FleetTrafficProvider } from '@cnp/plugin-fleet-node';
import {
  autoscalerRefusal,
  canaryName,
  conflictOf,
  ensureCanary,
  guarded,
  openSession,
  readDeployment,
  removeCanaryObjects,
  scale,
  type CanaryTarget,
  type StepOutcome,
} from './canaryObjects';

/**
 * Moves the replica split one safe move toward `weight`: the canary grows while the total stays
 * within `replicas + maxSurge`, the stable shrinks while the available pods stay at least
 * `replicas - maxUnavailable`. Reached when both have their share and the canary's are available.
 */
function replicasStep(
  target: CanaryTarget,
  weight: number,
  timeoutMs: number,
): Promise<StepOutcome> {
  return guarded(target, timeoutMs, async s => {
    const total = target.replicas;
    const wantCanary = Math.min(
      total,
      Math.max(1, Math.ceil((total * weight) / 100)),
    );
    const wantStable = Math.max(
      total - wantCanary,
      weight < 100 && total > 1 ? 1 : 0,
    );
    const stable = await readDeployment(s, target, target.name);
    if (!stable)
      return {
        kind: 'failed',
        message: `Deployment ${target.namespace}/${target.name} is missing`,
      };
    const canary = await ensureCanary(s, target, 0);
    const stableSpec = stable.spec?.replicas ?? 0;
    const canarySpec = canary.spec?.replicas ?? 0;
    const stableAvailable = Math.min(
      stable.status?.availableReplicas ?? 0,
      stableSpec,
    );
    const canaryAvailable = Math.min(
      canary.status?.availableReplicas ?? 0,
      canarySpec,
    );
    const surgeRoom = Math.max(
      0,
      total + target.maxSurge - (stableSpec + canarySpec),
    );
    const up = Math.min(Math.max(0, wantCanary - canarySpec), surgeRoom);
    if (up > 0) {
      await scale(
        s,
        target.namespace,
        canaryName(target.name),
        canarySpec + up,
      );
    }
    const spare = Math.max(
      0,
      stableAvailable + canaryAvailable - (total - target.maxUnavailable),
    );
    const down = Math.min(Math.max(0, stableSpec - wantStable), spare);
    if (down > 0) {
      await scale(s, target.namespace, target.name, stableSpec - down);
    }
    // The stable workload shrinks towards what it keeps: "stable 3 → 2" while it has more, never
    // "3/2" (read as 3 of 2).
    const stableNow = stableSpec - down;
    const split = `canary ${canaryAvailable}/${wantCanary}, stable ${
      stableNow > wantStable
        ? `${stableNow} → ${wantStable}`
        : `${stableNow}/${wantStable}`
    }`;
    // A scale-down waits for nothing: the split holds as soon as it is written.
    if (
      up === 0 &&
      canarySpec === wantCanary &&
      stableSpec - down === wantStable &&
      canaryAvailable >= wantCanary
    ) {
      return {
        kind: 'reached',
        message: `weight ${weight}%: ${split} replicas`,
      };
    }
    return {
      kind: 'waiting',
      message: `moving to weight ${weight}%: ${split} replicas`,
    };
  });
}

/**
 * The fallback: a canary Deployment beside the stable one, the traffic split by their replicas
 * (the Service selects both). It steers on any cluster.
 */
export function createReplicasTrafficProvider(options: {
  requestTimeoutMs: number;
}): FleetTrafficProvider {
  const timeoutMs = options.requestTimeoutMs;
  return {
    id: 'replicas',
    description: 'a canary Deployment',
    detect: async () => true,
    startRefusal: request => autoscalerRefusal(request, timeoutMs),
    async ownershipConflict(target) {
      const s = await openSession(target.cluster, timeoutMs);
      return conflictOf(async () => {
        await readDeployment(s, target, target.name);
        await readDeployment(s, target, canaryName(target.name));
      });
    },
    step: (target, { weight }) => replicasStep(target, weight, timeoutMs),
    // The Service selects the stable pods and the canary's: removing the canary is enough.
    trafficToStable: target =>
      guarded(target, timeoutMs, async () => ({
        kind: 'reached',
        message: 'traffic is on the stable revision',
      })),
    removeCanary: target => removeCanaryObjects(target, timeoutMs),
  };
}
