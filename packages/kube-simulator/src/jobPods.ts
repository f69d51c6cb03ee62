/**
 * The pods of Jobs, as the Job controller and the kubelet keep them: `<job>-<5 characters>`,
 * owned by the Job, with its template's labels (the Job's `controller-uid` and `job-name` among
 * them). Their number follows the Job's status (podWorkloadStatus.ts), so the two agree: one
 * pod `Succeeded` for each success (container terminated, `Completed`), one `Failed` for each
 * failure of a `restartPolicy: Never` Job (`Error`, exit code 1), and the active ones Running
 * (crash-looping in place for `OnFailure` when their image is broken). Finished pods stay, as
 * they do until the Job is deleted; the pods of a deleted Job go at the next reconcile.
 */
import { isBrokenPodSpec } from './brokenImages';
import { generatedName, newPod } from './newPod';
import {
  byAge,
  controllerUid,
  nameOf,
  namespaceOf,
  NODES,
  PodControllerHost,
  uidOf,
} from './podObjects';
import { podStatus } from './podStatus';
import {
  asArray,
  asObject,
  clone,
  deepEqual,
  JsonObject,
  rfc3339,
} from './util';

function phaseOf(pod: JsonObject): unknown {
  return asObject(pod.status)?.phase;
}

function count(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

/** A pod's status once its containers have exited: `Succeeded` (exit 0) or `Failed`. */
function finishedStatus(
  pod: JsonObject,
  succeeded: boolean,
  now: number,
): JsonObject {
  const status = podStatus(pod, { ready: false, crashLooping: false, now });
  const reason = succeeded ? 'PodCompleted' : 'PodFailed';
  status.phase = succeeded ? 'Succeeded' : 'Failed';
  status.conditions = asArray(status.conditions).map(raw => {
    const condition = { ...(asObject(raw) ?? {}) };
    if (condition.type === 'PodReadyToStartContainers')
      condition.status = 'False';
    if (condition.type === 'Ready' || condition.type === 'ContainersReady')
      condition.reason = reason;
    return condition;
  });
  status.containerStatuses = asArray(status.containerStatuses).map(raw => {
    const container = asObject(raw) ?? {};
    const running = asObject(asObject(container.state)?.running);
    return {
      ...container,
      ready: false,
      started: false,
      state: {
        terminated: {
          exitCode: succeeded ? 0 : 1,
          reason: succeeded ? 'Completed' : 'Error',
          startedAt: running?.startedAt,
          finishedAt: rfc3339(now),
          containerID: container.containerID,
        },
      },
    };
  });
  return status;
}

/** Brings the pods of every Job in line with its status. */
export function reconcileJobPods(host: PodControllerHost, now: number): void {
  const podsByJob = new Map<string, JsonObject[]>();
  for (const pod of host.all('Pod')) {
    const owner = controllerUid(pod, 'Job');
    if (owner) podsByJob.set(owner, [...(podsByJob.get(owner) ?? []), pod]);
  }
  const live = new Set<string>();
  for (const job of host.all('Job')) {
    live.add(uidOf(job));
    reconcileJob(host, job, podsByJob.get(uidOf(job)) ?? [], now);
  }
  for (const [owner, pods] of podsByJob) {
    if (live.has(owner)) continue;
    for (const pod of pods) host.remove('Pod', namespaceOf(pod), nameOf(pod));
  }
}

function reconcileJob(
  host: PodControllerHost,
  job: JsonObject,
  owned: JsonObject[],
  now: number,
): void {
  const status = asObject(job.status) ?? {};
  const template = asObject(asObject(job.spec)?.template) ?? {};
  const onFailure = asObject(template.spec)?.restartPolicy === 'OnFailure';
  const pods = [...owned].sort(byAge);
  const running = pods.filter(
    p => phaseOf(p) !== 'Succeeded' && phaseOf(p) !== 'Failed',
  );
  let nodeIndex = pods.length;
  const create = () => {
    const node = NODES[nodeIndex++ % NODES.length];
    return host.save(
      'Pod',
      newPod({
        owner: job,
        ownerKind: 'Job',
        ownerApiVersion: 'batch/v1',
        template,
        ...generatedName(job),
        node,
      }),
    );
  };
  const finish = (succeeded: boolean) => {
    const pod = running.shift() ?? create();
    host.save('Pod', {
      ...clone(pod),
      status: finishedStatus(pod, succeeded, now),
    });
  };
  const succeeded = pods.filter(p => phaseOf(p) === 'Succeeded').length;
  for (let i = succeeded; i < count(status.succeeded); i++) finish(true);
  // An OnFailure Job's failures are restarts of its pods, which stay.
  const failed = pods.filter(p => phaseOf(p) === 'Failed').length;
  if (!onFailure)
    for (let i = failed; i < count(status.failed); i++) finish(false);
  const active = count(status.active);
  while (running.length > active) {
    const pod = running.pop()!;
    host.remove('Pod', namespaceOf(pod), nameOf(pod));
  }
  while (running.length < active) running.push(create());
  const ready = count(status.ready);
  running.forEach((pod, i) => {
    const crashLooping =
      onFailure &&
      (host.readiness.neverReady || isBrokenPodSpec(asObject(pod.spec)));
    const next = podStatus(pod, { ready: i < ready, crashLooping, now });
    if (!deepEqual(next, pod.status))
      host.save('Pod', { ...clone(pod), status: next });
  });
}
