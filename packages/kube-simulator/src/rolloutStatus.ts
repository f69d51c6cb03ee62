/**
 * The status the simulated Argo Rollouts controller (rollouts.ts) writes: counts, pause
 * conditions, the phase (Argo's CalculateRolloutPhase) and the conditions.
 */
import { Condition, mergeConditions } from './conditions';
import { Params, params } from './rolloutSpec';
import { availableOf, replicasOf, RolloutState } from './rolloutState';
import { selectorString } from './selectors';
import { asArray, asObject, JsonObject, rfc3339 } from './util';
import { Readiness } from './workloads';

/** The replica counts over every ReplicaSet of the rollout at `now`. */
interface Counts {
  total: number;
  updated: number;
  available: number;
}

/** What the phase and the Progressing condition are decided from. */
interface Progress extends Counts {
  p: Params;
  state: RolloutState;
  rsName: string;
  paused: boolean;
  fullyPromoted: boolean;
  complete: boolean;
  deadlineExceeded: boolean;
  abortMessage: string;
}

/** The status the controller writes at `now` (after advanceRollout). */
export function rolloutStatusOf(
  state: RolloutState,
  obj: JsonObject,
  generation: number,
  readiness: Readiness,
  now: number,
): JsonObject {
  const p = params(obj);
  const current = state.replicaSets.find(r => r.hash === state.currentHash);
  const counts: Counts = {
    total: state.replicaSets.reduce((n, r) => n + replicasOf(r), 0),
    updated: replicasOf(current),
    available: state.replicaSets.reduce(
      (n, r) => n + availableOf(r, readiness, now),
      0,
    ),
  };
  const status = statusFields(state, obj, p, generation, counts, now);
  const progress = progressOf(state, p, counts, now);
  const { phase, message } = phaseOf(progress);
  status.phase = phase;
  if (message !== undefined) status.message = message;
  const previous = asObject(obj.status)?.conditions;
  const conditions = conditionsOf(progress, phase === 'Healthy', previous);
  status.conditions = mergeConditions(previous, conditions, now);
  return status;
}

/** The status fields besides the phase and the conditions. */
function statusFields(
  state: RolloutState,
  obj: JsonObject,
  p: Params,
  generation: number,
  { total, updated, available }: Counts,
  now: number,
): JsonObject {
  const spec = asObject(obj.spec) ?? {};
  const status: JsonObject = { observedGeneration: String(generation) };
  // zero counters are omitted (omitempty), as Argo writes them
  if (total) status.replicas = total;
  if (updated) status.updatedReplicas = updated;
  if (available) status.readyReplicas = available;
  if (available) status.availableReplicas = available;
  status.HPAReplicas = total;
  status.currentPodHash = state.currentHash;
  if (state.stableHash) status.stableRS = state.stableHash;
  if (p.canary && p.steps.length > 0) status.currentStepIndex = state.stepIndex;
  if (state.pauseStart !== undefined) {
    status.pauseConditions = [
      { reason: 'CanaryPauseStep', startTime: rfc3339(state.pauseStart) },
    ];
  }
  if (state.controllerPause) status.controllerPause = true;
  if (state.abort) {
    status.abort = true;
    status.abortedAt = rfc3339(state.abortedAt ?? now);
  }
  if (state.promoteFull) status.promoteFull = true;
  status.canary = {};
  status.selector = selectorString(spec.selector);
  return status;
}

function progressOf(
  state: RolloutState,
  p: Params,
  counts: Counts,
  now: number,
): Progress {
  const { total, updated, available } = counts;
  const paused = p.paused || state.pauseStart !== undefined;
  const fullyPromoted = state.stableHash === state.currentHash;
  const complete =
    fullyPromoted &&
    updated === p.replicas &&
    available >= p.replicas &&
    total === p.replicas;
  const deadlineExceeded =
    !complete &&
    !paused &&
    !state.abort &&
    now - state.progressAt > p.deadlineMs;
  return {
    ...counts,
    p,
    state,
    rsName: `${p.name}-${state.currentHash}`,
    paused,
    fullyPromoted,
    complete,
    deadlineExceeded,
    abortMessage: `Rollout aborted update to revision ${state.revision}`,
  };
}

/** Argo's CalculateRolloutPhase. */
function phaseOf(progress: Progress): { phase: string; message?: string } {
  const { p, state, total, updated, available } = progress;
  if (state.abort)
    return {
      phase: 'Degraded',
      message: `RolloutAborted: ${progress.abortMessage}`,
    };
  if (progress.deadlineExceeded)
    return {
      phase: 'Degraded',
      message: `ProgressDeadlineExceeded: ReplicaSet "${progress.rsName}" has timed out progressing.`,
    };
  if (p.paused) return { phase: 'Paused', message: 'manually paused' };
  if (state.pauseStart !== undefined)
    return { phase: 'Paused', message: 'CanaryPauseStep' };
  if (updated < p.replicas)
    return {
      phase: 'Progressing',
      message: 'more replicas need to be updated',
    };
  if (available < updated)
    return {
      phase: 'Progressing',
      message: 'updated replicas are still becoming available',
    };
  if (total > updated)
    return {
      phase: 'Progressing',
      message: 'old replicas are pending termination',
    };
  if (!progress.fullyPromoted)
    return {
      phase: 'Progressing',
      message: 'waiting for all steps to complete',
    };
  return { phase: 'Healthy' };
}

function progressingCondition(progress: Progress): Condition {
  const { p, state } = progress;
  const condition = (
    status: Condition['status'],
    reason: string,
    message: string,
  ): Condition => ({ type: 'Progressing', status, reason, message });
  if (state.abort)
    return condition('False', 'RolloutAborted', progress.abortMessage);
  if (progress.deadlineExceeded)
    return condition(
      'False',
      'ProgressDeadlineExceeded',
      `ReplicaSet "${progress.rsName}" has timed out progressing.`,
    );
  if (progress.paused)
    return condition('Unknown', 'RolloutPaused', 'Rollout is paused');
  if (progress.complete)
    return condition(
      'True',
      'NewReplicaSetAvailable',
      `Rollout "${p.name}" has successfully progressed.`,
    );
  return condition(
    'True',
    'ReplicaSetUpdated',
    `Rollout "${p.name}" is progressing.`,
  );
}

/** Progressing, Available, Healthy, and Paused while paused or after it was. */
function conditionsOf(
  progress: Progress,
  healthy: boolean,
  previous: unknown,
): Condition[] {
  const { p, available, paused } = progress;
  const conditions: Condition[] = [
    progressingCondition(progress),
    available >= p.replicas - p.maxUnavailable
      ? {
          type: 'Available',
          status: 'True',
          reason: 'AvailableReason',
          message: 'Rollout has minimum availability',
        }
      : {
          type: 'Available',
          status: 'False',
          reason: 'AvailableReason',
          message: 'Rollout does not have minimum availability',
        },
    {
      type: 'Healthy',
      status: healthy ? 'True' : 'False',
      reason: 'RolloutHealthy',
      message: healthy ? 'Rollout is healthy' : 'Rollout is not healthy',
    },
  ];
  const hadPaused = asArray(previous).some(c => asObject(c)?.type === 'Paused');
  if (paused || hadPaused) {
    conditions.push({
      type: 'Paused',
      status: paused ? 'True' : 'False',
      reason: 'RolloutPaused',
      message: 'Rollout is paused',
    });
  }
  return conditions;
}
