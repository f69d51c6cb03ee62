import {
  PatchStrategy,
  setHeaderOptions,
  type ConfigurationOptions,
  type KubernetesObject,
  type V1ManagedFieldsEntry,
} from '@kubernetes/client-node';
import { isKubeStatus } from './requestOptions';

/** The field manager of every object Fleet writes. */
export const FIELD_MANAGER = 'fleet';

/**
 * The managers earlier Fleet versions wrote under: they sent merge patches, creates and
 * replaces without `fieldManager`, which the API server names after the User-Agent's first word,
 * `node-fetch` for client-node 1.x; and an `Update` as `fleet`.
 */
export const EARLIER_FLEET_MANAGERS: readonly string[] = [
  FIELD_MANAGER,
  'node-fetch',
];

/** What a kind's patch call takes besides the object's name and namespace. */
export interface ApplyParams {
  body: unknown;
  fieldManager: string;
  fieldValidation: 'Strict';
  force?: boolean;
}

/** One kind's patch call (`patchNamespacedDeployment`, `patchNamespacedCustomObject`, ...). */
export type PatchCall<T> = (
  params: ApplyParams,
  options: ConfigurationOptions,
) => Promise<T>;

/** A field another manager owns with another value: Fleet does not take it. */
export interface FieldConflict {
  manager: string;
  field: string;
}

/** Apply refused: fields Fleet would change belong to other managers. */
export class FieldConflictError extends Error {
  constructor(
    readonly kind: string,
    readonly namespace: string | undefined,
    readonly objectName: string,
    readonly conflicts: FieldConflict[],
  ) {
    const where = namespace ? `${namespace}/${objectName}` : objectName;
    const fields = conflicts
      .map(c => `${c.field} (managed by "${c.manager}")`)
      .join(', ');
    super(
      `${kind} ${where}: field conflict with another manager, not forced: ${fields}`,
    );
    this.name = 'FieldConflictError';
  }
}

/** The field conflicts of a 409 answer to an apply, or undefined for any other error. */
export function fieldConflictsOf(error: unknown): FieldConflict[] | undefined {
  const e = error as { code?: unknown; body?: unknown } | undefined;
  if (e?.code !== 409) return undefined;
  let body = e.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  const causes = (
    body as {
      details?: {
        causes?: { reason?: string; message?: string; field?: string }[];
      };
    }
  )?.details?.causes;
  const conflicts = (causes ?? [])
    .filter(c => c.reason === 'FieldManagerConflict')
    .map(c => ({
      manager: /conflict with "([^"]*)"/.exec(c.message ?? '')?.[1] ?? '',
      field: c.field ?? '',
    }));
  return conflicts.length ? conflicts : undefined;
}

type Fields = Record<string, unknown>;

/** Marks a mask node whose whole subtree is Fleet's. */
const WHOLE: Fields = Object.freeze({}) as Fields;

/**
 * Fields an earlier Fleet may have sent that the body Fleet applies now can leave out (its
 * generated workload's optional parts): handed over at the migration even when not sent.
 */
const OPTIONAL_FIELDS: Record<string, string[][]> = {
  Deployment: [
    'tolerations',
    'affinity',
    'topologySpreadConstraints',
    'nodeSelector',
  ].map(f => ['f:spec', 'f:template', 'f:spec', `f:${f}`]),
  Ingress: [
    ['f:spec', 'f:ingressClassName'],
    ['f:spec', 'f:tls'],
  ],
  PodDisruptionBudget: [
    ['f:spec', 'f:minAvailable'],
    ['f:spec', 'f:maxUnavailable'],
  ],
};

/**
 * The key fields of the lists Fleet's objects hold that Kubernetes merges by key, by the list's
 * field name (`ports` by where it is); any other list is atomic (owned whole).
 */
const LIST_KEYS: Record<string, string[]> = {
  containers: ['name'],
  initContainers: ['name'],
  env: ['name'],
  volumes: ['name'],
  volumeMounts: ['mountPath'],
  imagePullSecrets: ['name'],
  topologySpreadConstraints: ['topologyKey', 'whenUnsatisfiable'],
};

function listKeysOf(field: string, inContainer: boolean): string[] | undefined {
  if (field === 'ports')
    return inContainer ? ['containerPort', 'protocol'] : ['port', 'protocol'];
  return LIST_KEYS[field];
}

/** An item's element key as the API server writes it: `k:` and its key fields, sorted. */
function elementKey(item: Fields, keys: string[]): string | undefined {
  const fields: Fields = {};
  for (const key of [...keys].sort()) {
    const value = item[key] ?? (key === 'protocol' ? 'TCP' : undefined);
    if (value === undefined) return undefined;
    fields[key] = value;
  }
  return `k:${JSON.stringify(fields)}`;
}

/**
 * The fields of `value` in the FieldsV1 shape, as a mask: an object's keys one by one, an item
 * of a keyed list by its element key and then its own fields, any other list or value whole.
 */
function maskOf(value: unknown, field = '', inContainer = false): Fields {
  if (Array.isArray(value)) {
    const keys = listKeysOf(field, inContainer);
    if (!keys) return WHOLE;
    const mask: Fields = {};
    for (const item of value) {
      const key = item && typeof item === 'object' && elementKey(item, keys);
      if (!key) return WHOLE;
      mask[key] = maskOf(
        item,
        '',
        inContainer || field === 'containers' || field === 'initContainers',
      );
    }
    return mask;
  }
  if (!value || typeof value !== 'object') return WHOLE;
  return Object.fromEntries(
    Object.entries(value as Fields).map(([k, v]) => [
      `f:${k}`,
      maskOf(v, k, inContainer),
    ]),
  );
}

/** The mask of what Fleet may have sent for `body`: its fields and its kind's optional ones. */
function fleetMask(body: KubernetesObject): Fields {
  const mask = maskOf(body);
  for (const path of OPTIONAL_FIELDS[body.kind ?? ''] ?? []) {
    let node = mask;
    path.forEach((key, i) => {
      if (node === WHOLE) return;
      if (i === path.length - 1) node[key] = WHOLE;
      else node = (node[key] ??= {}) as Fields;
    });
  }
  return mask;
}

/** The part of `fields` inside `mask` (`keep`), or outside it (`!keep`). */
function split(fields: Fields, mask: Fields, keep: boolean): Fields {
  const out: Fields = {};
  for (const [key, sub] of Object.entries(fields)) {
    if (key === '.') continue;
    const m = mask[key] as Fields | undefined;
    if (m === WHOLE) {
      if (keep) out[key] = sub;
    } else if (m === undefined) {
      if (!keep) out[key] = sub;
    } else {
      const part = split(sub as Fields, m, keep);
      if (Object.keys(part).length) out[key] = part;
    }
  }
  // The node itself ('.', a map or a list item) goes with whatever part of it each side has.
  if ('.' in fields && Object.keys(out).length) out['.'] = fields['.'];
  return out;
}

const isFleetApply = (e: Fields) =>
  e.manager === FIELD_MANAGER && e.operation === 'Apply' && !e.subresource;

/**
 * The earlier Fleet managers of `live`: its own `Update` entries (its create, a scaling)
 * always; and, until Fleet's first apply is recorded (an object an earlier Fleet wrote by merge
 * patch, which never named a field manager), `node-fetch`, which any client-node tool without a
 * field manager writes under too.
 */
function earlierManagers(entries: Fields[]): string[] {
  return entries.some(isFleetApply)
    ? [FIELD_MANAGER]
    : [...EARLIER_FLEET_MANAGERS];
}

function mergeFields(a: unknown, b: unknown): Fields {
  const out: Fields = { ...(a as Fields) };
  for (const [k, v] of Object.entries((b ?? {}) as Fields))
    out[k] = k in out ? mergeFields(out[k], v) : v;
  return out;
}

/** An entry as the API server serializes it (client-node reads `time` as a Date). */
function wireEntry(entry: V1ManagedFieldsEntry): Fields {
  const time = entry.time as unknown;
  const out: Fields = { ...entry };
  if (time instanceof Date)
    out.time = time.toISOString().replace(/\.\d+Z$/, 'Z');
  for (const key of Object.keys(out))
    if (out[key] === undefined) delete out[key];
  return out;
}

/**
 * The JSON patch that hands the fields an earlier Fleet wrote to Fleet's `Apply` entry (what
 * `kubectl` does when it moves from client-side to server-side apply), so that the next apply
 * removes what Fleet no longer sends; undefined when there is none. Fleet's own `Update`
 * entries go whole; a `node-fetch` entry (before Fleet's first apply only) gives up only the
 * fields Fleet sends or its generated workload may have sent, and keeps the rest (another
 * tool's annotation or sidecar). It holds only while the managers are still those read (a
 * `test` of `managedFields`).
 */
export function ownershipUpgrade(
  live: KubernetesObject,
  body: KubernetesObject,
): object[] | undefined {
  const entries = (live.metadata?.managedFields ?? []).map(wireEntry);
  const managers = earlierManagers(entries);
  const earlier = entries.filter(
    e =>
      e.operation === 'Update' &&
      !e.subresource &&
      managers.includes(String(e.manager ?? '')),
  );
  if (earlier.length === 0) return undefined;
  const mask = fleetMask(body);
  const apply = entries.find(isFleetApply);
  let fields = (apply?.fieldsV1 ?? {}) as Fields;
  const kept: { original: Fields; entry: Fields }[] = [];
  for (const e of earlier) {
    const own = (e.fieldsV1 ?? {}) as Fields;
    if (e.manager === FIELD_MANAGER) {
      fields = mergeFields(fields, own);
      continue;
    }
    fields = mergeFields(fields, split(own, mask, true));
    const rest = split(own, mask, false);
    if (Object.keys(rest).length)
      kept.push({ original: e, entry: { ...e, fieldsV1: rest } });
  }
  const entry = {
    manager: FIELD_MANAGER,
    operation: 'Apply',
    apiVersion: apply?.apiVersion ?? live.apiVersion,
    time: apply?.time ?? earlier[0].time,
    fieldsType: 'FieldsV1',
    fieldsV1: fields,
  };
  // Only the entries it changes are tested and written, each at its index: another manager's
  // entry changing meanwhile (a controller's status write) does not fail it, and an entry
  // moved or added before them does.
  const at = (e: Fields) => `/metadata/managedFields/${entries.indexOf(e)}`;
  const touched = apply ? [apply, ...earlier] : earlier;
  const [first, ...rest] = touched;
  const remainder = new Map(kept.map(k => [k.original, k.entry]));
  const ops: object[] = touched.map(e => ({
    op: 'test',
    path: at(e),
    value: e,
  }));
  ops.push({ op: 'replace', path: at(first), value: entry });
  const removals: Fields[] = [];
  for (const e of rest) {
    if (remainder.has(e))
      ops.push({ op: 'replace', path: at(e), value: remainder.get(e) });
    else removals.push(e);
  }
  if (remainder.has(first))
    ops.push({
      op: 'add',
      path: '/metadata/managedFields/-',
      value: remainder.get(first),
    });
  removals
    .sort((x, y) => entries.indexOf(y) - entries.indexOf(x))
    .forEach(e => ops.push({ op: 'remove', path: at(e) }));
  return ops;
}

/** Whether `error` is a 422 refusing the applied `metadata.uid` (not the object's). */
function isUidRefusal(error: unknown): boolean {
  if (!isKubeStatus(error, 422)) return false;
  const body = (error as { body?: unknown }).body;
  return (
    typeof body === 'string' ? body : JSON.stringify(body ?? '')
  ).includes('metadata.uid');
}

/** What a kind's create call takes besides the namespace. */
export interface CreateParams {
  /** The object to create: the kind's own type (`V1Deployment`, ...). */
  body: any;
  fieldManager: string;
  fieldValidation: 'Strict';
}

/** One kind's create call (`createNamespacedDeployment`, `createNamespacedCustomObject`, ...). */
export type CreateCall<T> = (
  params: CreateParams,
  options: ConfigurationOptions,
) => Promise<T>;

/**
 * An object Fleet read as absent was there when Fleet created it: someone made it meanwhile.
 * Fleet wrote nothing; the caller reads it again and checks whose it is.
 */
export class ObjectAppearedError extends Error {
  constructor(
    readonly kind: string,
    readonly objectName: string,
    how = 'appeared while Fleet was creating it',
  ) {
    super(`${kind} ${objectName} ${how}`);
    this.name = 'ObjectAppearedError';
  }
}

/** A kind's calls for `serverSideApply`: its patch, and its create for an object not there. */
export interface ApplyCalls<T> {
  patch: PatchCall<T>;
  create: CreateCall<T>;
}

/**
 * Writes `body` by server-side apply as Fleet (`fieldManager=fleet`, `fieldValidation=Strict`)
 * through the kind's own calls. An object not there (`live` undefined) is created, never
 * applied: an apply would merge into one someone made since the read (then
 * `ObjectAppearedError`). An object there is applied with its uid as a precondition, so the
 * apply lands on the object whose ownership the caller checked (deploy/ownership.ts), not on
 * one made since under the same name. Fields an earlier Fleet wrote become Fleet's first
 * (`ownershipUpgrade`). A conflict only with earlier Fleet managers is applied again with
 * force; with any other manager it is a `FieldConflictError`, never forced.
 */
export async function serverSideApply<T>(
  body: KubernetesObject,
  live: KubernetesObject | undefined,
  calls: ApplyCalls<T>,
  options: () => ConfigurationOptions,
): Promise<T> {
  const base = {
    fieldManager: FIELD_MANAGER,
    fieldValidation: 'Strict' as const,
  };
  if (!live) {
    let created: T;
    try {
      created = await calls.create({ ...base, body }, options());
    } catch (error) {
      if (!isKubeStatus(error, 409)) throw error;
      throw new ObjectAppearedError(
        body.kind ?? 'object',
        body.metadata?.name ?? '',
      );
    }
    // A create is recorded as Fleet's `Update` entry: it is handed to Fleet's `Apply` entry at
    // once, so that the next apply, and a dry run of it (a preview), removes a field Fleet
    // stops sending. When that fails, the next apply hands it over as for an earlier Fleet.
    const made = created as KubernetesObject;
    const upgrade = ownershipUpgrade(made, body);
    if (!upgrade) return created;
    // Only on the object Fleet made: one deleted and made again by someone else meanwhile fails
    // the uid test, and is left to the next apply's checks.
    const onlyOnIt = made.metadata?.uid
      ? [{ op: 'test', path: '/metadata/uid', value: made.metadata.uid }]
      : [];
    return calls
      .patch(
        { ...base, body: [...onlyOnIt, ...upgrade] },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch, options()),
      )
      .catch(() => created);
  }
  const upgrade = ownershipUpgrade(live, body);
  if (upgrade) {
    // Entries that changed since the read (422: a `test` failed): nothing is applied, since an
    // apply would end the hand-over for good; the caller reads the object again.
    await calls
      .patch(
        { ...base, body: upgrade },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch, options()),
      )
      .catch(error => {
        if (!isKubeStatus(error, 422)) throw error;
        throw new ObjectAppearedError(
          body.kind ?? 'object',
          body.metadata?.name ?? '',
          'changed while Fleet was taking over the fields it wrote before',
        );
      });
  }
  const earlier = earlierManagers(
    (live.metadata?.managedFields ?? []).map(wireEntry),
  );
  const applied = {
    ...body,
    metadata: { ...body.metadata, uid: live.metadata?.uid },
  };
  const send = (force: boolean) =>
    calls.patch(
      { ...base, body: applied, force },
      setHeaderOptions(
        'Content-Type',
        PatchStrategy.ServerSideApply,
        options(),
      ),
    );
  try {
    return await send(false);
  } catch (error) {
    const conflicts = fieldConflictsOf(error);
    // The uid precondition failed (422: another object of the same name now; 409: none any
    // more): the object Fleet checked was replaced or deleted meanwhile. Nothing was written;
    // read it again.
    if (!conflicts && (isKubeStatus(error, 409) || isUidRefusal(error))) {
      throw new ObjectAppearedError(
        body.kind ?? 'object',
        body.metadata?.name ?? '',
        'was replaced while Fleet was applying it',
      );
    }
    if (!conflicts) throw error;
    const foreign = conflicts.filter(c => !earlier.includes(c.manager));
    if (foreign.length === 0) return send(true);
    throw new FieldConflictError(
      body.kind ?? 'object',
      body.metadata?.namespace,
      body.metadata?.name ?? '',
      foreign,
    );
  }
}
