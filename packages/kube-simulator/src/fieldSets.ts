/**
 * Field sets as structured-merge-diff (the API server's server-side apply library) sees them: a
 * set of paths, each path a list of elements `f:<field>`, `k:<key JSON>` (an item of a list
 * keyed by some of its fields) or `v:<value JSON>` (an item of a list of scalars used as a set),
 * encoded in `managedFields[].fieldsV1` as nested objects where `.` marks a node that is itself
 * a member and has members below it.
 *
 * How a list merges comes from the Kubernetes OpenAPI markers `x-kubernetes-list-type` and
 * `x-kubernetes-list-map-keys` of the fields Fleet and typical manifests use; a list without a
 * marker, and every list of a custom resource outside a Rollout's pod template, is atomic.
 */
import { ResourceDef } from './resourceDef';
import { deepEqual, isPlainObject, JsonObject } from './util';

export type ListType =
  | { kind: 'atomic' }
  | { kind: 'set' }
  | { kind: 'map'; keys: string[]; defaults: JsonObject };

/** A set of paths; a path is its elements joined by '\n' (JSON never holds a raw newline). */
export type FieldSet = Set<string>;

const SEP = '\n';

const map = (keys: string[], defaults: JsonObject = {}): ListType => ({
  kind: 'map',
  keys,
  defaults,
});

/** List markers of the core/v1 and apps/v1 types, by field name. */
const BY_NAME: Record<string, ListType> = {
  containers: map(['name']),
  initContainers: map(['name']),
  ephemeralContainers: map(['name']),
  env: map(['name']),
  volumes: map(['name']),
  volumeMounts: map(['mountPath']),
  volumeDevices: map(['devicePath']),
  imagePullSecrets: map(['name']),
  hostAliases: map(['ip']),
  schedulingGates: map(['name']),
  topologySpreadConstraints: map(['topologyKey', 'whenUnsatisfiable']),
  conditions: map(['type']),
  ownerReferences: map(['uid']),
  finalizers: { kind: 'set' },
};

const ATOMIC: ListType = { kind: 'atomic' };

/** Structs marked `x-kubernetes-map-type: atomic`: label selectors (and a Service's selector). */
const ATOMIC_OBJECTS = new Set([
  'selector',
  'labelSelector',
  'namespaceSelector',
]);

/** Whether the object at `names` is owned as a whole. */
export function isAtomicObject(names: string[]): boolean {
  return ATOMIC_OBJECTS.has(names[names.length - 1]);
}

/** The list type of the list at `names` (the field names from the object's root). */
export function listTypeOf(def: ResourceDef, names: string[]): ListType {
  const field = names[names.length - 1];
  if (!def.builtin) {
    // Custom resources: only a Rollout's pod template has the Kubernetes markers.
    const inTemplate = def.kind === 'Rollout' && names[1] === 'template';
    if (!inTemplate && !(names[0] === 'metadata')) return ATOMIC;
  }
  if (field === 'ports') {
    const parent = names[names.length - 2];
    if (
      parent &&
      BY_NAME[parent]?.kind === 'map' &&
      parent.endsWith('ontainers')
    )
      return map(['containerPort', 'protocol'], { protocol: 'TCP' });
    if (def.kind === 'Service' && names.length === 2 && names[0] === 'spec')
      return map(['port', 'protocol'], { protocol: 'TCP' });
    return ATOMIC;
  }
  return BY_NAME[field] ?? ATOMIC;
}

export function joinPath(elements: string[]): string {
  return elements.join(SEP);
}

export function splitPath(path: string): string[] {
  return path === '' ? [] : path.split(SEP);
}

function sortedJson(value: JsonObject): string {
  const out: JsonObject = {};
  for (const k of Object.keys(value).sort()) out[k] = value[k];
  return JSON.stringify(out);
}

/** The `k:` element of a keyed list's item, or undefined when the item has no key. */
export function keyElement(item: unknown, type: ListType): string | undefined {
  if (type.kind !== 'map' || !isPlainObject(item)) return undefined;
  const key: JsonObject = {};
  for (const k of type.keys) {
    const value = item[k] ?? type.defaults[k];
    if (value === undefined) return undefined;
    key[k] = value;
  }
  return `k:${sortedJson(key)}`;
}

export function valueElement(value: unknown): string {
  return `v:${JSON.stringify(value)}`;
}

/** Each item of a keyed or set list, by its path element. */
export function itemsByElement(
  list: unknown[],
  type: ListType,
): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const item of list) {
    const element =
      type.kind === 'set' ? valueElement(item) : keyElement(item, type);
    if (element !== undefined) out.set(element, item);
  }
  return out;
}

interface Walk {
  def: ResourceDef;
  set: FieldSet;
}

/**
 * The fields of an applied configuration: every leaf (a scalar, an atomic list, an empty
 * object), every item of a keyed or set list; objects themselves are not members.
 */
export function fieldSetOf(def: ResourceDef, value: JsonObject): FieldSet {
  const walk: Walk = { def, set: new Set() };
  walkValue(walk, value, [], []);
  return walk.set;
}

function walkValue(w: Walk, v: unknown, path: string[], names: string[]) {
  if (isPlainObject(v) && !isAtomicObject(names)) {
    const keys = Object.keys(v);
    if (keys.length === 0 && path.length) w.set.add(joinPath(path));
    for (const k of keys)
      walkValue(w, v[k], [...path, `f:${k}`], [...names, k]);
    return;
  }
  if (Array.isArray(v)) {
    const type = listTypeOf(w.def, names);
    if (type.kind === 'atomic') {
      w.set.add(joinPath(path));
      return;
    }
    for (const [element, item] of itemsByElement(v, type)) {
      w.set.add(joinPath([...path, element]));
      if (type.kind === 'map' && isPlainObject(item)) {
        for (const k of Object.keys(item))
          walkValue(w, item[k], [...path, element, `f:${k}`], [...names, k]);
      }
    }
    return;
  }
  w.set.add(joinPath(path));
}

/** What a write changed: fields added or given another value, and fields removed. */
export interface FieldDiff {
  changed: FieldSet;
  removed: FieldSet;
}

/** The fields `next` adds or changes compared with `old`, and those it drops. */
export function diffFields(
  def: ResourceDef,
  old: unknown,
  next: unknown,
): FieldDiff {
  const diff: FieldDiff = { changed: new Set(), removed: new Set() };
  diffValue(def, diff, old, next, [], []);
  return diff;
}

function diffValue(
  def: ResourceDef,
  diff: FieldDiff,
  o: unknown,
  n: unknown,
  path: string[],
  names: string[],
) {
  if (n === undefined) {
    if (o !== undefined) diff.removed.add(joinPath(path));
    return;
  }
  if (o === undefined) {
    addAll(def, diff.changed, n, path, names);
    return;
  }
  if (isPlainObject(o) && isPlainObject(n) && !isAtomicObject(names)) {
    for (const k of Object.keys(n))
      diffValue(def, diff, o[k], n[k], [...path, `f:${k}`], [...names, k]);
    for (const k of Object.keys(o))
      if (!(k in n)) diff.removed.add(joinPath([...path, `f:${k}`]));
    return;
  }
  const type = Array.isArray(n) ? listTypeOf(def, names) : ATOMIC;
  if (Array.isArray(o) && Array.isArray(n) && type.kind !== 'atomic') {
    const before = itemsByElement(o, type);
    const after = itemsByElement(n, type);
    for (const [element, item] of after) {
      const at = [...path, element];
      if (!before.has(element)) addAll(def, diff.changed, item, at, names);
      // An item of a map list is compared field by field, as an object.
      else if (type.kind === 'map')
        diffValue(def, diff, before.get(element), item, at, names);
    }
    for (const element of before.keys())
      if (!after.has(element)) diff.removed.add(joinPath([...path, element]));
    return;
  }
  if (!deepEqual(o, n)) addAll(def, diff.changed, n, path, names);
}

/** A value that appeared: it and every node below it are members. */
function addAll(
  def: ResourceDef,
  set: FieldSet,
  v: unknown,
  path: string[],
  names: string[],
) {
  const type = Array.isArray(v) ? listTypeOf(def, names) : ATOMIC;
  if (path.length && type.kind === 'atomic') set.add(joinPath(path));
  if (isPlainObject(v) && !isAtomicObject(names)) {
    for (const k of Object.keys(v))
      addAll(def, set, v[k], [...path, `f:${k}`], [...names, k]);
  } else if (Array.isArray(v) && type.kind !== 'atomic') {
    for (const [element, item] of itemsByElement(v, type)) {
      set.add(joinPath([...path, element]));
      if (type.kind === 'map' && isPlainObject(item)) {
        for (const k of Object.keys(item))
          addAll(
            def,
            set,
            item[k],
            [...path, element, `f:${k}`],
            [...names, k],
          );
      }
    }
  }
}

/** `set` without `paths` and everything below them. */
export function withoutSubtrees(
  set: FieldSet,
  paths: Iterable<string>,
): FieldSet {
  const cut = [...paths];
  if (cut.length === 0) return new Set(set);
  const out: FieldSet = new Set();
  for (const p of set) {
    if (!cut.some(c => p === c || p.startsWith(c + SEP))) out.add(p);
  }
  return out;
}

// ------------------------------------------------------------ FieldsV1

/** The `fieldsV1` object of a set. */
export function toFieldsV1(set: FieldSet): JsonObject {
  const root: JsonObject = {};
  for (const path of [...set].sort()) {
    let node = root;
    for (const element of splitPath(path)) {
      if (!isPlainObject(node[element])) node[element] = {};
      node = node[element] as JsonObject;
    }
  }
  // A member that also has members below it carries '.'.
  const mark = (node: JsonObject, prefix: string[]) => {
    for (const [element, child] of Object.entries(node)) {
      if (element === '.') continue;
      const childObj = child as JsonObject;
      const here = [...prefix, element];
      if (Object.keys(childObj).length && set.has(joinPath(here)))
        childObj['.'] = {};
      mark(childObj, here);
    }
  };
  mark(root, []);
  return sortDeep(root);
}

function sortDeep(node: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const k of Object.keys(node).sort())
    out[k] = sortDeep(node[k] as JsonObject);
  return out;
}

/** The set a `fieldsV1` object encodes. */
export function fromFieldsV1(fields: unknown): FieldSet {
  const set: FieldSet = new Set();
  const walk = (node: unknown, path: string[]) => {
    if (!isPlainObject(node)) return;
    const children = Object.keys(node).filter(k => k !== '.');
    if (path.length && (children.length === 0 || '.' in node))
      set.add(joinPath(path));
    for (const k of children) walk(node[k], [...path, k]);
  };
  walk(fields, []);
  return set;
}

/** `.spec.template.spec.containers[name="app"].image`: how the API server names a field. */
export function describePath(path: string): string {
  return splitPath(path)
    .map(element => {
      const body = element.slice(2);
      if (element.startsWith('f:')) return `.${body}`;
      if (element.startsWith('v:')) return `[=${body}]`;
      const key = JSON.parse(body) as JsonObject;
      return `[${Object.entries(key)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(',')}]`;
    })
    .join('');
}
