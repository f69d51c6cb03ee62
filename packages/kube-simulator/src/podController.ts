/**
 * The deployment, ReplicaSet and kubelet controllers of a real cluster, reduced to what can be
 * seen through the API: for each Deployment, one ReplicaSet per pod template (named
 * `<deployment>-<pod-template-hash>`, owned by the Deployment, with the
 * `deployment.kubernetes.io/revision` annotation that `kubectl rollout history` reads), and the
 * Pods each ReplicaSet owns (`<replicaset>-<5 characters>`), Running, ready or not, with their
 * container statuses; and the core/v1 Events those controllers record.
 *
 * The replica counts come from the same rollout model as the Deployment's status (see
 * `workloads.ts`), so the pods always agree with what the Deployment reports: during a rolling
 * update the old ReplicaSet keeps its ready pods and the new one's pods are not ready yet; once
 * the rollout completes the old ReplicaSets are scaled to 0 (and kept, as revision history). A
 * deleted pod is replaced by a new one (a new name), ready `readyDelayMs` after it was created;
 * when the Deployment goes, its ReplicaSets and their pods go at the next reconcile (garbage
 * collection by owner reference). With `neverReady` every pod is crash-looping
 * (`CrashLoopBackOff`, restarts counted), and so is every pod running a `crashloop` image; a pod
 * running a `broken` image runs and is never ready (brokenImages.ts). Argo Rollouts' pods are not simulated; StatefulSets' and DaemonSets' are in
 * setPods.ts.
 */
import { isBrokenPodSpec, isCrashLoopPodSpec } from './brokenImages';
import {
  EventRecorder,
  expireEvents,
  podStartEvents,
  scaledEvent,
} from './podEvents';
import {
  byAge,
  controllerUid,
  createdOf,
  meta,
  nameOf,
  namespaceOf,
  NODES,
  ownerReference,
  PodControllerHost,
  uidOf,
} from './podObjects';
import { generatedName, newPod } from './newPod';
import { containersOf, isReady, podStatus } from './podStatus';
import { asArray, asObject, clone, deepEqual, JsonObject } from './util';
import { progress, RolloutClock } from './workloads';

export type { PodControllerHost } from './podObjects';

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
export const DESIRED_REPLICAS_ANNOTATION =
  'deployment.kubernetes.io/desired-replicas';
export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';

function revisionOf(rs: JsonObject): number {
  const value = asObject(meta(rs).annotations)?.[REVISION_ANNOTATION];
  const n = Number(value);
  return Number.isInteger(n) ? n : 0;
}

function specReplicas(obj: JsonObject): number {
  const value = asObject(obj.spec)?.replicas;
  return typeof value === 'number' ? value : 0;
}

/** The ReplicaSet the deployment controller makes for `deployment`'s current template. */
function replicaSetFor(
  deployment: JsonObject,
  hash: string,
  name: string,
  revision: number,
  replicas: number,
  desired: number,
  existing: JsonObject | undefined,
): JsonObject {
  const spec = asObject(deployment.spec) ?? {};
  const template = clone(asObject(spec.template) ?? {});
  const templateMeta = (asObject(template.metadata) ?? {}) as JsonObject;
  template.metadata = templateMeta;
  templateMeta.labels = {
    ...(asObject(templateMeta.labels) ?? {}),
    [POD_TEMPLATE_HASH_LABEL]: hash,
  };
  const selector = clone(asObject(spec.selector) ?? {});
  selector.matchLabels = {
    ...(asObject(selector.matchLabels) ?? {}),
    [POD_TEMPLATE_HASH_LABEL]: hash,
  };
  const base = existing ? clone(existing) : {};
  const baseMeta = (asObject(base.metadata) ?? {}) as JsonObject;
  return {
    ...base,
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      ...baseMeta,
      name,
      namespace: namespaceOf(deployment),
      labels: clone(templateMeta.labels),
      annotations: {
        ...(asObject(baseMeta.annotations) ?? {}),
        [DESIRED_REPLICAS_ANNOTATION]: String(desired),
        [REVISION_ANNOTATION]: String(revision),
      },
      ownerReferences: [ownerReference('Deployment', 'apps/v1', deployment)],
    },
    spec: { replicas, selector, template },
    status: asObject(base.status) ?? { replicas: 0 },
  };
}

/** What one ReplicaSet should have: pods, and how many of them are ready. */
interface Target {
  rs: JsonObject;
  replicas: number;
  ready: number;
}

/**
 * Brings ReplicaSets, Pods and Events in line with the Deployments at `now`. Idempotent: a second
 * call at the same instant changes nothing.
 */
export function reconcilePods(host: PodControllerHost, now: number): void {
  const events = new EventRecorder(host, now);
  const deployments = host.deployments();
  const liveDeployments = new Set(deployments.map(d => uidOf(d.obj)));
  const replicaSets = host.all('ReplicaSet');
  const targets = deployments.flatMap(({ obj, clock }) =>
    reconcileDeployment(host, events, obj, clock, replicaSets, now),
  );

  // Garbage collection: ReplicaSets whose Deployment is gone.
  for (const rs of host.all('ReplicaSet')) {
    const owner = controllerUid(rs, 'Deployment');
    if (owner && !liveDeployments.has(owner)) {
      host.remove('ReplicaSet', namespaceOf(rs), nameOf(rs));
    }
  }

  // The pods of each ReplicaSet, read once.
  const podsByOwner = new Map<string, JsonObject[]>();
  for (const pod of host.all('Pod')) {
    const owner = controllerUid(pod, 'ReplicaSet');
    if (!owner || meta(pod).deletionTimestamp) continue;
    const list = podsByOwner.get(owner) ?? [];
    list.push(pod);
    podsByOwner.set(owner, list);
  }
  for (const target of targets) {
    const owned = podsByOwner.get(uidOf(target.rs)) ?? [];
    reconcileReplicaSetPods(host, events, target, owned, now);
  }

  // Pods whose ReplicaSet is gone.
  const liveReplicaSets = new Set(host.all('ReplicaSet').map(uidOf));
  for (const pod of host.all('Pod')) {
    const owner = controllerUid(pod, 'ReplicaSet');
    if (owner && !liveReplicaSets.has(owner)) {
      host.remove('Pod', namespaceOf(pod), nameOf(pod));
    }
  }

  expireEvents(host, now);
}

/** The deployment controller for one Deployment: its ReplicaSets, and what each should have. */
function reconcileDeployment(
  host: PodControllerHost,
  events: EventRecorder,
  deployment: JsonObject,
  clock: RolloutClock,
  replicaSets: JsonObject[],
  now: number,
): Target[] {
  const targets: Target[] = [];
  const p = progress(deployment, clock, host.readiness, now);
  const owned = replicaSets.filter(
    rs => controllerUid(rs, 'Deployment') === uidOf(deployment),
  );
  const maxRevision = Math.max(0, ...owned.map(revisionOf));
  let current = owned.find(rs => nameOf(rs) === p.rsName);
  const revision =
    current && revisionOf(current) === maxRevision
      ? maxRevision
      : maxRevision + 1;
  const newReady =
    clock.templateChanged && !p.done ? 0 : Math.min(p.available, p.updated);
  const olds = owned
    .filter(rs => rs !== current)
    .sort(
      (a, b) =>
        specReplicas(b) - specReplicas(a) || revisionOf(b) - revisionOf(a),
    );
  const oldReplicas = Math.max(0, p.total - p.updated);
  const previousReplicas = current ? specReplicas(current) : 0;
  const nextRs = replicaSetFor(
    deployment,
    p.hash,
    p.rsName,
    revision,
    p.updated,
    p.desired,
    current,
  );
  if (!current || !deepEqual(nextRs, current)) {
    current = host.save('ReplicaSet', nextRs);
  }
  if (previousReplicas !== p.updated) {
    scaledEvent(events, deployment, p.rsName, previousReplicas, p.updated);
  }
  targets.push({ rs: current, replicas: p.updated, ready: newReady });
  olds.forEach((old, i) => {
    let rs = old;
    const replicas = i === 0 ? oldReplicas : 0;
    if (specReplicas(rs) !== replicas) {
      scaledEvent(events, deployment, nameOf(rs), specReplicas(rs), replicas);
      const next = clone(rs);
      (next.spec as JsonObject).replicas = replicas;
      rs = host.save('ReplicaSet', next);
    }
    const ready = Math.max(0, Math.min(replicas, p.available - newReady));
    targets.push({ rs, replicas, ready });
  });
  annotateRevision(host, deployment, revision);
  return targets;
}

/** The revision annotation `kubectl rollout history` reads, on the Deployment. */
function annotateRevision(
  host: PodControllerHost,
  deployment: JsonObject,
  revision: number,
) {
  const annotations = asObject(meta(deployment).annotations) ?? {};
  if (annotations[REVISION_ANNOTATION] !== String(revision)) {
    const next = clone(deployment);
    const m = next.metadata as JsonObject;
    m.annotations = {
      ...(asObject(m.annotations) ?? {}),
      [REVISION_ANNOTATION]: String(revision),
    };
    host.save('Deployment', next);
  }
}

function reconcileReplicaSetPods(
  host: PodControllerHost,
  events: EventRecorder,
  target: Target,
  owned: JsonObject[],
  now: number,
): void {
  const { rs } = target;
  let pods = [...owned].sort(byAge);
  if (pods.length > target.replicas) {
    pods = scaleDownPods(host, events, rs, pods, target.replicas);
  }
  scaleUpPods(host, events, rs, pods, target.replicas);
  pods = updatePodStatuses(host, events, pods, target.ready, now);
  const readyCount = pods.filter(isReady).length;
  const status: JsonObject = { replicas: pods.length };
  // The API omits zero counters (omitempty), except replicas.
  if (pods.length) status.fullyLabeledReplicas = pods.length;
  if (readyCount) status.readyReplicas = readyCount;
  if (readyCount) status.availableReplicas = readyCount;
  status.observedGeneration = meta(rs).generation;
  if (!deepEqual(status, rs.status)) {
    host.save('ReplicaSet', { ...clone(rs), status });
  }
}

/** Scale down: not-ready pods first, then the newest (the ReplicaSet controller's ranking). */
function scaleDownPods(
  host: PodControllerHost,
  events: EventRecorder,
  rs: JsonObject,
  pods: JsonObject[],
  replicas: number,
): JsonObject[] {
  const ranked = [...pods].sort((a, b) => {
    const ra = isReady(a) ? 1 : 0;
    const rb = isReady(b) ? 1 : 0;
    return ra - rb || createdOf(b) - createdOf(a);
  });
  const doomed = ranked.slice(0, pods.length - replicas);
  for (const pod of doomed) {
    host.remove('Pod', namespaceOf(rs), nameOf(pod));
    events.record({
      involved: { kind: 'ReplicaSet', apiVersion: 'apps/v1', obj: rs },
      type: 'Normal',
      reason: 'SuccessfulDelete',
      message: `Deleted pod: ${nameOf(pod)}`,
      component: 'replicaset-controller',
    });
  }
  return pods.filter(p => !doomed.includes(p));
}

/** Scale up: new pods (added to `pods`), spread over the nodes. */
function scaleUpPods(
  host: PodControllerHost,
  events: EventRecorder,
  rs: JsonObject,
  pods: JsonObject[],
  replicas: number,
) {
  const nodeLoad = new Map(NODES.map(n => [n, 0]));
  for (const pod of pods) {
    const node = String(asObject(pod.spec)?.nodeName ?? '');
    if (nodeLoad.has(node)) nodeLoad.set(node, nodeLoad.get(node)! + 1);
  }
  while (pods.length < replicas) {
    const node = [...nodeLoad].sort((a, b) => a[1] - b[1])[0][0];
    nodeLoad.set(node, nodeLoad.get(node)! + 1);
    const { name, generateName } = generatedName(rs);
    const template = asObject(asObject(rs.spec)?.template) ?? {};
    const pod = host.save(
      'Pod',
      newPod({
        owner: rs,
        ownerKind: 'ReplicaSet',
        ownerApiVersion: 'apps/v1',
        template,
        name,
        generateName,
        node,
      }),
    );
    pods.push(pod);
    events.record({
      involved: { kind: 'ReplicaSet', apiVersion: 'apps/v1', obj: rs },
      type: 'Normal',
      reason: 'SuccessfulCreate',
      message: `Created pod: ${name}`,
      component: 'replicaset-controller',
    });
    podStartEvents(events, pod, node);
  }
}

/**
 * Readiness: the oldest pods first, each no sooner than readyDelayMs after it was created, at
 * most `readyTarget` of them. Returns the pods as stored.
 */
function updatePodStatuses(
  host: PodControllerHost,
  events: EventRecorder,
  pods: JsonObject[],
  readyTarget: number,
  now: number,
): JsonObject[] {
  let ready = 0;
  return pods.sort(byAge).map(pod => {
    const spec = asObject(pod.spec);
    const crashLooping = host.readiness.neverReady || isCrashLoopPodSpec(spec);
    // A `broken` image runs, its readiness probe failing: never ready, never restarted.
    const unready = crashLooping || isBrokenPodSpec(spec);
    const old = now - createdOf(pod) >= host.readiness.readyDelayMs;
    const isReadyNow = !unready && old && ready < readyTarget;
    if (isReadyNow) ready += 1;
    const status = podStatus(pod, { ready: isReadyNow, crashLooping, now });
    if (deepEqual(status, pod.status)) return pod;
    const previous = asArray(asObject(pod.status)?.containerStatuses).map(
      c => asObject(c) ?? {},
    );
    const wasCrashing = previous.some(
      c => asObject(asObject(c.state)?.waiting) !== undefined,
    );
    const wasProbedUnready = previous.some(
      c => c.started === true && c.ready === false,
    );
    const saved = host.save('Pod', { ...clone(pod), status });
    if (unready && !crashLooping && !wasProbedUnready) {
      events.record({
        involved: { kind: 'Pod', apiVersion: 'v1', obj: pod },
        type: 'Warning',
        reason: 'Unhealthy',
        message: 'Readiness probe failed: the container never became ready',
        component: 'kubelet',
        host: String(asObject(pod.spec)?.nodeName ?? ''),
      });
    }
    if (crashLooping && !wasCrashing) {
      for (const name of containersOf(asObject(pod.spec)).names) {
        events.record({
          involved: { kind: 'Pod', apiVersion: 'v1', obj: pod },
          type: 'Warning',
          reason: 'BackOff',
          message: 'Back-off restarting failed container',
          component: 'kubelet',
          host: String(asObject(pod.spec)?.nodeName ?? ''),
          fieldPath: `spec.containers{${name}}`,
        });
      }
    }
    return saved;
  });
}
