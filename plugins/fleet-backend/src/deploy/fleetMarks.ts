import type { KubernetesObject } from '@kubernetes/client-node';
import {
  ENTITY_REF_ANNOTATION,
  KUBERNETES_ID_LABEL,
  kubernetesIdOf,
  MANAGED_BY_LABEL,
} from './manifests';
import { describeObject, OwnershipConflictError } from './ownership';

/**
 * `object` with Fleet's ownership marks for `entityRef` in `namespace` (none: cluster-scoped):
 * the `app.kubernetes.io/managed-by: fleet` and `backstage.io/kubernetes-id` labels (a
 * kubernetes-id the object has is kept) and the `cnp.io/entity-ref` annotation. An object that
 * already claims another owner (another manager, another entity) is refused with an
 * `OwnershipConflictError`; `rendered` says, in its message, what rendered it ("the manifests
 * hold", "manifest source 'x' rendered").
 */
export function withFleetMarks(
  object: KubernetesObject,
  target: {
    entityRef: string;
    namespace: string | undefined;
    rendered: string;
  },
): KubernetesObject {
  const kind = object.kind ?? '';
  const metadata = object.metadata ?? {};
  const name = metadata.name ?? '';
  const { entityRef, namespace } = target;
  const managedBy = metadata.labels?.[MANAGED_BY_LABEL];
  const owner = metadata.annotations?.[ENTITY_REF_ANNOTATION];
  if (
    (managedBy !== undefined && managedBy !== 'fleet') ||
    (owner !== undefined && owner !== entityRef)
  ) {
    const where = describeObject(kind, namespace ?? '', name);
    throw new OwnershipConflictError(
      kind,
      namespace ?? '',
      name,
      `OWNERSHIP_CONFLICT: ${target.rendered} ${where} ${
        owner !== undefined && owner !== entityRef
          ? `for ${owner}`
          : `managed by ${managedBy}`
      }: every object Fleet applies for ${entityRef} is labelled ${MANAGED_BY_LABEL}: fleet and annotated ${ENTITY_REF_ANNOTATION}: ${entityRef}. Nothing was applied.`,
    );
  }
  const { namespace: _namespace, ...rest } = metadata;
  return {
    ...object,
    metadata: {
      ...rest,
      ...(namespace !== undefined ? { namespace } : {}),
      labels: {
        ...metadata.labels,
        [MANAGED_BY_LABEL]: 'fleet',
        [KUBERNETES_ID_LABEL]:
          metadata.labels?.[KUBERNETES_ID_LABEL] ?? kubernetesIdOf(entityRef),
      },
      annotations: {
        ...metadata.annotations,
        [ENTITY_REF_ANNOTATION]: entityRef,
      },
    },
  };
}
