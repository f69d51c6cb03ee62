/**
 * What the controllers of a real cluster would write, computed from time
 * instead of from pods (there are none): Deployment replica status and
 * conditions (Rollouts: see rollouts.ts; HPAs: hpaStatus.ts).
 *
 * Each generation change starts a rollout. Its new pods become ready
 * `readyDelayMs` later. Until then the status has the shape a real rolling
 * update shows right after it starts:
 * - a new Deployment (nothing available before): updatedReplicas =
 *   spec.replicas, available 0;
 * - a pod template change: the old pods stay available down to
 *   replicas - maxUnavailable, the new ReplicaSet is scaled to
 *   replicas + maxSurge - old, so updatedReplicas < spec.replicas and
 *   status.replicas counts old + new pods (Recreate: old pods gone);
 * - a replica count change only: updatedReplicas = spec.replicas, available
 *   stays at the previous count (capped).
 * A Deployment whose pod template runs a broken image (brokenImages.ts) is the same for its new
 * pods alone: the old ones stay available, the rollout never completes.
 * `neverReady` means no pod of the cluster is ready (crash-looping): the
 * available count is 0 and a rollout in progress never completes; once
 * `spec.progressDeadlineSeconds` (default 600) has passed, Progressing turns
 * False with reason ProgressDeadlineExceeded.
 */
import { isBrokenTemplate } from './brokenImages';
import { Condition as AnyCondition, mergeConditions } from './conditions';
import { asArray, asObject, JsonObject, rfc3339 } from './util';

type Condition = AnyCondition & { status: 'True' | 'False' };

export interface Readiness {
  readyDelayMs: number;
  neverReady: boolean;
}

/** Per-object bookkeeping of the simulated controller. */
export interface RolloutClock {
  generation: number;
  startedAt: number;
  /** Available replicas when this rollout started. */
  prevAvailable: number;
  /** Whether the pod template changed (a new ReplicaSet), or only the replica count. */
  templateChanged: boolean;
  /** Set once the rollout has been observed complete. */
  done: boolean;
  /** The status before this rollout (StatefulSets and DaemonSets: the pods it replaces). */
  prevStatus?: JsonObject;
  /** The revision this rollout replaces (StatefulSets and DaemonSets). */
  prevRevision?: string;
}

const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** A pod-template-hash in the style of the deployment controller (fnv32a, safe-encoded). */
export function templateHash(template: unknown): string {
  let h = 0x811c9dc5;
  const text = JSON.stringify(template ?? {});
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  let out = '';
  for (const digit of String(h))
    out += SAFE_ALPHABET[Number(digit) % SAFE_ALPHABET.length];
  return out;
}

function resolveIntOrPercent(
  value: unknown,
  total: number,
  roundUp: boolean,
): number {
  if (typeof value === 'number') return value;
  const m = typeof value === 'string' ? value.match(/^(\d+)%$/) : null;
  if (!m) return 0;
  const exact = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

interface RollingParams {
  recreate: boolean;
  maxSurge: number;
  maxUnavailable: number;
}

function rollingParams(obj: JsonObject, replicas: number): RollingParams {
  const spec = asObject(obj.spec) ?? {};
  const strategy = asObject(spec.strategy) ?? {};
  let surge: unknown;
  let unavailable: unknown;
  if (obj.kind === 'Rollout') {
    const canary = asObject(strategy.canary);
    if (!canary)
      return { recreate: false, maxSurge: replicas, maxUnavailable: 0 }; // blueGreen: full preview RS
    surge = canary.maxSurge ?? '25%';
    unavailable = canary.maxUnavailable ?? 0;
  } else {
    if (strategy.type === 'Recreate')
      return { recreate: true, maxSurge: 0, maxUnavailable: replicas };
    const ru = asObject(strategy.rollingUpdate) ?? {};
    surge = ru.maxSurge ?? '25%';
    unavailable = ru.maxUnavailable ?? '25%';
  }
  let maxSurge = resolveIntOrPercent(surge, replicas, true);
  const maxUnavailable = Math.min(
    resolveIntOrPercent(unavailable, replicas, false),
    replicas,
  );
  if (maxSurge === 0 && maxUnavailable === 0) maxSurge = 1; // the API forbids both 0
  return { recreate: false, maxSurge, maxUnavailable };
}

export interface Progress {
  /** spec.replicas */
  desired: number;
  /** status.replicas: pods of the old and new ReplicaSets */
  total: number;
  updated: number;
  available: number;
  done: boolean;
  deadlineExceeded: boolean;
  minAvailable: number;
  rsName: string;
  hash: string;
}

/** Where the rollout of `obj` stands at `now` (marks `clock.done` once complete). */
export function progress(
  obj: JsonObject,
  clock: RolloutClock,
  readiness: Readiness,
  now: number,
): Progress {
  const spec = asObject(obj.spec) ?? {};
  const desired = typeof spec.replicas === 'number' ? spec.replicas : 1;
  const elapsed = now - clock.startedAt;
  // A Deployment whose template runs a broken image never completes; its old pods stay.
  const broken = obj.kind === 'Deployment' && isBrokenTemplate(spec.template);
  if (
    !clock.done &&
    !readiness.neverReady &&
    !broken &&
    elapsed >= readiness.readyDelayMs
  )
    clock.done = true;
  const params = rollingParams(obj, desired);
  let total = desired;
  let updated = desired;
  let available = desired;
  if (!clock.done) {
    if (clock.templateChanged && clock.prevAvailable > 0) {
      const old = params.recreate
        ? 0
        : Math.min(
            clock.prevAvailable,
            Math.max(desired - params.maxUnavailable, 0),
          );
      updated = Math.max(0, Math.min(desired, desired + params.maxSurge - old));
      total = old + updated;
      available = old;
    } else {
      available = Math.min(clock.prevAvailable, desired);
    }
  }
  if (readiness.neverReady) available = 0;
  const deadline =
    (typeof spec.progressDeadlineSeconds === 'number'
      ? spec.progressDeadlineSeconds
      : 600) * 1000;
  const hash = templateHash(spec.template);
  const name = String(asObject(obj.metadata)?.name ?? '');
  return {
    desired,
    total,
    updated,
    available,
    done: clock.done,
    deadlineExceeded: !clock.done && elapsed > deadline,
    minAvailable: desired - (params.recreate ? desired : params.maxUnavailable),
    rsName: `${name}-${hash}`,
    hash,
  };
}

function progressingCondition(
  p: Progress,
  messages: { done: string; progressing: string },
): Condition {
  if (p.done) {
    return {
      type: 'Progressing',
      status: 'True',
      reason: 'NewReplicaSetAvailable',
      message: messages.done,
    };
  }
  if (p.deadlineExceeded) {
    return {
      type: 'Progressing',
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
      message: `ReplicaSet "${p.rsName}" has timed out progressing.`,
    };
  }
  return {
    type: 'Progressing',
    status: 'True',
    reason: 'ReplicaSetUpdated',
    message: messages.progressing,
  };
}

function counters(p: Progress, status: JsonObject) {
  // The API omits zero counters (omitempty).
  if (p.total) status.replicas = p.total;
  if (p.updated) status.updatedReplicas = p.updated;
  if (p.available) status.readyReplicas = p.available;
  if (p.available) status.availableReplicas = p.available;
  if (p.desired - p.available > 0)
    status.unavailableReplicas = p.desired - p.available;
}

/** Deployment status; zero counters are omitted, as the real API omits them. */
export function deploymentStatus(
  obj: JsonObject,
  clock: RolloutClock,
  readiness: Readiness,
  now: number,
): JsonObject {
  const p = progress(obj, clock, readiness, now);
  const status: JsonObject = { observedGeneration: clock.generation };
  counters(p, status);
  const progressing = progressingCondition(p, {
    done: `ReplicaSet "${p.rsName}" has successfully progressed.`,
    progressing: `ReplicaSet "${p.rsName}" is progressing.`,
  });
  const available: Condition =
    p.available >= p.minAvailable
      ? {
          type: 'Available',
          status: 'True',
          reason: 'MinimumReplicasAvailable',
          message: 'Deployment has minimum availability.',
        }
      : {
          type: 'Available',
          status: 'False',
          reason: 'MinimumReplicasUnavailable',
          message: 'Deployment does not have minimum availability.',
        };
  const previous = asObject(obj.status)?.conditions;
  status.conditions = mergeConditions(previous, [available, progressing], now);
  return status;
}

/** Pods a PDB selects, summed over the workloads whose pod template it matches. */
export interface SelectedPods {
  expected: number;
  healthy: number;
}

/** PodDisruptionBudget status as the disruption controller computes it. */
export function pdbStatus(
  pdb: JsonObject,
  pods: SelectedPods,
  now: number,
): JsonObject {
  const spec = asObject(pdb.spec) ?? {};
  const generation = asObject(pdb.metadata)?.generation;
  let desiredHealthy: number;
  if (spec.maxUnavailable !== undefined) {
    desiredHealthy = Math.max(
      0,
      pods.expected -
        resolveIntOrPercent(spec.maxUnavailable, pods.expected, true),
    );
  } else {
    desiredHealthy = resolveIntOrPercent(
      spec.minAvailable ?? 0,
      pods.expected,
      true,
    );
  }
  const disruptionsAllowed = Math.max(0, pods.healthy - desiredHealthy);
  const allowed = disruptionsAllowed > 0;
  const previous = asArray(asObject(pdb.status)?.conditions).map(asObject)[0];
  const status = allowed ? 'True' : 'False';
  return {
    observedGeneration: generation,
    disruptionsAllowed,
    currentHealthy: pods.healthy,
    desiredHealthy,
    expectedPods: pods.expected,
    conditions: [
      {
        type: 'DisruptionAllowed',
        status,
        reason: allowed ? 'SufficientPods' : 'InsufficientPods',
        message: '',
        observedGeneration: generation,
        lastTransitionTime:
          previous && previous.status === status
            ? previous.lastTransitionTime
            : rfc3339(now),
      },
    ],
  };
}
