import type { V1Deployment } from '@kubernetes/client-node';
import type { RolloutState } from './applierTypes';

/** The rollout state of a live Deployment, as `kubectl rollout status` judges it. */
export function rolloutStateOf(live: V1Deployment): RolloutState {
  const desired = live.spec?.replicas ?? 1;
  const status = live.status ?? {};
  const generation = live.metadata?.generation ?? 0;
  const stalled = status.conditions?.find(
    c => c.type === 'Progressing' && c.reason === 'ProgressDeadlineExceeded',
  );
  if ((status.observedGeneration ?? 0) >= generation && stalled) {
    return {
      kind: 'deadline-exceeded',
      message: stalled.message ?? 'ProgressDeadlineExceeded',
    };
  }
  const updated = status.updatedReplicas ?? 0;
  const available = status.availableReplicas ?? 0;
  const total = status.replicas ?? 0;
  if ((status.observedGeneration ?? 0) < generation) {
    return {
      kind: 'progressing',
      message: 'waiting for the deployment spec update to be observed',
    };
  }
  if (updated < desired) {
    return {
      kind: 'progressing',
      message: `${updated} of ${desired} replicas updated`,
    };
  }
  if (total > updated) {
    return {
      kind: 'progressing',
      message: `${total - updated} old replicas pending termination`,
    };
  }
  if (available < desired) {
    return {
      kind: 'progressing',
      message: `${available} of ${desired} updated replicas available`,
    };
  }
  return { kind: 'ready' };
}
