import type { KubernetesObject } from '@kubernetes/client-node';
import { describeKubeError } from '../kubernetes/requestOptions';
import {
  FieldConflictError,
  ObjectAppearedError,
} from '../kubernetes/serverSideApply';
import { UnservedKindError } from './objectClient';
import { describeRef, refOf, type ObjectRef } from './objectRefs';
import {
  OwnershipConflictError,
  isFleetOwned,
  ownershipConflict,
} from './ownership';

/** An object the set cannot have as it is: no name, listed twice, not marked as Fleet's. */
export class InvalidObjectError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidObjectError';
  }
}

/** Why the call about one object failed. */
export class ObjectError extends Error {
  constructor(readonly ref: ObjectRef, readonly error: unknown) {
    super(describeRef(ref));
    this.name = 'ObjectError';
  }
}

/** What any `about(ref)` call throws: its failure, naming the object. */
export async function about<T>(
  ref: ObjectRef,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw error instanceof ObjectError ? error : new ObjectError(ref, error);
  }
}

/** A failure's message, and the object it is about. */
export function describeFailure(
  error: unknown,
  timeoutMs: number,
): { message: string; object?: ObjectRef; cause: unknown } {
  const object = error instanceof ObjectError ? error.ref : undefined;
  const cause = error instanceof ObjectError ? error.error : error;
  // These name the object themselves.
  if (
    cause instanceof OwnershipConflictError ||
    cause instanceof FieldConflictError
  )
    return { message: cause.message, object, cause };
  const detail = describeKubeError(cause, timeoutMs);
  return {
    message: object ? `${describeRef(object)}: ${detail}` : detail,
    object,
    cause,
  };
}

/**
 * Whether the cluster gave no answer (a timeout, a refused connection) or could not (5xx),
 * as opposed to an answer that refuses the call.
 */
export function isUnreachable(cause: unknown): boolean {
  if (
    cause instanceof OwnershipConflictError ||
    cause instanceof FieldConflictError ||
    cause instanceof UnservedKindError ||
    cause instanceof InvalidObjectError ||
    cause instanceof ObjectAppearedError
  )
    return false;
  const code = (cause as { code?: unknown } | undefined)?.code;
  return typeof code !== 'number' || code >= 500;
}

/** The conflict for a live object in the place of `object` that is not Fleet's for `entityRef`. */
export function conflictFor(
  object: KubernetesObject,
  live: KubernetesObject | undefined,
  entityRef: string,
): OwnershipConflictError {
  return ownershipConflict(
    object.kind ?? '',
    object.metadata?.namespace ?? '',
    object.metadata?.name ?? '',
    live,
    entityRef,
  );
}

/** Throws the conflict unless `live` is absent or Fleet's for `entityRef`. */
export function assertOwned(
  object: KubernetesObject,
  live: KubernetesObject | undefined,
  entityRef: string,
): void {
  if (live && !isFleetOwned(live, entityRef))
    throw conflictFor(object, live, entityRef);
}

/** Throws the conflict for the first object whose live counterpart is not Fleet's. */
export function assertAllOwned(
  objects: readonly KubernetesObject[],
  lives: ReadonlyArray<KubernetesObject | undefined>,
  entityRef: string,
): void {
  const foreign = objects.findIndex(
    (_, i) => lives[i] && !isFleetOwned(lives[i], entityRef),
  );
  if (foreign >= 0) {
    const object = objects[foreign];
    throw new ObjectError(
      refOf(object),
      conflictFor(object, lives[foreign], entityRef),
    );
  }
}
