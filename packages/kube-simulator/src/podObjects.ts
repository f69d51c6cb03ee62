/**
 * What the simulated workload controllers (podController.ts) see of the store, and how they
 * read the objects they own: names, uids, ages and controller owner references.
 */
import { asArray, asObject, JsonObject } from './util';
import { Readiness, RolloutClock } from './workloads';

/** The simulated nodes pods are spread over. */
export const NODES = ['sim-node-1', 'sim-node-2', 'sim-node-3'];

/** What the controllers need of the store: reads, and writes that are not API requests. */
export interface PodControllerHost {
  readonly readiness: Readiness;
  /** Deployments (not Rollouts) with their rollout clock, as stored. */
  deployments(): Array<{ obj: JsonObject; clock: RolloutClock }>;
  /** StatefulSets or DaemonSets with their rollout clock, as stored. */
  podSets(
    kind: 'StatefulSet' | 'DaemonSet',
  ): Array<{ obj: JsonObject; clock: RolloutClock }>;
  /** Stored objects of a kind, in no particular order (copies are not needed: read only). */
  all(kind: 'ReplicaSet' | 'Pod' | 'Event' | 'Job'): JsonObject[];
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

export function meta(obj: JsonObject): JsonObject {
  return (asObject(obj.metadata) ?? {}) as JsonObject;
}

export function nameOf(obj: JsonObject): string {
  return String(meta(obj).name ?? '');
}

export function namespaceOf(obj: JsonObject): string {
  return String(meta(obj).namespace ?? '');
}

export function uidOf(obj: JsonObject): string {
  return String(meta(obj).uid ?? '');
}

export function createdOf(obj: JsonObject): number {
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

export function ownerReference(
  kind: string,
  apiVersion: string,
  owner: JsonObject,
) {
  return {
    apiVersion,
    kind,
    name: nameOf(owner),
    uid: uidOf(owner),
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Oldest first, then by name: the order the ready pods are picked in. */
export function byAge(a: JsonObject, b: JsonObject): number {
  return createdOf(a) - createdOf(b) || nameOf(a).localeCompare(nameOf(b));
}
