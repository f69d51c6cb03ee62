/**
 * The simulated Argo Rollouts controller's state of one Rollout (see rollouts.ts): its
 * ReplicaSets as batches of pods, each ready at a virtual time, and where the canary is.
 */
import { Readiness } from './workloads';

export interface Batch {
  count: number;
  readyAt: number;
}

export interface ReplicaSetState {
  hash: string;
  batches: Batch[];
}

export interface RolloutState {
  /** The virtual time the state has been advanced to. */
  t: number;
  currentHash?: string;
  stableHash?: string;
  stepsKey?: string;
  revision: number;
  replicaSets: ReplicaSetState[];
  stepIndex: number;
  /** Start of the CanaryPauseStep pause condition, when present. */
  pauseStart?: number;
  controllerPause: boolean;
  abort: boolean;
  abortedAt?: number;
  promoteFull: boolean;
  /** Last time the rollout made progress (progress deadline). */
  progressAt: number;
}

export function newRolloutState(now: number): RolloutState {
  return {
    t: now,
    revision: 0,
    replicaSets: [],
    stepIndex: 0,
    controllerPause: false,
    abort: false,
    promoteFull: false,
    progressAt: now,
  };
}

export function cloneRolloutState(state: RolloutState): RolloutState {
  return JSON.parse(JSON.stringify(state));
}

export function replicasOf(rs: ReplicaSetState | undefined): number {
  return rs ? rs.batches.reduce((n, b) => n + b.count, 0) : 0;
}

export function availableOf(
  rs: ReplicaSetState | undefined,
  readiness: Readiness,
  t: number,
): number {
  if (!rs || readiness.neverReady) return 0;
  return rs.batches.reduce((n, b) => n + (b.readyAt <= t ? b.count : 0), 0);
}
