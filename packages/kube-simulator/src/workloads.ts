/**
 * What the controllers of a real cluster would write, computed from time
 * instead of from pods (there are none): Deployment and Rollout replica
 * status and conditions, and the HPA's min/max clamp of its target.
 *
 * A workload "rolls out" each time its generation changes: from then on it
 * reports updatedReplicas = spec.replicas and keeps the previous number of
 * available replicas until `readyDelayMs` has passed, after which all
 * replicas are ready and available. With `neverReady` none ever is, and once
 * `spec.progressDeadlineSeconds` (default 600) has passed the Progressing
 * condition turns False with reason ProgressDeadlineExceeded.
 */
import { selectorString } from './selectors';
import { asArray, asObject, isPlainObject, JsonObject, rfc3339 } from './util';

export interface Readiness {
  readyDelayMs: number;
  neverReady: boolean;
}

/** Per-object bookkeeping of the simulated controller. */
export interface RolloutClock {
  generation: number;
  startedAt: number;
  prevAvailable: number;
}

interface Condition {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
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
  for (const digit of String(h)) out += SAFE_ALPHABET[Number(digit) % SAFE_ALPHABET.length];
  return out;
}

function resolveIntOrPercent(value: unknown, total: number, roundUp: boolean): number {
  if (typeof value === 'number') return value;
  const m = typeof value === 'string' ? value.match(/^(\d+)%$/) : null;
  if (!m) return 0;
  const exact = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

function maxUnavailable(spec: JsonObject, replicas: number): number {
  const strategy = asObject(spec.strategy) ?? {};
  if (strategy.type !== 'RollingUpdate' || replicas === 0) return 0;
  const ru = asObject(strategy.rollingUpdate) ?? {};
  const value = resolveIntOrPercent(ru.maxUnavailable ?? '25%', replicas, false);
  return Math.min(value, replicas);
}

/** Keeps timestamps of unchanged conditions, as controllers do. */
function mergeConditions(previous: unknown, next: Condition[], now: number): Condition[] {
  const old = asArray(previous).filter(isPlainObject) as unknown as Condition[];
  const ts = rfc3339(now);
  return next.map(c => {
    const prev = old.find(o => o.type === c.type);
    const sameStatus = prev && prev.status === c.status;
    const sameContent = sameStatus && prev.reason === c.reason && prev.message === c.message;
    return {
      ...c,
      lastUpdateTime: sameContent ? prev.lastUpdateTime : ts,
      lastTransitionTime: sameStatus ? prev.lastTransitionTime : ts,
    };
  });
}

interface Progress {
  replicas: number;
  available: number;
  complete: boolean;
  deadlineExceeded: boolean;
  rsName: string;
  hash: string;
}

function progress(
  obj: JsonObject,
  clock: RolloutClock,
  readiness: Readiness,
  now: number,
): Progress {
  const spec = asObject(obj.spec) ?? {};
  const replicas = typeof spec.replicas === 'number' ? spec.replicas : 1;
  const elapsed = now - clock.startedAt;
  const ready = !readiness.neverReady && elapsed >= readiness.readyDelayMs;
  const available = readiness.neverReady ? 0 : ready ? replicas : Math.min(clock.prevAvailable, replicas);
  const complete = available === replicas;
  const deadline = (typeof spec.progressDeadlineSeconds === 'number' ? spec.progressDeadlineSeconds : 600) * 1000;
  const hash = templateHash(spec.template);
  const name = String(asObject(obj.metadata)?.name ?? '');
  return {
    replicas,
    available,
    complete,
    deadlineExceeded: !complete && elapsed > deadline,
    rsName: `${name}-${hash}`,
    hash,
  };
}

/** Deployment status; zero counters are omitted, as the real API omits them. */
export function deploymentStatus(
  obj: JsonObject,
  clock: RolloutClock,
  readiness: Readiness,
  now: number,
): JsonObject {
  const spec = asObject(obj.spec) ?? {};
  const p = progress(obj, clock, readiness, now);
  const minAvailable = p.replicas - maxUnavailable(spec, p.replicas);
  const status: JsonObject = { observedGeneration: clock.generation };
  if (p.replicas) status.replicas = p.replicas;
  if (p.replicas) status.updatedReplicas = p.replicas;
  if (p.available) status.readyReplicas = p.available;
  if (p.available) status.availableReplicas = p.available;
  if (p.replicas - p.available > 0) status.unavailableReplicas = p.replicas - p.available;
  const progressing: Condition = p.complete
    ? {
        type: 'Progressing',
        status: 'True',
        reason: 'NewReplicaSetAvailable',
        message: `ReplicaSet "${p.rsName}" has successfully progressed.`,
      }
    : p.deadlineExceeded
      ? {
          type: 'Progressing',
          status: 'False',
          reason: 'ProgressDeadlineExceeded',
          message: `ReplicaSet "${p.rsName}" has timed out progressing.`,
        }
      : {
          type: 'Progressing',
          status: 'True',
          reason: 'ReplicaSetUpdated',
          message: `ReplicaSet "${p.rsName}" is progressing.`,
        };
  const available: Condition =
    p.available >= minAvailable
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

/**
 * Argo Rollout status (observedGeneration is a string there). Steps, pauses
 * and analysis are not simulated: a rollout is Healthy once its replicas are.
 */
export function rolloutStatus(
  obj: JsonObject,
  clock: RolloutClock,
  readiness: Readiness,
  now: number,
): JsonObject {
  const spec = asObject(obj.spec) ?? {};
  const p = progress(obj, clock, readiness, now);
  const status: JsonObject = { observedGeneration: String(clock.generation) };
  if (p.replicas) status.replicas = p.replicas;
  if (p.replicas) status.updatedReplicas = p.replicas;
  if (p.available) status.readyReplicas = p.available;
  if (p.available) status.availableReplicas = p.available;
  status.currentPodHash = p.hash;
  if (p.complete) status.stableRS = p.hash;
  else if (isPlainObject(obj.status) && obj.status.stableRS) status.stableRS = obj.status.stableRS;
  status.selector = selectorString(spec.selector);
  if (p.complete) status.phase = 'Healthy';
  else if (p.deadlineExceeded) {
    status.phase = 'Degraded';
    status.message = `ProgressDeadlineExceeded: ReplicaSet "${p.rsName}" has timed out progressing.`;
  } else {
    status.phase = 'Progressing';
    status.message = 'more replicas need to be updated';
  }
  const conditions: Condition[] = [
    p.complete
      ? { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable', message: 'Rollout has successfully progressed' }
      : p.deadlineExceeded
        ? { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: `ReplicaSet "${p.rsName}" has timed out progressing.` }
        : { type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated', message: `Rollout "${String(asObject(obj.metadata)?.name)}" is progressing.` },
    p.complete
      ? { type: 'Available', status: 'True', reason: 'AvailableReason', message: 'Rollout has minimum availability' }
      : { type: 'Available', status: 'False', reason: 'AvailableReason', message: 'Rollout does not have minimum availability' },
    p.complete
      ? { type: 'Healthy', status: 'True', reason: 'RolloutHealthy', message: 'Rollout is healthy' }
      : { type: 'Healthy', status: 'False', reason: 'RolloutHealthy', message: 'Rollout is not healthy' },
  ];
  status.conditions = mergeConditions(asObject(obj.status)?.conditions, conditions, now);
  return status;
}

/** The replica count an HPA would impose on its target (min/max clamp; 0 disables). */
export function hpaDesiredReplicas(hpa: JsonObject, current: number): number {
  const spec = asObject(hpa.spec) ?? {};
  const min = typeof spec.minReplicas === 'number' ? spec.minReplicas : 1;
  const max = typeof spec.maxReplicas === 'number' ? spec.maxReplicas : current;
  if (current === 0) return 0;
  if (current > max) return max;
  if (current < min) return min;
  return current;
}
