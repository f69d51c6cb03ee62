import type { KubernetesObject } from '@kubernetes/client-node';
import { FIELD_MANAGER } from '../kubernetes/serverSideApply';

interface Scalable {
  spec?: { replicas?: number };
}

/**
 * The object to apply when something else owns its replica count (an HPA): without
 * `spec.replicas` once another manager holds that field (it stays theirs, and an apply of a
 * count read a moment ago cannot conflict with their next scaling); with the live count while
 * only Fleet holds it (leaving it out would remove it).
 */
export function withReplicasLeftTo<T extends KubernetesObject & Scalable>(
  object: T,
  live: KubernetesObject & Scalable,
): T {
  if (!object.spec) return object;
  const othersHold = (live.metadata?.managedFields ?? []).some(
    entry =>
      entry.manager !== FIELD_MANAGER &&
      (entry.fieldsV1 as any)?.['f:spec']?.['f:replicas'] !== undefined,
  );
  const { replicas: _replicas, ...spec } = object.spec;
  const count = live.spec?.replicas;
  return {
    ...object,
    spec:
      othersHold || count === undefined ? spec : { ...spec, replicas: count },
  } as T;
}
