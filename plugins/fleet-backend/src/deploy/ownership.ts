import type { V1DeleteOptions } from '@kubernetes/client-node';
import { isKubeStatus } from '../kubernetes/requestOptions';
import { ENTITY_REF_ANNOTATION, MANAGED_BY_LABEL } from './manifests';

/** The reason a deployment or a release's cluster gives when a foreign object is in the way. */
export const OWNERSHIP_CONFLICT = 'OWNERSHIP_CONFLICT';

interface WithMetadata {
  metadata?: {
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
}

/**
 * Whether `live` is Fleet's object for `entityRef`: it carries `app.kubernetes.io/managed-by:
 * fleet` and `cnp.io/entity-ref: <entityRef>`. Every object Fleet has ever made carries both
 * (the Deployment, Service, PodDisruptionBudget and Ingress of a deploy; the canary Deployment
 * and Service, Rollout and AnalysisTemplates of a release), so what an earlier Fleet made still
 * counts as Fleet's. Fleet reads for change, patches, replaces or deletes only such objects.
 */
export function isFleetOwned(
  live: WithMetadata | undefined,
  entityRef: string | undefined,
): boolean {
  return (
    !!entityRef &&
    live?.metadata?.labels?.[MANAGED_BY_LABEL] === 'fleet' &&
    live?.metadata?.annotations?.[ENTITY_REF_ANNOTATION] === entityRef
  );
}

/**
 * A traffic object Fleet steers but does not own (an Istio VirtualService): its owner must say
 * Fleet may steer it for `entityRef`, with the annotation `cnp.io/entity-ref: <entityRef>`.
 */
export function isSteerableBy(
  live: WithMetadata | undefined,
  entityRef: string | undefined,
): boolean {
  return (
    !!entityRef &&
    live?.metadata?.annotations?.[ENTITY_REF_ANNOTATION] === entityRef
  );
}

/** A foreign object stands where Fleet would change one of its own; it is left untouched. */
export class OwnershipConflictError extends Error {
  readonly reason = OWNERSHIP_CONFLICT;
  constructor(
    readonly kind: string,
    readonly namespace: string,
    readonly objectName: string,
    message: string,
  ) {
    super(message);
    this.name = 'OwnershipConflictError';
  }
}

/** `kind namespace/name` (`kind name` when cluster-scoped), as messages name an object. */
export function describeObject(kind: string, namespace: string, name: string) {
  return namespace ? `${kind} ${namespace}/${name}` : `${kind} ${name}`;
}

/** The conflict for a live object that is not Fleet's for `entityRef`. */
export function ownershipConflict(
  kind: string,
  namespace: string,
  name: string,
  live: WithMetadata | undefined,
  entityRef: string | undefined,
  what: 'owned' | 'steered' = 'owned',
): OwnershipConflictError {
  const owner = live?.metadata?.annotations?.[ENTITY_REF_ANNOTATION];
  const managedBy = live?.metadata?.labels?.[MANAGED_BY_LABEL];
  const whose = owner
    ? `it belongs to ${owner}`
    : `it carries no ${ENTITY_REF_ANNOTATION} annotation`;
  const detail =
    what === 'steered'
      ? `Fleet steers it only when its owner annotates it ${ENTITY_REF_ANNOTATION}: ${entityRef}`
      : `Fleet changes only objects labelled ${MANAGED_BY_LABEL}: fleet and annotated ${ENTITY_REF_ANNOTATION}: ${entityRef}${
          managedBy && managedBy !== 'fleet'
            ? ` (it is managed by ${managedBy})`
            : ''
        }`;
  return new OwnershipConflictError(
    kind,
    namespace,
    name,
    `${OWNERSHIP_CONFLICT}: ${describeObject(
      kind,
      namespace,
      name,
    )} is not Fleet's to change (${whose}); ${detail}. It was left untouched.`,
  );
}

/** Throws the conflict unless `live` is Fleet's object for `entityRef`. */
export function assertFleetOwned(
  kind: string,
  namespace: string,
  name: string,
  live: WithMetadata | undefined,
  entityRef: string | undefined,
): void {
  if (live && !isFleetOwned(live, entityRef)) {
    throw ownershipConflict(kind, namespace, name, live, entityRef);
  }
}

/**
 * Delete options that make a delete conditional on the object read: a foreign object created
 * under the same name in between (another uid) or a change since the read (another
 * resourceVersion) makes the API server refuse the delete (409) instead of deleting it.
 */
export function deletePreconditions(live: WithMetadata): V1DeleteOptions {
  return {
    preconditions: {
      uid: live.metadata?.uid,
      resourceVersion: live.metadata?.resourceVersion,
    },
  };
}

export type OwnedDeleteResult = 'deleted' | 'absent' | 'foreign';

/**
 * Deletes one object only if it is Fleet's for `entityRef`: read, check the owner, then delete
 * with the read's uid and resourceVersion as preconditions. Absent (404) is fine; a foreign
 * object is left as it is (`foreign`). A delete refused by its preconditions (the object changed
 * or was replaced since the read) is tried again from a fresh read, a few times.
 */
export async function deleteIfFleetOwned(
  entityRef: string | undefined,
  read: () => Promise<WithMetadata>,
  remove: (options: V1DeleteOptions) => Promise<unknown>,
): Promise<OwnedDeleteResult> {
  for (let attempt = 0; ; attempt++) {
    let live: WithMetadata;
    try {
      live = await read();
    } catch (error) {
      if (isKubeStatus(error, 404)) return 'absent';
      throw error;
    }
    if (!isFleetOwned(live, entityRef)) return 'foreign';
    try {
      await remove(deletePreconditions(live));
      return 'deleted';
    } catch (error) {
      if (isKubeStatus(error, 404)) return 'absent';
      if (!isKubeStatus(error, 409) || attempt >= 2) throw error;
    }
  }
}
