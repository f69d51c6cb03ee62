/**
 * Server-side apply (`PATCH` with `application/apply-patch+yaml`): the applied configuration is
 * merged onto the live object (objects field by field, keyed lists item by item, set lists as
 * sets, other lists replaced whole); a field another manager owns whose value would change is a
 * conflict (409, one cause per field) unless forced, which moves its ownership; the fields the
 * manager applied before and applies no more are removed unless another manager owns them too;
 * the manager's `Apply` entry becomes the fields of the configuration.
 */
import { ApiError, StatusCause } from './errors';
import {
  describePath,
  diffFields,
  FieldSet,
  fieldSetOf,
  isAtomicObject,
  itemsByElement,
  joinPath,
  keyElement,
  listTypeOf,
  splitPath,
  valueElement,
  withoutSubtrees,
} from './fieldSets';
import { entriesOf, managedPart, ManagerEntry } from './managedFields';
import { apiVersionOf, ResourceDef } from './resourceDef';
import { clone, isPlainObject, JsonObject } from './util';

export const APPLY_PATCH_TYPE = 'application/apply-patch+yaml';

export interface ApplyRequest {
  def: ResourceDef;
  manager: string;
  force: boolean;
  /** RFC 3339 time of the write. */
  time: string;
}

export interface ApplyOutcome {
  /** The object to store (without managedFields: they are in `entries`). */
  object: JsonObject;
  entries: ManagerEntry[];
}

/** The applied configuration without nulls (an unset field), as a copy. */
export function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (!isPlainObject(value)) return value;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value))
    if (v !== null) out[k] = withoutNulls(v);
  return out;
}

/** Applies `config` (a decoded, null-free configuration) onto `live` (undefined: absent). */
export function serverSideApply(
  live: JsonObject | undefined,
  config: JsonObject,
  req: ApplyRequest,
): ApplyOutcome {
  const { def } = req;
  const applied = fieldSetOf(def, managedPart(config, false));
  const entries = entriesOf(live);
  const isApplier = (e: ManagerEntry) =>
    e.manager === req.manager && e.operation === 'Apply' && !e.subresource;
  const previous = entries.find(isApplier)?.fields ?? new Set<string>();
  const base = live ? clone(live) : {};
  if (isPlainObject(base.metadata)) delete base.metadata.managedFields;
  const merged = mergeValue(def, base, config, []) as JsonObject;
  const { changed } = diffFields(
    def,
    managedPart(base, false),
    managedPart(merged, false),
  );
  const others = entries.filter(e => !isApplier(e));
  const conflicts = others
    .map(e => ({ entry: e, paths: [...e.fields].filter(p => changed.has(p)) }))
    .filter(c => c.paths.length > 0);
  if (conflicts.length && !req.force) throw conflictError(def, live, conflicts);
  const moved = new Set(conflicts.flatMap(c => c.paths));
  const kept = others.map(e => ({
    ...e,
    fields: withoutSubtrees(e.fields, moved),
  }));
  const ownedElsewhere = new Set(kept.flatMap(e => [...e.fields]));
  const owned = new Set([...applied, ...ownedElsewhere]);
  // A node still holds owned fields below it when one of them starts with its path.
  const held = new Set<string>();
  for (const p of owned) {
    const parts = splitPath(p);
    for (let i = 1; i <= parts.length; i++)
      held.add(joinPath(parts.slice(0, i)));
  }
  const dropped = [...previous].filter(p => !held.has(p));
  // A dropped list item goes whole: its own dropped fields need no removal.
  const tops = dropped.filter(
    p => !dropped.some(q => q !== p && p.startsWith(`${q}\n`)),
  );
  for (const path of tops) removePath(merged, splitPath(path), owned);
  const applierEntry: ManagerEntry = {
    manager: req.manager,
    operation: 'Apply',
    apiVersion: apiVersionOf(def),
    time: req.time,
    fields: applied,
  };
  const index = entries.findIndex(isApplier);
  const next = kept.slice();
  if (index >= 0) next.splice(index, 0, applierEntry);
  else next.push(applierEntry);
  return { object: merged, entries: next };
}

function mergeValue(
  def: ResourceDef,
  live: unknown,
  config: unknown,
  names: string[],
): unknown {
  if (isPlainObject(config) && !isAtomicObject(names)) {
    const out: JsonObject = isPlainObject(live) ? clone(live) : {};
    for (const [k, v] of Object.entries(config))
      out[k] = mergeValue(def, out[k], v, [...names, k]);
    return out;
  }
  if (!Array.isArray(config) || !Array.isArray(live)) return clone(config);
  const type = listTypeOf(def, names);
  if (type.kind === 'atomic') return clone(config);
  if (type.kind === 'set') {
    const out = clone(live);
    const present = itemsByElement(out, type);
    for (const v of config) if (!present.has(valueElement(v))) out.push(v);
    return out;
  }
  const out = clone(live);
  for (const item of config) {
    const element = keyElement(item, type);
    const at = out.findIndex(
      o => element !== undefined && keyElement(o, type) === element,
    );
    if (at >= 0) out[at] = mergeValue(def, out[at], item, names);
    else out.push(clone(item));
  }
  return out;
}

/**
 * Removes the field or list item at `path`; an object or list it leaves empty goes too, unless
 * it is itself a field someone owns.
 */
function removePath(root: JsonObject, path: string[], owned: FieldSet): void {
  if (path.length === 0) return;
  const parents: unknown[] = [root];
  let node: unknown = root;
  for (const element of path.slice(0, -1)) {
    node = childOf(node, element);
    if (node === undefined) return;
    parents.push(node);
  }
  for (let depth = path.length - 1; depth >= 0; depth--) {
    const parent = parents[depth];
    const element = path[depth];
    if (depth < path.length - 1) {
      const child = childOf(parent, element);
      const empty =
        (isPlainObject(child) && Object.keys(child).length === 0) ||
        (Array.isArray(child) && child.length === 0);
      if (!empty || owned.has(joinPath(path.slice(0, depth + 1)))) return;
    }
    deleteChild(parent, element);
  }
}

function matches(item: unknown, element: string): boolean {
  if (element.startsWith('v:')) return valueElement(item) === element;
  if (!isPlainObject(item)) return false;
  const key = JSON.parse(element.slice(2)) as JsonObject;
  return Object.entries(key).every(
    ([k, v]) =>
      item[k] === v ||
      (item[k] === undefined && k === 'protocol' && v === 'TCP'),
  );
}

function childOf(node: unknown, element: string): unknown {
  if (element.startsWith('f:'))
    return isPlainObject(node) ? node[element.slice(2)] : undefined;
  return Array.isArray(node) ? node.find(i => matches(i, element)) : undefined;
}

function deleteChild(node: unknown, element: string): void {
  if (element.startsWith('f:')) {
    if (isPlainObject(node)) delete node[element.slice(2)];
    return;
  }
  if (!Array.isArray(node)) return;
  const at = node.findIndex(i => matches(i, element));
  if (at >= 0) node.splice(at, 1);
}

function conflictError(
  def: ResourceDef,
  live: JsonObject | undefined,
  conflicts: { entry: ManagerEntry; paths: string[] }[],
): ApiError {
  const causes: StatusCause[] = conflicts.flatMap(({ entry, paths }) =>
    paths.sort().map(p => ({
      reason: 'FieldManagerConflict',
      message: `conflict with "${entry.manager}" using ${entry.apiVersion}`,
      field: describePath(p),
    })),
  );
  const lines =
    causes.length === 1
      ? `${causes[0].message}: ${causes[0].field}`
      : conflicts
          .map(
            ({ entry, paths }) =>
              `conflicts with "${entry.manager}" using ${
                entry.apiVersion
              }:\n${paths.map(p => `- ${describePath(p)}`).join('\n')}`,
          )
          .join('\n');
  const count = causes.length;
  const name = live && isPlainObject(live.metadata) ? live.metadata.name : '';
  return new ApiError(
    409,
    'Conflict',
    `Apply failed with ${count} conflict${count === 1 ? '' : 's'}: ${lines}`,
    {
      name: String(name ?? ''),
      ...(def.group ? { group: def.group } : {}),
      kind: def.plural,
      causes,
    },
  );
}
