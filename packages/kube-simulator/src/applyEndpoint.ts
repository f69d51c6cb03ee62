/**
 * The server-side apply endpoint of one object: decodes the applied configuration (YAML or
 * JSON), checks what the API server checks of it, and creates the object when it is absent or
 * stores the merge (serverSideApply.ts) with the managers' new entries.
 */
import { ApiError, cause, errors } from './errors';
import { FieldManagement, invalidOptions } from './managedFields';
import { decodeBody, invalid, nameMismatch } from './requestBody';
import { ResourceDef } from './resourceDef';
import { serverSideApply, withoutNulls } from './serverSideApply';
import { ClusterStore, SimObject, WriteOptions } from './store';
import { isPlainObject, JsonObject, rfc3339 } from './util';

export interface ApplyCall {
  def: ResourceDef;
  namespace?: string;
  name: string;
  manager: string;
  force: boolean;
  opts: WriteOptions;
}

/** Whether `force` was asked (`true`/`false`, as a real server reads it). */
export function forceOf(query: URLSearchParams, apply: boolean): boolean {
  const value = query.get('force');
  if (value === null) return false;
  if (!apply)
    throw invalidOptions(
      'force',
      'Forbidden: may not be specified for non-apply patch',
      'FieldValueForbidden',
    );
  if (value !== 'true' && value !== 'false' && value !== '')
    throw errors.badRequest(`force: invalid boolean value "${value}"`);
  return value === 'true';
}

/** Applies `body`; `created` says whether the object was absent. */
export function applyObject(
  store: ClusterStore,
  call: ApplyCall,
  body: unknown,
): { object: SimObject; created: boolean } {
  const { def, namespace, name } = call;
  if (call.opts.subresource)
    throw errors.badRequest(
      'kube-simulator: server-side apply to a subresource is not supported',
    );
  if (!isPlainObject(body))
    throw errors.badRequest('the applied configuration must be an object');
  if (typeof body.apiVersion !== 'string' || !body.apiVersion)
    throw errors.badRequest(
      "Object 'apiVersion' is missing in the applied configuration",
    );
  if (typeof body.kind !== 'string' || !body.kind)
    throw errors.badRequest(
      "Object 'Kind' is missing in the applied configuration",
    );
  const config = decodeBody(def, namespace, withoutNulls(body)) as JsonObject;
  const meta = isPlainObject(config.metadata) ? config.metadata : {};
  config.metadata = meta;
  if (meta.name !== undefined && meta.name !== name)
    throw nameMismatch(meta.name, name);
  meta.name = name;
  if (meta.managedFields !== undefined)
    throw errors.badRequest('metadata.managedFields must be nil');
  if (def.namespaced) meta.namespace = namespace;
  const time = rfc3339(store.currentTime());
  let live: JsonObject | undefined;
  try {
    live = store.get(def, namespace, name) as unknown as JsonObject;
  } catch (e) {
    if (!(e instanceof ApiError && e.code === 404)) throw e;
  }
  // A uid in the applied configuration must be the object's, as on a real server: another
  // object's is an immutable-field change (422), and none to apply to is a 409.
  const uid = meta.uid;
  delete meta.uid;
  const liveUid = (live?.metadata as JsonObject | undefined)?.uid;
  if (uid !== undefined && uid !== '' && uid !== liveUid) {
    if (!live)
      throw errors.conflict(
        def.plural,
        def.group,
        name,
        `uid mismatch: the provided object specified uid ${uid}, and no existing object was found`,
      );
    throw invalid(def, name, [
      cause.invalid('metadata.uid', uid, 'field is immutable'),
    ]);
  }
  const rv = meta.resourceVersion;
  if (live && rv !== undefined && rv !== '') {
    const liveRv = (live.metadata as JsonObject).resourceVersion;
    if (rv !== liveRv)
      throw errors.conflict(
        def.plural,
        def.group,
        name,
        'the object has been modified; please apply your changes to the latest version and try again',
      );
  }
  const outcome = serverSideApply(live, config, {
    def,
    manager: call.manager,
    force: call.force,
    time,
  });
  const fieldManagement: FieldManagement = {
    manager: call.manager,
    operation: 'Apply',
    time,
    entries: outcome.entries,
  };
  const opts = { ...call.opts, fieldManagement };
  if (!live) {
    delete (outcome.object.metadata as JsonObject).resourceVersion;
    return {
      object: store.create(def, namespace, outcome.object, opts),
      created: true,
    };
  }
  return {
    object: store.applyUpdate(def, namespace, name, outcome.object, opts),
    created: false,
  };
}
