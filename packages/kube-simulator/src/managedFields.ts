/**
 * `metadata.managedFields`: which manager owns which fields, kept up to date on every write as
 * the API server does. A create, PUT or non-apply PATCH records an `Update` entry for its field
 * manager with the fields it added or changed (taking them from every other manager) and drops
 * the fields it removed from every manager; a server-side apply (serverSideApply.ts) sets its
 * manager's `Apply` entry to the fields of the applied configuration. An entry left with no
 * field goes; a write that changes no manager's fields keeps the old timestamps.
 */
import { errors } from './errors';
import {
  diffFields,
  FieldSet,
  fromFieldsV1,
  toFieldsV1,
  withoutSubtrees,
} from './fieldSets';
import { apiVersionOf, ResourceDef } from './resourceDef';
import { asArray, clone, deepEqual, isPlainObject, JsonObject } from './util';

export type Operation = 'Apply' | 'Update';

/** One `managedFields` entry, its fields decoded. */
export interface ManagerEntry {
  manager: string;
  operation: Operation;
  apiVersion: string;
  time?: string;
  subresource?: string;
  fields: FieldSet;
}

/** How a write manages fields: who writes, and, for an apply, the entries it computed. */
export interface FieldManagement {
  manager: string;
  operation: Operation;
  /** When the write happens (RFC 3339, seconds). */
  time: string;
  /** An apply's entries, computed from the applied configuration. */
  entries?: ManagerEntry[];
}

/** Metadata fields the API server never counts as anyone's. */
const SYSTEM_META = [
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
];

/** The part of an object whose fields have managers (main resource or status). */
export function managedPart(obj: JsonObject, status: boolean): JsonObject {
  if (status) return obj.status === undefined ? {} : { status: obj.status };
  const out: JsonObject = { ...obj };
  delete out.apiVersion;
  delete out.kind;
  delete out.status;
  if (isPlainObject(obj.metadata)) {
    const meta = { ...obj.metadata };
    for (const field of SYSTEM_META) delete meta[field];
    if (Object.keys(meta).length) out.metadata = meta;
    else delete out.metadata;
  }
  return out;
}

/** The entries of an object's `metadata.managedFields`. */
export function entriesOf(obj: JsonObject | undefined): ManagerEntry[] {
  const meta = obj && isPlainObject(obj.metadata) ? obj.metadata : {};
  return asArray(meta.managedFields)
    .filter(isPlainObject)
    .map(e => ({
      manager: String(e.manager ?? ''),
      operation: e.operation === 'Apply' ? 'Apply' : 'Update',
      apiVersion: String(e.apiVersion ?? ''),
      time: typeof e.time === 'string' ? e.time : undefined,
      subresource:
        typeof e.subresource === 'string' ? e.subresource : undefined,
      fields: fromFieldsV1(e.fieldsV1),
    }));
}

function sameEntry(a: ManagerEntry, b: ManagerEntry): boolean {
  return (
    a.manager === b.manager &&
    a.operation === b.operation &&
    (a.subresource ?? '') === (b.subresource ?? '')
  );
}

function sameFields(a: FieldSet, b: FieldSet): boolean {
  return a.size === b.size && [...a].every(p => b.has(p));
}

/** Writes entries to `metadata.managedFields` (none: the field goes). */
export function setEntries(obj: JsonObject, entries: ManagerEntry[]): void {
  if (!isPlainObject(obj.metadata)) obj.metadata = {};
  const meta = obj.metadata as JsonObject;
  const kept = entries.filter(e => e.fields.size > 0);
  if (kept.length === 0) {
    delete meta.managedFields;
    return;
  }
  meta.managedFields = kept.map(e => ({
    manager: e.manager,
    operation: e.operation,
    apiVersion: e.apiVersion,
    ...(e.time ? { time: e.time } : {}),
    fieldsType: 'FieldsV1',
    fieldsV1: toFieldsV1(e.fields),
    ...(e.subresource ? { subresource: e.subresource } : {}),
  }));
}

/** A manager entry with unchanged fields keeps its old timestamp. */
function keepTimes(old: ManagerEntry[], next: ManagerEntry[]): void {
  for (const entry of next) {
    const before = old.find(o => sameEntry(o, entry));
    if (before && sameFields(before.fields, entry.fields))
      entry.time = before.time;
  }
}

/** The entries (`owners`') after an `Update` by `manager` that changed `old` into `next`. */
function updateEntries(
  def: ResourceDef,
  owners: JsonObject | undefined,
  old: JsonObject | undefined,
  next: JsonObject,
  fm: FieldManagement,
  status: boolean,
): ManagerEntry[] {
  const entries = entriesOf(owners);
  const { changed, removed } = diffFields(
    def,
    managedPart(old ?? {}, status),
    managedPart(next, status),
  );
  const writer: ManagerEntry = {
    manager: fm.manager,
    operation: 'Update',
    apiVersion: apiVersionOf(def),
    time: fm.time,
    subresource: status ? 'status' : undefined,
    fields: new Set(),
  };
  const out: ManagerEntry[] = [];
  let found = false;
  for (const entry of entries) {
    const kept = withoutSubtrees(entry.fields, removed);
    if (sameEntry(entry, writer)) {
      found = true;
      const fields = new Set([...kept, ...changed]);
      out.push({
        ...entry,
        apiVersion: writer.apiVersion,
        time: fm.time,
        fields,
      });
    } else {
      out.push({
        ...entry,
        fields: new Set([...kept].filter(p => !changed.has(p))),
      });
    }
  }
  if (!found) out.push({ ...writer, fields: new Set(changed) });
  return out;
}

/**
 * Sets `next`'s `metadata.managedFields` for a write (`opts`: who writes, and whether to the
 * status subresource) that turns `old` (undefined: a create) into `next`. Without `fm` (the simulator's own writes) a create has none and an update
 * keeps what it had.
 */
export function trackManagedFields(
  def: ResourceDef,
  old: JsonObject | undefined,
  next: JsonObject,
  opts: { fieldManagement?: FieldManagement; subresource?: string },
): void {
  const fm = opts.fieldManagement;
  const status = opts.subresource === 'status';
  const meta = isPlainObject(next.metadata) ? next.metadata : {};
  // An update that sends managedFields sets them (how a client hands over ownership); one
  // that leaves them out keeps the stored ones.
  const given = old && Array.isArray(meta.managedFields);
  if (!fm) {
    if (!old) setEntries(next, []);
    else if (!given) {
      const kept = isPlainObject(old.metadata) && old.metadata.managedFields;
      if (kept) meta.managedFields = clone(kept);
      else delete meta.managedFields;
    }
    return;
  }
  const before = entriesOf(old);
  const entries =
    fm.operation === 'Apply' && fm.entries
      ? fm.entries.map(e => ({ ...e, fields: new Set(e.fields) }))
      : updateEntries(def, given ? next : old, old, next, fm, status);
  keepTimes(before, entries);
  setEntries(next, entries);
  if (old && isPlainObject(old.metadata) && isPlainObject(next.metadata)) {
    // The same entries as before: the very same list, so a no-op write stays one.
    const oldList = old.metadata.managedFields;
    if (deepEqual(oldList, next.metadata.managedFields)) {
      if (oldList === undefined) delete next.metadata.managedFields;
      else next.metadata.managedFields = clone(oldList);
    }
  }
}

/** 422 for bad PatchOptions/CreateOptions, as the API server words it. */
export function invalidOptions(
  field: string,
  message: string,
  reason = 'FieldValueInvalid',
) {
  return errors.invalid('PatchOptions', 'meta.k8s.io', '', [
    { reason, message, field },
  ]);
}

/** The field manager of a write: `fieldManager`, else the User-Agent's first word. */
export function fieldManagerOf(
  query: URLSearchParams,
  userAgent: string | undefined,
  apply: boolean,
): string {
  const given = query.get('fieldManager');
  if (given !== null && given !== '') {
    if (given.length > 128 || !/^[\x20-\x7e\u00a0-\uffff]+$/.test(given)) {
      throw invalidOptions(
        'fieldManager',
        `Invalid value: "${given}": must be less than 128 characters and printable`,
      );
    }
    return given;
  }
  if (apply) {
    throw invalidOptions(
      'fieldManager',
      'Required value: is required for apply patch',
      'FieldValueRequired',
    );
  }
  return (userAgent ?? '').split('/')[0] || 'unknown';
}
