/**
 * The Argo Rollouts controller, simulated (argoproj.io/v1alpha1, basic canary;
 * Istio traffic routing in rolloutTraffic.ts), following argo-rollouts' rollout/canary.go,
 * rollout/pause.go, rollout/sync.go and utils/rollout/rolloututil.go.
 *
 * There are no pods: each ReplicaSet is a list of pod batches, each ready
 * `readyDelayMs` after it was created. The controller is event-driven on a
 * virtual clock: `advanceRollout(state, obj, readiness, now)` replays every
 * reconcile that would have happened up to `now` (pods becoming ready, timed
 * pauses ending), so reads are deterministic for a given clock.
 *
 * - The first revision (no stableRS) is promoted at once ("Initial deploy"):
 *   stableRS = currentPodHash, currentStepIndex = steps.length.
 * - A pod template change (new pod-template hash) with a stable RS starts a
 *   canary at step 0; a change back to the stable hash skips the steps.
 *   A change of the steps resets the index to 0, as Argo does.
 * - `setWeight: w` scales the canary RS to ceil(replicas * w / 100) and the
 *   stable to the rest, within maxSurge (default 25%) / maxUnavailable
 *   (default 0); the step completes when both RSs are at their counts and
 *   fully available.
 * - `pause: {}` / `pause: { duration }` adds the CanaryPauseStep pause
 *   condition (controllerPause: true); a duration ends it (Argo's
 *   DurationSeconds: whole seconds, "500ms" is 0 s, a bare integer is
 *   seconds); clearing `status.pauseConditions` (promote) ends any pause.
 * - After the last step the canary is scaled to 100%, and once all its
 *   replicas are available it becomes stable.
 * - `status.abort: true` scales the canary to 0 and the stable back to
 *   spec.replicas; `status.abort: false` (retry) restarts from step 0;
 *   `status.promoteFull: true` skips the remaining steps; a written
 *   `status.currentStepIndex` moves the canary to that step.
 * - `spec.paused: true` stops the steps (phase Paused, "manually paused").
 */
import { Params, params } from './rolloutSpec';
import {
  availableOf,
  ReplicaSetState,
  replicasOf,
  RolloutState,
} from './rolloutState';
import { asArray, asObject, JsonObject } from './util';
import { Readiness } from './workloads';

// --------------------------------------------------------- replica sets

function rsFor(state: RolloutState, hash: string): ReplicaSetState {
  let rs = state.replicaSets.find(r => r.hash === hash);
  if (!rs) {
    rs = { hash, batches: [] };
    state.replicaSets.push(rs);
  }
  return rs;
}

/** Scales down, removing not-ready pods first (newest batches first), as the RS controller does. */
function scaleDown(rs: ReplicaSetState, to: number, t: number) {
  let remove = replicasOf(rs) - to;
  const order = [...rs.batches].sort(
    (a, b) =>
      Number(a.readyAt <= t) - Number(b.readyAt <= t) || b.readyAt - a.readyAt,
  );
  for (const batch of order) {
    if (remove <= 0) break;
    const n = Math.min(batch.count, remove);
    batch.count -= n;
    remove -= n;
  }
  rs.batches = rs.batches.filter(b => b.count > 0);
}

/**
 * The canary's weight at the current step: the last `setWeight` reached, 0 before the first
 * and after an abort, 100 after the last step; 0 when the canary is the stable.
 */
export function canaryWeight(state: RolloutState, p: Params): number {
  if (state.stableHash === state.currentHash || state.abort) return 0;
  if (state.stepIndex >= p.steps.length) return 100;
  for (let i = Math.min(state.stepIndex, p.steps.length - 1); i >= 0; i--) {
    const w = p.steps[i].setWeight;
    if (w !== undefined) return w;
  }
  return 0;
}

/** The replica count each RS should have at the current step. */
function targets(state: RolloutState, p: Params): Map<string, number> {
  const out = new Map<string, number>();
  for (const rs of state.replicaSets) out.set(rs.hash, 0);
  const current = state.currentHash!;
  const stable = state.stableHash!;
  if (stable === current) {
    out.set(current, p.replicas);
    return out;
  }
  const weight = canaryWeight(state, p);
  const canary = Math.min(
    p.replicas,
    Math.ceil((p.replicas * Math.max(0, Math.min(weight, 100))) / 100),
  );
  out.set(current, canary);
  out.set(stable, p.replicas - canary);
  return out;
}

/** One pass of the controller over a Rollout: its state and spec, at time `t`. */
interface Pass {
  state: RolloutState;
  p: Params;
  readiness: Readiness;
  t: number;
}

/** One scaling pass within maxSurge/maxUnavailable; returns whether anything changed. */
function scale({ state, p, readiness, t }: Pass): boolean {
  const want = targets(state, p);
  let changed = false;
  const total = () => state.replicaSets.reduce((n, r) => n + replicasOf(r), 0);
  const available = () =>
    state.replicaSets.reduce((n, r) => n + availableOf(r, readiness, t), 0);
  const maxTotal = p.replicas + p.maxSurge;
  const minAvailable = p.replicas - p.maxUnavailable;
  // Scale up within the surge, the canary (current) first.
  const order = [...state.replicaSets].sort(
    (a, b) =>
      Number(b.hash === state.currentHash) -
      Number(a.hash === state.currentHash),
  );
  for (const rs of order) {
    const target = want.get(rs.hash) ?? 0;
    const have = replicasOf(rs);
    if (have >= target) continue;
    const room = Math.max(0, maxTotal - total());
    const add = Math.min(target - have, room);
    if (add > 0) {
      rs.batches.push({ count: add, readyAt: t + readiness.readyDelayMs });
      changed = true;
    }
  }
  // Scale down: not-ready pods freely, ready ones down to minAvailable.
  for (const rs of state.replicaSets) {
    const target = want.get(rs.hash) ?? 0;
    const have = replicasOf(rs);
    if (have <= target) continue;
    const unready = have - availableOf(rs, readiness, t);
    const spare = Math.max(0, available() - minAvailable);
    const to = Math.max(target, have - unready - spare);
    if (to < have) {
      scaleDown(rs, to, t);
      changed = true;
    }
  }
  state.replicaSets = state.replicaSets.filter(
    r =>
      r.batches.length > 0 ||
      r.hash === state.currentHash ||
      r.hash === state.stableHash,
  );
  return changed;
}

function atTargets({ state, p, readiness, t }: Pass): boolean {
  const want = targets(state, p);
  return state.replicaSets.every(rs => {
    const target = want.get(rs.hash) ?? 0;
    return (
      replicasOf(rs) === target && availableOf(rs, readiness, t) === target
    );
  });
}

// ------------------------------------------------------------- reconcile

function resetForNewRevision(state: RolloutState, p: Params) {
  state.pauseStart = undefined;
  state.controllerPause = false;
  state.abort = false;
  state.abortedAt = undefined;
  state.promoteFull = false;
  state.stepIndex = state.stableHash === state.currentHash ? p.steps.length : 0;
}

/** One reconcile at time t, repeated until nothing changes. */
function reconcile(
  state: RolloutState,
  p: Params,
  readiness: Readiness,
  t: number,
) {
  if (state.currentHash !== p.hash) {
    state.currentHash = p.hash;
    state.revision += 1;
    state.stepsKey = p.stepsKey;
    rsFor(state, p.hash);
    resetForNewRevision(state, p);
    state.progressAt = t;
  } else if (state.stepsKey !== p.stepsKey) {
    state.stepsKey = p.stepsKey;
    resetForNewRevision(state, p);
    state.progressAt = t;
  }
  for (let i = 0; i < 1000; i++) {
    let changed = false;
    const current = rsFor(state, state.currentHash!);
    if (state.stableHash === undefined) {
      state.stableHash = state.currentHash; // "Initial deploy"
      state.stepIndex = p.steps.length;
      changed = true;
    }
    if (state.promoteFull && state.stableHash !== state.currentHash) {
      state.pauseStart = undefined;
      state.controllerPause = false;
      state.abort = false;
      state.abortedAt = undefined;
      state.stepIndex = p.steps.length;
    }
    if (state.abort && p.steps.length > 0) {
      const index = state.stableHash === state.currentHash ? p.steps.length : 0;
      if (state.stepIndex !== index) {
        state.stepIndex = index;
        changed = true;
      }
    }
    if (scale({ state, p, readiness, t })) changed = true;
    // shouldFullPromote: every step done (or promoteFull) and the canary fully available.
    if (
      state.stableHash !== state.currentHash &&
      !state.abort &&
      state.stepIndex >= p.steps.length &&
      availableOf(current, readiness, t) >= p.replicas
    ) {
      state.stableHash = state.currentHash;
      state.promoteFull = false;
      state.progressAt = t;
      changed = true;
    }
    if (
      state.stableHash !== state.currentHash &&
      !state.abort &&
      !p.paused &&
      state.stepIndex < p.steps.length
    ) {
      const step = p.steps[state.stepIndex];
      let completed = false;
      if (step.pause) {
        if (state.controllerPause && state.pauseStart === undefined) {
          completed = true; // the pause condition was removed: promoted
        } else if (state.pauseStart === undefined) {
          state.pauseStart = t;
          state.controllerPause = true;
          changed = true;
        } else if (
          step.pause.seconds !== undefined &&
          t >= state.pauseStart + step.pause.seconds * 1000
        ) {
          completed = true;
        }
      } else if (step.setWeight !== undefined) {
        completed = atTargets({ state, p, readiness, t });
      } else {
        completed = true;
      }
      if (completed) {
        state.stepIndex += 1;
        state.pauseStart = undefined;
        state.controllerPause = false;
        state.progressAt = t;
        changed = true;
      }
    }
    if (!changed) return;
  }
}

/** The next time something happens by itself (a pod ready, a timed pause over). */
function nextEvent(
  state: RolloutState,
  p: Params,
  readiness: Readiness,
): number | undefined {
  let next: number | undefined;
  const consider = (at: number) => {
    if (at > state.t && (next === undefined || at < next)) next = at;
  };
  if (!readiness.neverReady) {
    for (const rs of state.replicaSets)
      for (const b of rs.batches) consider(b.readyAt);
  }
  const step = p.steps[state.stepIndex];
  if (
    state.pauseStart !== undefined &&
    step?.pause?.seconds !== undefined &&
    !p.paused
  ) {
    consider(state.pauseStart + step.pause.seconds * 1000);
  }
  return next;
}

/** Replays the controller up to `now`. */
export function advanceRollout(
  state: RolloutState,
  obj: JsonObject,
  readiness: Readiness,
  now: number,
) {
  const p = params(obj);
  reconcile(state, p, readiness, state.t);
  for (let i = 0; i < 100_000; i++) {
    const next = nextEvent(state, p, readiness);
    if (next === undefined || next > now) break;
    state.t = next;
    reconcile(state, p, readiness, next);
    state.progressAt = next;
  }
  state.t = Math.max(state.t, now);
  reconcile(state, p, readiness, state.t);
}

/**
 * What a client wrote to the status subresource (kubectl argo rollouts
 * promote / abort / retry): the controller reads it at its next reconcile.
 */
export function applyRolloutStatusWrite(
  state: RolloutState,
  written: unknown,
  now: number,
) {
  const status = asObject(written) ?? {};
  const conditions = asArray(status.pauseConditions);
  if (
    state.pauseStart !== undefined &&
    !conditions.some(c => asObject(c)?.reason === 'CanaryPauseStep')
  ) {
    state.pauseStart = undefined; // promote: the controller sees controllerPause without a condition
    state.controllerPause = true;
  }
  if (status.abort === true && !state.abort) {
    state.abort = true;
    state.abortedAt = now;
    state.pauseStart = undefined;
    state.controllerPause = false;
  } else if (status.abort !== true && state.abort) {
    state.abort = false; // retry
    state.abortedAt = undefined;
    state.progressAt = now;
  }
  if (status.promoteFull === true) state.promoteFull = true;
  if (
    typeof status.currentStepIndex === 'number' &&
    status.currentStepIndex !== state.stepIndex &&
    state.stableHash !== state.currentHash
  ) {
    state.stepIndex = Math.max(0, Math.trunc(status.currentStepIndex));
    state.pauseStart = undefined;
    state.controllerPause = false;
  }
}
