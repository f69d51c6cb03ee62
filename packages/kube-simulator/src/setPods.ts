/**
 * The pods of StatefulSets and DaemonSets, as their controllers and the kubelet keep them: a
 * StatefulSet's are `<name>-<ordinal>` (labels `statefulset.kubernetes.io/pod-name` and
 * `apps.kubernetes.io/pod-index`), a DaemonSet's `<name>-<5 characters>`, one on each node
 * (label `pod-template-generation`); both carry `controller-revision-hash`. A pod whose
 * revision is not the one it should have is replaced (a new uid), and the pods of a deleted
 * StatefulSet or DaemonSet go at the next reconcile. What each pod should be comes from the
 * same plan as the owner's status (podWorkloadStatus.ts), so the two always agree.
 */
import { isBrokenPodSpec, isCrashLoopPodSpec } from './brokenImages';
import { generatedName, newPod } from './newPod';
import {
  controllerUid,
  meta,
  nameOf,
  namespaceOf,
  NODES,
  PodControllerHost,
  uidOf,
} from './podObjects';
import { podStatus } from './podStatus';
import {
  daemonSetPlan,
  SetPlan,
  SetPod,
  statefulSetPlan,
} from './podWorkloadStatus';
import { asObject, clone, deepEqual, JsonObject } from './util';

const REVISION_LABEL = 'controller-revision-hash';
const KINDS = ['StatefulSet', 'DaemonSet'] as const;
type SetKind = (typeof KINDS)[number];

function setOwnerOf(pod: JsonObject): string | undefined {
  return controllerUid(pod, 'StatefulSet') ?? controllerUid(pod, 'DaemonSet');
}

/** Brings the pods of every StatefulSet and DaemonSet in line with their plans at `now`. */
export function reconcileSetPods(host: PodControllerHost, now: number): void {
  const podsByOwner = new Map<string, JsonObject[]>();
  for (const pod of host.all('Pod')) {
    const owner = setOwnerOf(pod);
    if (!owner) continue;
    podsByOwner.set(owner, [...(podsByOwner.get(owner) ?? []), pod]);
  }
  const live = new Set<string>();
  for (const kind of KINDS) {
    for (const { obj, clock } of host.podSets(kind)) {
      live.add(uidOf(obj));
      const plan =
        kind === 'StatefulSet'
          ? statefulSetPlan(obj, clock, host.readiness, now)
          : daemonSetPlan(obj, clock, host.readiness, now);
      const owned = podsByOwner.get(uidOf(obj)) ?? [];
      reconcileOwner(host, kind, obj, plan, owned, now);
    }
  }
  for (const pod of host.all('Pod')) {
    const owner = setOwnerOf(pod);
    if (owner && !live.has(owner))
      host.remove('Pod', namespaceOf(pod), nameOf(pod));
  }
}

function revisionLabel(pod: JsonObject): unknown {
  return asObject(meta(pod).labels)?.[REVISION_LABEL];
}

/** The pod that fills `slot`: a StatefulSet's by name, a DaemonSet's by node. */
function slotMatcher(kind: SetKind, owner: JsonObject, slot: number) {
  if (kind === 'StatefulSet') {
    const name = `${nameOf(owner)}-${slot}`;
    return (pod: JsonObject) => nameOf(pod) === name;
  }
  return (pod: JsonObject) => asObject(pod.spec)?.nodeName === NODES[slot];
}

function createPod(
  host: PodControllerHost,
  kind: SetKind,
  owner: JsonObject,
  want: SetPod,
): JsonObject {
  const spec = asObject(owner.spec) ?? {};
  const template = asObject(spec.template) ?? {};
  const labels: Record<string, string> = { [REVISION_LABEL]: want.revision };
  if (kind === 'StatefulSet') {
    const name = `${nameOf(owner)}-${want.slot}`;
    labels['statefulset.kubernetes.io/pod-name'] = name;
    labels['apps.kubernetes.io/pod-index'] = String(want.slot);
    const node = NODES[want.slot % NODES.length];
    const podSpec: JsonObject = { hostname: name };
    if (typeof spec.serviceName === 'string' && spec.serviceName)
      podSpec.subdomain = spec.serviceName;
    return host.save(
      'Pod',
      newPod({
        owner,
        ownerKind: kind,
        ownerApiVersion: 'apps/v1',
        template,
        name,
        node,
        labels,
        spec: podSpec,
      }),
    );
  }
  const node = NODES[want.slot];
  labels['pod-template-generation'] = String(meta(owner).generation ?? 1);
  const affinity = {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [
          {
            matchFields: [
              { key: 'metadata.name', operator: 'In', values: [node] },
            ],
          },
        ],
      },
    },
  };
  return host.save(
    'Pod',
    newPod({
      owner,
      ownerKind: kind,
      ownerApiVersion: 'apps/v1',
      template,
      ...generatedName(owner),
      node,
      labels,
      spec: { affinity },
    }),
  );
}

function reconcileOwner(
  host: PodControllerHost,
  kind: SetKind,
  owner: JsonObject,
  plan: SetPlan,
  owned: JsonObject[],
  now: number,
): void {
  const kept = new Set<JsonObject>();
  const gone = new Set<JsonObject>();
  for (const want of plan.pods) {
    const isSlot = slotMatcher(kind, owner, want.slot);
    let pod = owned.find(p => isSlot(p) && !kept.has(p) && !gone.has(p));
    if (pod && revisionLabel(pod) !== want.revision) {
      // Replaced: a StatefulSet's new pod takes the old one's name.
      host.remove('Pod', namespaceOf(pod), nameOf(pod));
      gone.add(pod);
      pod = undefined;
    }
    if (!pod) pod = createPod(host, kind, owner, want);
    kept.add(pod);
    const spec = asObject(pod.spec);
    const crashLooping = host.readiness.neverReady || isCrashLoopPodSpec(spec);
    const status = podStatus(pod, {
      ready: want.ready && !crashLooping && !isBrokenPodSpec(spec),
      crashLooping,
      now,
    });
    if (!deepEqual(status, pod.status))
      host.save('Pod', { ...clone(pod), status });
  }
  for (const pod of owned)
    if (!kept.has(pod) && !gone.has(pod) && !meta(pod).deletionTimestamp)
      host.remove('Pod', namespaceOf(pod), nameOf(pod));
}
