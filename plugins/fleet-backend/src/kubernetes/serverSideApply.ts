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

/** Whether `entry` is one an earlier Fleet wrote (an `Update` under one of its names). */
function isEarlierFleet(entry: Record<string, unknown>): boolean {
  return (
    entry.operation === 'Update' &&
    !entry.subresource &&
    EARLIER_FLEET_MANAGERS.includes(String(entry.manager ?? ''))
  );
}

function mergeFields(a: unknown, b: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(a as Record<string, unknown>) };
  for (const [k, v] of Object.entries((b ?? {}) as Record<string, unknown>))
    out[k] = k in out ? mergeFields(out[k], v) : v;
  return out;
}

/** An entry as the API server serializes it (client-node reads `time` as a Date). */
function wireEntry(entry: V1ManagedFieldsEntry): Record<string, unknown> {
  const time = entry.time as unknown;
  const out: Record<string, unknown> = { ...entry };
  if (time instanceof Date)
    out.time = time.toISOString().replace(/\.\d+Z$/, 'Z');
  for (const key of Object.keys(out))
    if (out[key] === undefined) delete out[key];
  return out;
}

/**
 * The JSON patch that hands the fields an earlier Fleet wrote by merge patch to Fleet's
 * `Apply` entry (what `kubectl` does when it moves from client-side to server-side apply), so
 * that the first apply removes what Fleet no longer sends; undefined when there is none. It
 * holds only while the managers are still those read (a `test` of `managedFields`).
 */
export function ownershipUpgrade(live: KubernetesObject): object[] | undefined {
  const entries = (live.metadata?.managedFields ?? []).map(wireEntry);
  const earlier = entries.filter(isEarlierFleet);
  if (earlier.length === 0) return undefined;
  const apply = entries.find(
    e =>
      e.manager === FIELD_MANAGER && e.operation === 'Apply' && !e.subresource,
  );
  const fields = [apply, ...earlier].reduce(
    (acc, e) => mergeFields(acc, e?.fieldsV1),
    {} as Record<string, unknown>,
  );
  const entry = {
    manager: FIELD_MANAGER,
    operation: 'Apply',
    apiVersion: apply?.apiVersion ?? live.apiVersion,
    time: apply?.time ?? earlier[0].time,
    fieldsType: 'FieldsV1',
    fieldsV1: fields,
  };
  const next = entries.filter(e => !isEarlierFleet(e) && e !== apply);
  return [
    { op: 'test', path: '/metadata/managedFields', value: entries },
    { op: 'replace', path: '/metadata/managedFields', value: [entry, ...next] },
  ];
}

/**
 * Writes `body` by server-side apply as Fleet (`fieldManager=fleet`, `fieldValidation=Strict`),
 * through `patch`, the kind's own patch call. Fields an earlier Fleet wrote by merge patch
 * become Fleet's first (`live` shows them). A conflict only with earlier Fleet managers is
 * applied again with force; a conflict with any other manager is a `FieldConflictError`, never
 * forced. The caller checks first that the object is Fleet's (deploy/ownership.ts).
 */
export async function serverSideApply<T>(
  body: KubernetesObject,
  live: KubernetesObject | undefined,
  patch: PatchCall<T>,
  options: () => ConfigurationOptions,
): Promise<T> {
  const base = {
    fieldManager: FIELD_MANAGER,
    fieldValidation: 'Strict' as const,
  };
  const upgrade = live && ownershipUpgrade(live);
  if (upgrade) {
    // Managers that changed since the read (422: the test failed): the apply goes on, forcing
    // over earlier Fleet managers only, and the next apply hands their fields over.
    await patch(
      { ...base, body: upgrade },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch, options()),
    ).catch(error => {
      if (!isKubeStatus(error, 422)) throw error;
    });
  }
  const send = (force: boolean) =>
    patch(
      { ...base, body, force },
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
    if (!conflicts) throw error;
    const foreign = conflicts.filter(
      c => !EARLIER_FLEET_MANAGERS.includes(c.manager),
    );
    if (foreign.length === 0) return send(true);
    throw new FieldConflictError(
      body.kind ?? 'object',
      body.metadata?.namespace,
      body.metadata?.name ?? '',
      foreign,
    );
  }
}
