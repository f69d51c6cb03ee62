/**
 * The three patch formats of the Kubernetes API:
 * - JSON merge patch (RFC 7386),
 * - strategic merge patch (a good-enough subset: lists merged by their
 *   Kubernetes patch merge key, `$patch: replace|delete` and
 *   `$deleteFromPrimitiveList` directives, other `$` directives ignored),
 * - JSON patch (RFC 6902: add, remove, replace, move, copy, test).
 */
import { ApiError } from './errors';
import { clone, deepEqual, isPlainObject, JsonObject } from './util';

export const PATCH_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
} as const;

export type PatchType = (typeof PATCH_TYPES)[keyof typeof PATCH_TYPES];

/** Applies a patch body (already JSON-parsed) to a copy of `target`. */
export function applyPatch(
  target: JsonObject,
  type: PatchType,
  patch: unknown,
): JsonObject {
  let result: unknown;
  switch (type) {
    case PATCH_TYPES.merge:
      if (!isPlainObject(patch))
        throw badPatch('merge patch must be a JSON object');
      result = mergePatch(target, patch);
      break;
    case PATCH_TYPES.strategic:
      if (!isPlainObject(patch))
        throw badPatch('strategic merge patch must be a JSON object');
      result = strategicMerge(target, patch);
      break;
    default:
      if (!Array.isArray(patch))
        throw badPatch('json patch must be a JSON array of operations');
      result = jsonPatch(target, patch);
  }
  if (!isPlainObject(result))
    throw invalid('the patched object is not a JSON object');
  return result;
}

function badPatch(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

function invalid(message: string): ApiError {
  return new ApiError(422, 'Invalid', message, {
    causes: [{ reason: 'FieldValueInvalid', message }],
  });
}

// ---------------------------------------------------------------- RFC 7386

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return clone(patch);
  const result: JsonObject = isPlainObject(target) ? clone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

// ---------------------------------------------------- strategic merge patch

/**
 * Merge keys of the list fields Fleet and typical manifests use, by field
 * name. `ports` is keyed by `containerPort` in containers and by `port` in
 * Services, as in the Kubernetes Go types.
 */
const MERGE_KEYS: Record<string, string | ((items: unknown[]) => string)> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  env: 'name',
  volumes: 'name',
  imagePullSecrets: 'name',
  resourceClaims: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  conditions: 'type',
  ownerReferences: 'uid',
  hostAliases: 'ip',
  topologySpreadConstraints: 'topologyKey',
  ports: items =>
    items.some(i => isPlainObject(i) && 'containerPort' in i)
      ? 'containerPort'
      : 'port',
};

/** Lists of scalars merged as sets (patchStrategy "merge" without a key). */
const PRIMITIVE_MERGE = new Set(['finalizers']);

const DELETE_PRIMITIVE = '$deleteFromPrimitiveList/';

export function strategicMerge(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return stripDirectives(patch);
  const directive = patch.$patch;
  if (directive === 'replace') {
    const rest = { ...patch };
    delete rest.$patch;
    return stripDirectives(rest);
  }
  if (directive === 'delete') return undefined;
  const result: JsonObject = isPlainObject(target) ? clone(target) : {};
  const retainKeys = Array.isArray(patch.$retainKeys)
    ? patch.$retainKeys.map(String)
    : undefined;
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith(DELETE_PRIMITIVE)) {
      const field = key.slice(DELETE_PRIMITIVE.length);
      const current = result[field];
      if (Array.isArray(current) && Array.isArray(value)) {
        result[field] = current.filter(v => !value.some(d => deepEqual(d, v)));
      }
      continue;
    }
    if (key.startsWith('$')) continue; // $setElementOrder/..., $retainKeys, $patch
    if (value === null) {
      delete result[key];
    } else if (Array.isArray(value)) {
      result[key] = mergeList(key, result[key], value);
    } else if (isPlainObject(value)) {
      const merged = strategicMerge(result[key], value);
      if (merged === undefined) delete result[key];
      else result[key] = merged;
    } else {
      result[key] = value;
    }
  }
  if (retainKeys) {
    for (const key of Object.keys(result)) {
      if (!retainKeys.includes(key)) delete result[key];
    }
  }
  return result;
}

function mergeList(
  field: string,
  target: unknown,
  patch: unknown[],
): unknown[] {
  const current = Array.isArray(target) ? target : [];
  if (patch.some(i => isPlainObject(i) && i.$patch === 'replace')) {
    return patch
      .filter(i => !(isPlainObject(i) && i.$patch === 'replace'))
      .map(i => stripDirectives(i));
  }
  if (PRIMITIVE_MERGE.has(field)) {
    const out = [...current];
    for (const v of patch) if (!out.some(o => deepEqual(o, v))) out.push(v);
    return out;
  }
  const keySpec = MERGE_KEYS[field];
  const allObjects = patch.every(isPlainObject);
  if (!keySpec || !allObjects) return patch.map(i => stripDirectives(i));
  const key =
    typeof keySpec === 'string' ? keySpec : keySpec([...current, ...patch]);
  const out = current.map(i => clone(i));
  for (const item of patch as JsonObject[]) {
    const index = out.findIndex(
      o => isPlainObject(o) && deepEqual(o[key], item[key]),
    );
    if (item.$patch === 'delete') {
      if (index >= 0) out.splice(index, 1);
      continue;
    }
    if (index >= 0) out[index] = strategicMerge(out[index], item);
    else out.push(stripDirectives(item));
  }
  return out;
}

function stripDirectives(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripDirectives);
  if (!isPlainObject(value)) return value;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) {
    if (k.startsWith('$')) continue;
    if (v === null) continue;
    out[k] = stripDirectives(v);
  }
  return out;
}

// ---------------------------------------------------------------- RFC 6902

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/'))
    throw badPatch(`invalid JSON pointer: "${pointer}"`);
  return pointer
    .slice(1)
    .split('/')
    .map(t => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function arrayIndex(
  token: string,
  length: number,
  allowEnd: boolean,
  path: string,
): number {
  if (token === '-' && allowEnd) return length;
  if (!/^(0|[1-9][0-9]*)$/.test(token))
    throw invalid(`invalid array index "${token}" in path ${path}`);
  const index = Number(token);
  if (index > length || (!allowEnd && index === length)) {
    throw invalid(`array index ${index} out of bounds in path ${path}`);
  }
  return index;
}

/** Returns the container of the last token, failing when it is missing. */
function parentOf(doc: unknown, tokens: string[], path: string): unknown {
  let node = doc;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(node))
      node = node[arrayIndex(token, node.length, false, path)];
    else if (isPlainObject(node) && token in node) node = node[token];
    else throw invalid(`doc is missing path: "${path}": missing value`);
  }
  return node;
}

function getAt(doc: unknown, path: string): unknown {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return doc;
  const parent = parentOf(doc, tokens, path);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent))
    return parent[arrayIndex(last, parent.length, false, path)];
  if (isPlainObject(parent) && last in parent) return parent[last];
  throw invalid(`doc is missing path: "${path}": missing value`);
}

function addAt(doc: unknown, path: string, value: unknown): unknown {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return clone(value);
  const parent = parentOf(doc, tokens, path);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent))
    parent.splice(arrayIndex(last, parent.length, true, path), 0, clone(value));
  else if (isPlainObject(parent)) parent[last] = clone(value);
  else throw invalid(`doc is missing path: "${path}": missing value`);
  return doc;
}

function removeAt(doc: unknown, path: string): unknown {
  const tokens = parsePointer(path);
  if (tokens.length === 0) throw invalid('cannot remove the whole document');
  const parent = parentOf(doc, tokens, path);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent))
    parent.splice(arrayIndex(last, parent.length, false, path), 1);
  else if (isPlainObject(parent) && last in parent) delete parent[last];
  else throw invalid(`doc is missing path: "${path}": missing value`);
  return doc;
}

export function jsonPatch(target: unknown, operations: unknown[]): unknown {
  let doc = clone(target);
  for (const raw of operations) {
    if (
      !isPlainObject(raw) ||
      typeof raw.op !== 'string' ||
      typeof raw.path !== 'string'
    ) {
      throw badPatch(
        'invalid JSON patch operation: each needs "op" and "path"',
      );
    }
    const op = raw as unknown as Operation;
    switch (op.op) {
      case 'add':
        if (!('value' in raw))
          throw badPatch(`add operation at ${op.path} has no value`);
        doc = addAt(doc, op.path, op.value);
        break;
      case 'remove':
        doc = removeAt(doc, op.path);
        break;
      case 'replace':
        if (!('value' in raw))
          throw badPatch(`replace operation at ${op.path} has no value`);
        getAt(doc, op.path); // must exist
        if (op.path === '') {
          doc = clone(op.value);
          break;
        }
        doc = removeAt(doc, op.path);
        doc = addAt(doc, op.path, op.value);
        break;
      case 'move': {
        if (typeof op.from !== 'string')
          throw badPatch('move operation has no "from"');
        const value = getAt(doc, op.from);
        doc = removeAt(doc, op.from);
        doc = addAt(doc, op.path, value);
        break;
      }
      case 'copy': {
        if (typeof op.from !== 'string')
          throw badPatch('copy operation has no "from"');
        doc = addAt(doc, op.path, getAt(doc, op.from));
        break;
      }
      case 'test':
        if (!deepEqual(getAt(doc, op.path), op.value)) {
          throw invalid(`testing value ${op.path} failed: test failed`);
        }
        break;
      default:
        throw badPatch(`unexpected kind of operation: "${op.op}"`);
    }
  }
  return doc;
}
