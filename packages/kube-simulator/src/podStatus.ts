/**
 * A simulated pod's status as the kubelet reports it: phase, conditions, container statuses
 * (crash-looping ones restarting), IPs and QoS class.
 */
import { createHash } from 'node:crypto';
import { asArray, asObject, deepEqual, JsonObject, rfc3339 } from './util';
import { createdOf, nameOf, namespaceOf, NODES, uidOf } from './podObjects';

/** A crash-looping container restarts about this often (the back-off caps at 5 minutes). */
const RESTART_PERIOD_MS = 60_000;

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export interface Containers {
  names: string[];
  images: string[];
}

export function containersOf(podSpec: JsonObject | undefined): Containers {
  const list = asArray(podSpec?.containers).map(c => asObject(c) ?? {});
  return {
    names: list.map(c => String(c.name ?? '')),
    images: list.map(c => String(c.image ?? '')),
  };
}

export function qosClass(podSpec: JsonObject | undefined): string {
  const containers = asArray(podSpec?.containers).map(c => asObject(c) ?? {});
  const resources = containers.map(c => asObject(c.resources) ?? {});
  const any = resources.some(
    r =>
      Object.keys(asObject(r.requests) ?? {}).length ||
      Object.keys(asObject(r.limits) ?? {}).length,
  );
  if (!any) return 'BestEffort';
  const guaranteed = resources.every(r => {
    const limits = asObject(r.limits) ?? {};
    const requests = asObject(r.requests) ?? limits;
    return ['cpu', 'memory'].every(
      k => limits[k] !== undefined && deepEqual(requests[k], limits[k]),
    );
  });
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

function condition(
  type: string,
  ok: boolean,
  previous: JsonObject[],
  now: number,
  reason?: string,
): JsonObject {
  const status = ok ? 'True' : 'False';
  const prev = previous.find(c => c.type === type);
  return {
    type,
    status,
    lastProbeTime: null,
    lastTransitionTime:
      prev && prev.status === status ? prev.lastTransitionTime : rfc3339(now),
    ...(!ok && reason ? { reason } : {}),
  };
}

/**
 * A pod's status as the kubelet reports it: Running, its containers started at `startedAt`;
 * ready or not; crash-looping when `crashLooping`.
 */
export function podStatus(
  pod: JsonObject,
  options: { ready: boolean; crashLooping: boolean; now: number },
): JsonObject {
  const { ready, crashLooping, now } = options;
  const spec = asObject(pod.spec);
  const previous = asObject(pod.status) ?? {};
  const prevConditions = asArray(previous.conditions).map(
    c => asObject(c) ?? {},
  );
  const created = createdOf(pod);
  const startedAt =
    typeof previous.startTime === 'string'
      ? previous.startTime
      : rfc3339(created);
  const uid = uidOf(pod);
  const { names, images } = containersOf(spec);
  const ipHash = sha256(`ip:${uid}`);
  const node = String(spec?.nodeName ?? NODES[0]);
  const nodeIndex = Math.max(0, NODES.indexOf(node));
  const podIP = `10.244.${parseInt(ipHash.slice(0, 2), 16)}.${
    (parseInt(ipHash.slice(2, 4), 16) % 254) + 1
  }`;
  const hostIP = `172.18.0.${nodeIndex + 2}`;
  const restarts = crashLooping
    ? 1 + Math.floor(Math.max(0, now - created) / RESTART_PERIOD_MS)
    : 0;
  const containerStatuses = names.map((name, i) => {
    const image = images[i];
    const common = {
      name,
      image,
      imageID: `docker.io/library/${image.split(':')[0]}@sha256:${sha256(
        `image:${image}`,
      )}`,
      containerID: `containerd://${sha256(
        `container:${uid}:${name}:${restarts}`,
      )}`,
      ready: ready && !crashLooping,
      restartCount: restarts,
      started: !crashLooping,
    };
    if (!crashLooping) {
      return { ...common, state: { running: { startedAt } } };
    }
    return {
      ...common,
      state: {
        waiting: {
          reason: 'CrashLoopBackOff',
          message: `back-off 5m0s restarting failed container=${name} pod=${nameOf(
            pod,
          )}_${namespaceOf(pod)}(${uid})`,
        },
      },
      lastState: {
        terminated: {
          exitCode: 1,
          reason: 'Error',
          startedAt: rfc3339(now - 2000),
          finishedAt: rfc3339(now - 1000),
          containerID: `containerd://${sha256(
            `container:${uid}:${name}:${restarts - 1}`,
          )}`,
        },
      },
    };
  });
  const containersReady = ready && !crashLooping;
  const notReadyReason = 'ContainersNotReady';
  return {
    phase: 'Running',
    conditions: [
      condition('PodReadyToStartContainers', true, prevConditions, now),
      condition('Initialized', true, prevConditions, now),
      condition('Ready', containersReady, prevConditions, now, notReadyReason),
      condition(
        'ContainersReady',
        containersReady,
        prevConditions,
        now,
        notReadyReason,
      ),
      condition('PodScheduled', true, prevConditions, now),
    ],
    hostIP,
    hostIPs: [{ ip: hostIP }],
    podIP,
    podIPs: [{ ip: podIP }],
    startTime: startedAt,
    containerStatuses,
    qosClass: qosClass(spec),
  };
}

export function isReady(pod: JsonObject): boolean {
  return asArray(asObject(pod.status)?.conditions).some(c => {
    const cond = asObject(c);
    return cond?.type === 'Ready' && cond.status === 'True';
  });
}
