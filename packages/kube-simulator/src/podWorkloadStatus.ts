/**
 * What the StatefulSet, DaemonSet and Job controllers of a real cluster would write, computed
 * from time as the Deployment's status is (workloads.ts): a pod becomes ready `readyDelayMs`
 * after it starts, none does under the cluster's `neverReady`, and none running a broken image
 * (brokenImages.ts) ever does.
 *
 * - A StatefulSet makes its pods `<name>-0..n-1` in order, each once the previous one is ready
 *   (all at once with `podManagementPolicy: Parallel`); a template change replaces them from the
 *   highest ordinal down, one at a time, each once the one before is ready, down to the
 *   partition. `currentRevision` becomes `updateRevision` once every pod is updated.
 * - A DaemonSet runs one pod on each of the cluster's nodes (podObjects.ts `NODES`); a template
 *   change replaces `maxUnavailable` of them at a time.
 * - A Job starts at its creation and runs `parallelism` pods at a time, each succeeding
 *   `readyDelayMs` after it started, until `completions` have; its pods fail instead when
 *   broken (or under `neverReady`), one each `readyDelayMs`, until `backoffLimit` is passed.
 *   From Kubernetes 1.31 the terminal condition comes after an interim one (`SuccessCriteriaMet`
 *   before `Complete`, `FailureTarget` before `Failed`), as the Job controller writes them.
 */
import { isBrokenTemplate } from './brokenImages';
import { NODES } from './podObjects';
import { asObject, JsonObject, rfc3339 } from './util';
import { Readiness, RolloutClock, templateHash } from './workloads';

/** One pod a StatefulSet or DaemonSet should have: its slot (ordinal or node), revision, readiness. */
export interface SetPod {
  /** The ordinal of a StatefulSet's pod, the index in `NODES` of a DaemonSet's. */
  slot: number;
  revision: string;
  ready: boolean;
}

export interface SetPlan {
  pods: SetPod[];
  updateRevision: string;
  currentRevision: string;
}

function specOf(obj: JsonObject): JsonObject {
  return asObject(obj.spec) ?? {};
}

function nameOf(obj: JsonObject): string {
  return String(asObject(obj.metadata)?.name ?? '');
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}

/** The revision name of a template, as the controllers name their ControllerRevisions. */
export function revisionOf(obj: JsonObject): string {
  return `${nameOf(obj)}-${templateHash(specOf(obj).template)}`;
}

/**
 * The revision a StatefulSet's or DaemonSet's pods run before an update: its status's
 * `currentRevision` (a StatefulSet's), else its template's.
 */
export function currentRevisionOf(obj: JsonObject): string {
  const current = asObject(obj.status)?.currentRevision;
  return typeof current === 'string' ? current : revisionOf(obj);
}

/**
 * How many `readyDelayMs` steps of this rollout have passed (every step once the rollout is
 * done, none when its pods cannot become ready).
 */
function stepsDone(
  clock: RolloutClock,
  readiness: Readiness,
  broken: boolean,
  now: number,
): number {
  if (broken) return 0;
  if (clock.done || readiness.readyDelayMs <= 0) return Number.MAX_SAFE_INTEGER;
  return Math.floor((now - clock.startedAt) / readiness.readyDelayMs);
}

/** The previous rollout's revision and pods, when this one replaces them. */
function previousOf(clock: RolloutClock) {
  const prev = clock.prevStatus ?? {};
  return {
    revision: clock.prevRevision,
    ready: numberOr(prev.readyReplicas ?? prev.numberReady, 0),
    pods: numberOr(prev.replicas ?? prev.currentNumberScheduled, 0),
  };
}

/** The pods a StatefulSet should have at `now` (marks `clock.done` once rolled out). */
export function statefulSetPlan(
  obj: JsonObject,
  clock: RolloutClock,
  readiness: Readiness,
  now: number,
): SetPlan {
  const spec = specOf(obj);
  const n = numberOr(spec.replicas, 1);
  const updateRevision = revisionOf(obj);
  const broken = readiness.neverReady || isBrokenTemplate(spec.template);
  const steps = stepsDone(clock, readiness, broken, now);
  const prev = previousOf(clock);
  const strategy = asObject(spec.updateStrategy) ?? {};
  const rolling =
    clock.templateChanged &&
    prev.revision !== undefined &&
    prev.revision !== updateRevision &&
    prev.pods > 0;
  let pods: SetPod[];
  let currentRevision = updateRevision;
  if (!rolling) {
    // Created, or scaled: the pods there before stay as they were.
    const kept = clock.templateChanged ? 0 : Math.min(prev.ready, n);
    const ready = Math.min(n, kept + steps);
    const count =
      spec.podManagementPolicy === 'Parallel' ? n : Math.min(n, ready + 1);
    pods = Array.from({ length: count }, (_, i) => ({
      slot: i,
      revision: updateRevision,
      ready: i < ready,
    }));
    if (ready === n) clock.done = true;
  } else {
    const onDelete = strategy.type === 'OnDelete';
    const partition = onDelete
      ? n
      : Math.min(n, numberOr(asObject(strategy.rollingUpdate)?.partition, 0));
    const toUpdate = n - partition;
    const updated = Math.min(toUpdate, steps);
    pods = Array.from({ length: n }, (_, i) => {
      const fromTop = n - 1 - i;
      if (fromTop < updated)
        return { slot: i, revision: updateRevision, ready: true };
      if (fromTop === updated && updated < toUpdate)
        return { slot: i, revision: updateRevision, ready: false };
      return { slot: i, revision: prev.revision!, ready: i < prev.ready };
    });
    if (updated === toUpdate) clock.done = true;
    if (!(clock.done && partition === 0)) currentRevision = prev.revision!;
  }
  if (readiness.neverReady) pods.forEach(p => (p.ready = false));
  return { pods, updateRevision, currentRevision };
}

/** StatefulSet status; zero counters are omitted where the API omits them. */
export function statefulSetStatus(
  obj: JsonObject,
  clock: RolloutClock,
  readiness: Readiness,
  now: number,
): JsonObject {
  const plan = statefulSetPlan(obj, clock, readiness, now);
  const ready = plan.pods.filter(p => p.ready).length;
  const current = plan.pods.filter(
    p => p.revision === plan.currentRevision,
  ).length;
  const updated = plan.pods.filter(
    p => p.revision === plan.updateRevision,
  ).length;
  return {
    observedGeneration: clock.generation,
    replicas: plan.pods.length,
    ...(ready ? { readyReplicas: ready } : {}),
    ...(current ? { currentReplicas: current } : {}),
    ...(updated ? { updatedReplicas: updated } : {}),
    availableReplicas: ready,
    currentRevision: plan.currentRevision,
    updateRevision: plan.updateRevision,
    collisionCount: 0,
  };
}

/** The pods a DaemonSet should have at `now`: one per node (marks `clock.done`). */
export function daemonSetPlan(
  obj: JsonObject,
  clock: RolloutClock,
  readiness: Readiness,
  now: number,
): SetPlan {
  const spec = specOf(obj);
  const updateRevision = revisionOf(obj);
  const broken = readiness.neverReady || isBrokenTemplate(spec.template);
  const steps = stepsDone(clock, readiness, broken, now);
  const prev = previousOf(clock);
  const strategy = asObject(spec.updateStrategy) ?? {};
  const nodes = NODES.length;
  const rolling =
    clock.templateChanged &&
    prev.revision !== undefined &&
    prev.revision !== updateRevision &&
    prev.pods > 0 &&
    strategy.type !== 'OnDelete';
  let pods: SetPod[];
  let currentRevision = updateRevision;
  if (!rolling) {
    pods = NODES.map((_, i) => ({
      slot: i,
      revision: updateRevision,
      ready: steps >= 1,
    }));
    if (steps >= 1) clock.done = true;
  } else {
    const raw = asObject(strategy.rollingUpdate)?.maxUnavailable ?? 1;
    const percent = typeof raw === 'string' && /^(\d+)%$/.exec(raw);
    const batch = Math.max(
      1,
      percent
        ? Math.floor((Number(percent[1]) * nodes) / 100)
        : numberOr(raw, 1),
    );
    const done = Math.min(nodes, steps * batch);
    const started = Math.min(nodes, done + batch);
    pods = NODES.map((_, i) => {
      if (i < done) return { slot: i, revision: updateRevision, ready: true };
      if (i < started)
        return { slot: i, revision: updateRevision, ready: false };
      return { slot: i, revision: prev.revision!, ready: i < prev.ready };
    });
    if (done === nodes) clock.done = true;
    else currentRevision = prev.revision!;
  }
  if (readiness.neverReady) pods.forEach(p => (p.ready = false));
  return { pods, updateRevision, currentRevision };
}

/** DaemonSet status; zero counters are omitted where the API omits them. */
export function daemonSetStatus(
  obj: JsonObject,
  clock: RolloutClock,
  readiness: Readiness,
  now: number,
): JsonObject {
  const plan = daemonSetPlan(obj, clock, readiness, now);
  const ready = plan.pods.filter(p => p.ready).length;
  const updated = plan.pods.filter(
    p => p.revision === plan.updateRevision,
  ).length;
  const desired = NODES.length;
  return {
    currentNumberScheduled: plan.pods.length,
    numberMisscheduled: 0,
    desiredNumberScheduled: desired,
    numberReady: ready,
    observedGeneration: clock.generation,
    ...(updated ? { updatedNumberScheduled: updated } : {}),
    ...(ready ? { numberAvailable: ready } : {}),
    ...(desired - ready > 0 ? { numberUnavailable: desired - ready } : {}),
  };
}

function jobCondition(type: string, at: number, reason = '', message = '') {
  const time = rfc3339(at);
  return {
    type,
    status: 'True',
    lastProbeTime: time,
    lastTransitionTime: time,
    ...(reason ? { reason } : {}),
    ...(message ? { message } : {}),
  };
}

function isFinished(status: JsonObject): boolean {
  const conditions = Array.isArray(status.conditions) ? status.conditions : [];
  return conditions.some(c => {
    const condition = asObject(c);
    return (
      condition?.status === 'True' &&
      (condition.type === 'Complete' || condition.type === 'Failed')
    );
  });
}

export interface JobClock {
  readiness: Readiness;
  /** When the Job was created (ms): it starts then. */
  created: number;
  now: number;
  /** The server is 1.31 or newer: interim conditions come before the terminal one. */
  interimConditions: boolean;
}

/**
 * A Job's status at `now`. A finished Job keeps its status; a suspended one that never started
 * has none yet.
 */
export function jobStatus(job: JsonObject, clock: JobClock): JsonObject {
  const { readiness, now, interimConditions } = clock;
  const previous = asObject(job.status) ?? {};
  if (isFinished(previous)) return previous;
  const spec = specOf(job);
  if (spec.suspend === true && previous.startTime === undefined)
    return previous;
  const start = clock.created;
  const parallelism = numberOr(spec.parallelism, 1);
  const completions = numberOr(spec.completions, 1);
  const backoffLimit = numberOr(spec.backoffLimit, 6);
  const delay = readiness.readyDelayMs;
  const steps =
    delay <= 0 ? Number.MAX_SAFE_INTEGER : Math.floor((now - start) / delay);
  const template = asObject(spec.template);
  const failing = readiness.neverReady || isBrokenTemplate(template);
  const base: JsonObject = {
    startTime:
      typeof previous.startTime === 'string'
        ? previous.startTime
        : rfc3339(start),
    ready: 0,
    terminating: 0,
    uncountedTerminatedPods: {},
  };
  const active = Math.min(parallelism, completions);
  if (failing) {
    // restartPolicy Never: each failed pod is replaced, until backoffLimit is passed.
    // OnFailure: the same pod restarts, and its restarts count instead.
    const onFailure = asObject(template?.spec)?.restartPolicy === 'OnFailure';
    if (steps <= backoffLimit) {
      return {
        ...base,
        ...(active ? { active } : {}),
        ...(!onFailure && steps > 0 ? { failed: steps } : {}),
      };
    }
    const at = start + (backoffLimit + 1) * Math.max(delay, 0);
    const reason = 'BackoffLimitExceeded';
    const message = 'Job has reached the specified backoff limit';
    return {
      ...base,
      failed: onFailure ? active : backoffLimit + 1,
      conditions: [
        ...(interimConditions
          ? [jobCondition('FailureTarget', at, reason, message)]
          : []),
        jobCondition('Failed', at, reason, message),
      ],
    };
  }
  const waves = parallelism > 0 ? Math.ceil(completions / parallelism) : 0;
  if (steps < waves || parallelism === 0) {
    const succeeded = Math.min(completions, steps * parallelism);
    const running = Math.min(parallelism, completions - succeeded);
    return {
      ...base,
      ...(running ? { active: running, ready: running } : {}),
      ...(succeeded ? { succeeded } : {}),
    };
  }
  const at = start + waves * Math.max(delay, 0);
  // The success policy's reason (beta, on by default, from 1.31).
  const reason = interimConditions ? 'CompletionsReached' : '';
  const message = interimConditions
    ? 'Reached expected number of succeeded pods'
    : '';
  return {
    ...base,
    succeeded: completions,
    completionTime: rfc3339(at),
    conditions: [
      ...(interimConditions
        ? [jobCondition('SuccessCriteriaMet', at, reason, message)]
        : []),
      jobCondition('Complete', at, reason, message),
    ],
  };
}
