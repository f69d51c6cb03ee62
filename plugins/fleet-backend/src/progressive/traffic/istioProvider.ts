import type { ReleaseStrategy } from '@cnp/plugin-fleet-common';
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
  type Session,
  type StepOutcome,
} from './canaryObjects';
import {
  applyBaselineService,
  ensureBaseline,
  judgedTarget,
} from './baselineObjects';
import { narrowStableService, widenStableService } from './stableService';
import {
  readSteerableVirtualService,
  setRouteWeights,
  VIRTUAL_SERVICES,
} from './virtualService';

/** Sets the weights of the traffic object a provider steers (a VirtualService, an HTTPRoute). */
export type SetWeights = (
  s: Session,
  target: CanaryTarget,
  weight: number,
  options?: { baseline?: boolean },
) => Promise<StepOutcome>;

/**
 * The canary Deployment sized to the weight and its own Service, then the traffic object's
 * routes split between the stable and the canary Service (`setWeights`), and the baseline's, at
 * the canary's share, when the canary is judged against one.
 */
export function routedStep(
  target: CanaryTarget,
  weight: number,
  timeoutMs: number,
  setWeights: SetWeights,
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
    const judged = judgedTarget(target);
    const baselineWaits =
      judged && (await baselineWaiting(s, target, wantCanary));
    if (baselineWaits) return { kind: 'waiting', message: baselineWaits };
    // The stable Service narrowed to the stable pods before any weight goes to the canary.
    const note = await narrowStableService(s, target);
    const outcome = await setWeights(s, target, weight, { baseline: judged });
    return note && outcome.kind === 'reached'
      ? { ...outcome, message: `${outcome.message} (${note})` }
      : outcome;
  });
}

/**
 * The baseline of a canary judged against one, at the canary's size with its own Service: why
 * the step waits while its pods are not all available (no share goes to a host without pods).
 */
async function baselineWaiting(
  s: Session,
  target: CanaryTarget,
  replicas: number,
): Promise<string | undefined> {
  const baseline = await ensureBaseline(s, target, replicas);
  await applyBaselineService(s, target);
  const available = baseline.status?.availableReplicas ?? 0;
  return available < replicas
    ? `baseline ${available}/${replicas} replicas available`
    : undefined;
}

/** The traffic object back to the stable Service only. */
export function routedToStable(
  target: CanaryTarget,
  timeoutMs: number,
  setWeights: SetWeights,
): Promise<StepOutcome> {
  return guarded(target, timeoutMs, async s => {
    let outcome: StepOutcome;
    try {
      outcome = await setWeights(s, target, 0);
    } catch (error) {
      // One Fleet may not steer was never steered: it sends nothing to the canary.
      if (!(error instanceof OwnershipConflictError)) throw error;
      outcome = { kind: 'failed', message: error.message };
    }
    // A traffic object that is gone carries no traffic to the canary.
    return outcome.kind === 'failed'
      ? { kind: 'reached', message: outcome.message }
      : outcome;
  });
}

/** Deletes the canary's objects, then widens the stable Service to every pod again. */
export async function removeRoutedCanary(
  target: CanaryTarget,
  timeoutMs: number,
): Promise<StepOutcome> {
  const removed = await removeCanaryObjects(target, timeoutMs);
  if (removed.kind !== 'reached') return removed;
  // No canary pod is left: the Service selects every pod of the application again.
  return guarded(target, timeoutMs, async s => {
    await widenStableService(s, target);
    return removed;
  });
}

/** What a provider that splits a traffic object's routes between two Services needs. */
export interface RoutedMode {
  id: string;
  description: string;
  /** Whether the strategy asks for this mode. */
  asks(strategy: ReleaseStrategy): boolean;
  /** The API resource of the traffic object (the cluster must serve it). */
  resource: Parameters<typeof servesResource>[1];
  /** Reads the traffic object, refusing one Fleet may not steer. */
  readSteerable(s: Session, target: CanaryTarget): Promise<unknown>;
  setWeights: SetWeights;
}

/**
 * A traffic provider over a routed mode: detected where the strategy asks for it and the cluster
 * serves its resource; the canary's Deployment, the application's Service and the traffic
 * object checked as Fleet's to steer before anything changes; each step a `routedStep`.
 */
export function createRoutedTrafficProvider(
  mode: RoutedMode,
  options: { requestTimeoutMs: number },
): FleetTrafficProvider {
  const timeoutMs = options.requestTimeoutMs;
  return {
    id: mode.id,
    description: mode.description,
    async detect({ cluster, strategy }) {
      if (!mode.asks(strategy)) return false;
      const s = await openSession(cluster, timeoutMs);
      return servesResource(s, mode.resource);
    },
    async ownershipConflict(target) {
      const s = await openSession(target.cluster, timeoutMs);
      return conflictOf(async () => {
        await readDeployment(s, target, target.name);
        await readDeployment(s, target, canaryName(target.name));
        await readOwnedService(s, target);
        await mode.readSteerable(s, target);
      });
    },
    step: (target, { weight }) =>
      routedStep(target, weight, timeoutMs, mode.setWeights),
    trafficToStable: target =>
      routedToStable(target, timeoutMs, mode.setWeights),
    removeCanary: target => removeRoutedCanary(target, timeoutMs),
  };
}

/**
 * Istio route weights: where the strategy names a VirtualService and the cluster serves
 * `networking.istio.io` VirtualServices.
 */
export function createIstioTrafficProvider(options: {
  requestTimeoutMs: number;
}): FleetTrafficProvider {
  return createRoutedTrafficProvider(
    {
      id: 'istio',
      description: 'Istio route weights',
      asks: strategy => !!strategy.canary.trafficRouting?.istio,
      resource: VIRTUAL_SERVICES,
      readSteerable: readSteerableVirtualService,
      setWeights: setRouteWeights,
    },
    options,
  );
}
