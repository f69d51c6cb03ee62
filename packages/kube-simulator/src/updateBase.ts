/**
 * Where an update (PUT, PATCH, apply, a status write) starts from, as the API server's generic
 * registry has it: the request's object with the stored status, or for the status subresource
 * the stored object with the request's status; the stored apiVersion and kind; and the system
 * metadata (name, namespace, uid, creationTimestamp, generation, resourceVersion, deletion
 * fields) of the stored object whatever the request said, with `selfLink` dropped.
 */
import { apiVersionOf, ResourceDef } from './resourceDef';
import { metaOf } from './storeTypes';
import { clone, JsonObject } from './util';

const SYSTEM_FIELDS = [
  'name',
  'namespace',
  'uid',
  'creationTimestamp',
  'generation',
  'resourceVersion',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
];

/**
 * The object an update of `old` to `candidate` stores before defaulting and validation
 * (`candidate` itself unless `statusOnly`, changed in place).
 */
export function updateBase(
  def: ResourceDef,
  old: JsonObject,
  candidate: JsonObject,
  statusOnly: boolean,
): JsonObject {
  let next: JsonObject;
  if (statusOnly) {
    next = clone(old);
    next.status = clone(candidate.status);
  } else {
    next = candidate;
    next.status = clone(old.status);
  }
  if (next.status === undefined) delete next.status; // kinds without status (Secret)
  next.apiVersion = apiVersionOf(def);
  next.kind = def.kind;
  const meta = metaOf(next);
  const oldMeta = metaOf(old);
  for (const field of SYSTEM_FIELDS) {
    if (oldMeta[field] === undefined) delete meta[field];
    else meta[field] = clone(oldMeta[field]);
  }
  delete meta.selfLink;
  return next;
}
