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
 * (`CrashLoopBackOff`, restarts counted). Argo Rollouts' pods are not simulated.
 */
import { createHash, randomInt } from 'node:crypto';
import {
  asArray,
  asObject,
  clone,
  deepEqual,
  JsonObject,
  rfc3339,
} from './util';
import { progress, Readiness, RolloutClock } from './workloads';

/** What the controllers need of the store: reads, and writes that are not API requests. */
export interface PodControllerHost {
  readonly readiness: Readiness;
  /** Deployments (not Rollouts) with their rollout clock, as stored. */
  deployments(): Array<{ obj: JsonObject; clock: RolloutClock }>;
  /** Stored objects of a kind, in no particular order (copies are not needed: read only). */
  all(kind: 'ReplicaSet' | 'Pod' | 'Event'): JsonObject[];
  /**
   * Creates the object (uid, creationTimestamp and resourceVersion assigned) or, when it
   * exists, replaces it if it changed (a new resourceVersion); returns it as stored. Not an API
   * write: no history.
   */
  save(
    kind: 'Deployment' | 'ReplicaSet' | 'Pod' | 'Event',
    obj: JsonObject,
  ): JsonObject;
  remove(
    kind: 'ReplicaSet' | 'Pod' | 'Event',
    namespace: string,
    name: string,
  ): void;
}

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
export const DESIRED_REPLICAS_ANNOTATION =
  'deployment.kubernetes.io/desired-replicas';
export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';
/** The simulated nodes pods are spread over. */
export const NODES = ['sim-node-1', 'sim-node-2', 'sim-node-3'];
/** Events live an hour on a real API server (`--event-ttl`); at most this many are kept. */
export const EVENT_TTL_MS = 60 * 60_000;
export const MAX_EVENTS = 1000;
/** A crash-looping container restarts about this often (the back-off caps at 5 minutes). */
const RESTART_PERIOD_MS = 60_000;
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function meta(obj: JsonObject): JsonObject {
  return (asObject(obj.metadata) ?? {}) as JsonObject;
}

function nameOf(obj: JsonObject): string {
  return String(meta(obj).name ?? '');
}

function namespaceOf(obj: JsonObject): string {
  return String(meta(obj).namespace ?? '');
}

function uidOf(obj: JsonObject): string {
  return String(meta(obj).uid ?? '');
}

function createdOf(obj: JsonObject): number {
  const ts = meta(obj).creationTimestamp;
  return typeof ts === 'string' ? Date.parse(ts) : 0;
}

/** The uid of the object's controller of `kind` (ownerReferences with `controller: true`). */
export function controllerUid(
  obj: JsonObject,
  kind: string,
): string | undefined {
  for (const raw of asArray(meta(obj).ownerReferences)) {
    const ref = asObject(raw);
    if (ref?.controller === true && ref.kind === kind) return String(ref.uid);
  }
  return undefined;
}

function ownerReference(kind: string, apiVersion: string, owner: JsonObject) {
  return {
    apiVersion,
    kind,
    name: nameOf(owner),
    uid: uidOf(owner),
    controller: true,
    blockOwnerDeletion: true,
  };
}

function revisionOf(rs: JsonObject): number {
  const value = asObject(meta(rs).annotations)?.[REVISION_ANNOTATION];
  const n = Number(value);
  return Number.isInteger(n) ? n : 0;
}

function specReplicas(obj: JsonObject): number {
  const value = asObject(obj.spec)?.replicas;
  return typeof value === 'number' ? value : 0;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Oldest first, then by name: the order the ready pods are picked in. */
function byAge(a: JsonObject, b: JsonObject): number {
  return createdOf(a) - createdOf(b) || nameOf(a).localeCompare(nameOf(b));
}

interface EventInput {
  involved: { kind: string; apiVersion: string; obj: JsonObject };
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  component: string;
  host?: string;
  fieldPath?: string;
}

/** Records events as the API server's event sink does: a repeat bumps `count`. */
class EventRecorder {
  private serial = 0;
  /** The stored events by involved object, reason and message (read at the first record). */
  private index?: Map<string, JsonObject>;
  constructor(
    private readonly host: PodControllerHost,
    private readonly now: number,
  ) {}

  private static key(uid: unknown, reason: unknown, message: unknown): string {
    return JSON.stringify([uid, reason, message]);
  }

  record(input: EventInput): void {
    const { involved } = input;
    const uid = uidOf(involved.obj);
    if (!this.index) {
      this.index = new Map(
        this.host
          .all('Event')
          .map(e => [
            EventRecorder.key(
              asObject(e.involvedObject)?.uid,
              e.reason,
              e.message,
            ),
            e,
          ]),
      );
    }
    const key = EventRecorder.key(uid, input.reason, input.message);
    const existing = this.index.get(key);
    const ts = rfc3339(this.now);
    if (existing) {
      const next = clone(existing);
      next.count = Number(existing.count ?? 1) + 1;
      next.lastTimestamp = ts;
      this.index.set(key, this.host.save('Event', next));
      return;
    }
    this.serial += 1;
    const stamp = (BigInt(this.now) * 1_000_000n + BigInt(this.serial))
      .toString(16)
      .padStart(16, '0');
    const saved = this.host.save('Event', {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        name: `${nameOf(involved.obj)}.${stamp}`,
        namespace: namespaceOf(involved.obj),
      },
      involvedObject: {
        kind: involved.kind,
        namespace: namespaceOf(involved.obj),
        name: nameOf(involved.obj),
        uid,
        apiVersion: involved.apiVersion,
        resourceVersion: String(meta(involved.obj).resourceVersion ?? ''),
        ...(input.fieldPath ? { fieldPath: input.fieldPath } : {}),
      },
      reason: input.reason,
      message: input.message,
      source: {
        component: input.component,
        ...(input.host ? { host: input.host } : {}),
      },
      firstTimestamp: ts,
      lastTimestamp: ts,
      count: 1,
      type: input.type,
      eventTime: null,
      reportingComponent: input.component,
      reportingInstance: input.host ?? '',
    });
    this.index.set(key, saved);
  }
}

interface Containers {
  names: string[];
  images: string[];
}

function containersOf(podSpec: JsonObject | undefined): Containers {
  const list = asArray(podSpec?.containers).map(c => asObject(c) ?? {});
  return {
    names: list.map(c => String(c.name ?? '')),
    images: list.map(c => String(c.image ?? '')),
  };
}

function qosClass(podSpec: JsonObject | undefined): string {
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

function randomSuffix(): string {
  let out = '';
  for (let i = 0; i < 5; i++)
    out += NAME_ALPHABET[randomInt(NAME_ALPHABET.length)];
  return out;
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
  const targets: Target[] = [];

  for (const { obj: deployment, clock } of deployments) {
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

function scaledEvent(
  events: EventRecorder,
  deployment: JsonObject,
  rsName: string,
  from: number,
  to: number,
) {
  events.record({
    involved: { kind: 'Deployment', apiVersion: 'apps/v1', obj: deployment },
    type: 'Normal',
    reason: 'ScalingReplicaSet',
    message: `Scaled ${
      to > from ? 'up' : 'down'
    } replica set ${rsName} to ${to} from ${from}`,
    component: 'deployment-controller',
  });
}

function reconcileReplicaSetPods(
  host: PodControllerHost,
  events: EventRecorder,
  target: Target,
  owned: JsonObject[],
  now: number,
): void {
  const { rs } = target;
  const namespace = namespaceOf(rs);
  let pods = [...owned].sort(byAge);
  const crashLooping = host.readiness.neverReady;
  const template = asObject(asObject(rs.spec)?.template) ?? {};

  // Scale down: not-ready pods first, then the newest (the ReplicaSet controller's ranking).
  if (pods.length > target.replicas) {
    const ranked = [...pods].sort((a, b) => {
      const ra = isReady(a) ? 1 : 0;
      const rb = isReady(b) ? 1 : 0;
      return ra - rb || createdOf(b) - createdOf(a);
    });
    const doomed = ranked.slice(0, pods.length - target.replicas);
    for (const pod of doomed) {
      host.remove('Pod', namespace, nameOf(pod));
      events.record({
        involved: { kind: 'ReplicaSet', apiVersion: 'apps/v1', obj: rs },
        type: 'Normal',
        reason: 'SuccessfulDelete',
        message: `Deleted pod: ${nameOf(pod)}`,
        component: 'replicaset-controller',
      });
    }
    pods = pods.filter(p => !doomed.includes(p));
  }

  // Scale up: new pods, spread over the nodes.
  const nodeLoad = new Map(NODES.map(n => [n, 0]));
  for (const pod of pods) {
    const node = String(asObject(pod.spec)?.nodeName ?? '');
    if (nodeLoad.has(node)) nodeLoad.set(node, nodeLoad.get(node)! + 1);
  }
  while (pods.length < target.replicas) {
    const node = [...nodeLoad].sort((a, b) => a[1] - b[1])[0][0];
    nodeLoad.set(node, nodeLoad.get(node)! + 1);
    const name = `${nameOf(rs)}-${randomSuffix()}`;
    const templateMeta = asObject(template.metadata) ?? {};
    const spec = clone(asObject(template.spec) ?? {});
    spec.nodeName = node;
    spec.restartPolicy = spec.restartPolicy ?? 'Always';
    spec.schedulerName = spec.schedulerName ?? 'default-scheduler';
    spec.serviceAccountName = spec.serviceAccountName ?? 'default';
    spec.terminationGracePeriodSeconds =
      spec.terminationGracePeriodSeconds ?? 30;
    spec.dnsPolicy = spec.dnsPolicy ?? 'ClusterFirst';
    const pod = host.save('Pod', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        generateName: `${nameOf(rs)}-`,
        namespace,
        labels: clone(asObject(templateMeta.labels) ?? {}),
        ...(templateMeta.annotations
          ? { annotations: clone(templateMeta.annotations) }
          : {}),
        ownerReferences: [ownerReference('ReplicaSet', 'apps/v1', rs)],
      },
      spec,
      status: { phase: 'Pending', qosClass: qosClass(spec) },
    });
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

  // Readiness: the oldest pods first, each no sooner than readyDelayMs after it was created.
  let ready = 0;
  pods = pods.sort(byAge).map(pod => {
    const old = now - createdOf(pod) >= host.readiness.readyDelayMs;
    const isReadyNow = !crashLooping && old && ready < target.ready;
    if (isReadyNow) ready += 1;
    const status = podStatus(pod, { ready: isReadyNow, crashLooping, now });
    if (!deepEqual(status, pod.status)) {
      const wasCrashing = asArray(asObject(pod.status)?.containerStatuses).some(
        c => asObject(asObject(asObject(c)?.state)?.waiting) !== undefined,
      );
      const saved = host.save('Pod', { ...clone(pod), status });
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
    }
    return pod;
  });
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

function isReady(pod: JsonObject): boolean {
  return asArray(asObject(pod.status)?.conditions).some(c => {
    const cond = asObject(c);
    return cond?.type === 'Ready' && cond.status === 'True';
  });
}

function podStartEvents(events: EventRecorder, pod: JsonObject, node: string) {
  events.record({
    involved: { kind: 'Pod', apiVersion: 'v1', obj: pod },
    type: 'Normal',
    reason: 'Scheduled',
    message: `Successfully assigned ${namespaceOf(pod)}/${nameOf(
      pod,
    )} to ${node}`,
    component: 'default-scheduler',
  });
  const { names, images } = containersOf(asObject(pod.spec));
  names.forEach((name, i) => {
    const base = {
      involved: { kind: 'Pod', apiVersion: 'v1', obj: pod },
      type: 'Normal' as const,
      component: 'kubelet',
      host: node,
      fieldPath: `spec.containers{${name}}`,
    };
    events.record({
      ...base,
      reason: 'Pulled',
      message: `Container image "${images[i]}" already present on machine`,
    });
    events.record({
      ...base,
      reason: 'Created',
      message: `Created container ${name}`,
    });
    events.record({
      ...base,
      reason: 'Started',
      message: `Started container ${name}`,
    });
  });
}

function expireEvents(host: PodControllerHost, now: number) {
  const all = host.all('Event');
  const live = all.filter(e => {
    const last = Date.parse(String(e.lastTimestamp ?? ''));
    const expired = Number.isFinite(last) && now - last > EVENT_TTL_MS;
    if (expired) host.remove('Event', namespaceOf(e), nameOf(e));
    return !expired;
  });
  if (live.length > MAX_EVENTS) {
    const oldest = live
      .sort(
        (a, b) =>
          Date.parse(String(a.lastTimestamp)) -
            Date.parse(String(b.lastTimestamp)) ||
          nameOf(a).localeCompare(nameOf(b)),
      )
      .slice(0, live.length - MAX_EVENTS);
    for (const e of oldest) host.remove('Event', namespaceOf(e), nameOf(e));
  }
}
