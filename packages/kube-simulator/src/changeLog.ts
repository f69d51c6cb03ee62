/**
 * The change history of one simulated cluster, as the API server's watch cache keeps it: every
 * write (API requests, status subresources, the controllers' writes, deletions) becomes one
 * event with the resourceVersion it produced, in resourceVersion order. Only a bounded window
 * of the latest events is kept: a watch from a resourceVersion older than the window cannot be
 * served (410 Expired), exactly as when etcd has compacted the revisions a client asks for.
 */
import { fieldValue } from './selectors';
import { asObject, JsonObject } from './util';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** What label and field selectors look at in an object. */
export interface Selection {
  namespace?: string;
  labels: Record<string, string>;
  /** `metadata.name`, `metadata.namespace` and the kind's selectable fields, as strings. */
  fields: Record<string, string>;
}

/** An object as a change carries it: serialized once, with what selectors need. */
export interface ChangedObject {
  json: string;
  selection: Selection;
}

export interface ChangeEvent {
  /** The resourceVersion the change produced. */
  rv: number;
  type: ChangeType;
  /** `<group>/<plural>` of the storage version, e.g. `apps/deployments`, `/pods`. */
  resource: string;
  /** The object after the change; for DELETED, its last state (at the deletion's resourceVersion). */
  object: ChangedObject;
  /**
   * The object before the change, kept only when its selection (labels, selectable fields)
   * differs from `object`'s: to tell when it stops or starts matching a selector.
   */
  prev?: ChangedObject;
}

/** The selection of `obj`, with `extraFields` (the kind's selectable fields) besides name and namespace. */
export function selectionOf(
  obj: JsonObject,
  extraFields: readonly string[] = [],
): Selection {
  const meta = asObject(obj.metadata) ?? {};
  const fields: Record<string, string> = {};
  for (const f of ['metadata.name', 'metadata.namespace', ...extraFields])
    fields[f] = fieldValue(obj, f);
  return {
    ...(typeof meta.namespace === 'string'
      ? { namespace: meta.namespace }
      : {}),
    labels: { ...((asObject(meta.labels) ?? {}) as Record<string, string>) },
    fields,
  };
}

export type ChangeListener = (event: ChangeEvent) => void;

/** How many events a cluster keeps by default: a watch from an older resourceVersion gets 410. */
export const DEFAULT_WATCH_HISTORY_LIMIT = 1000;

export class ChangeLog {
  private readonly events: ChangeEvent[] = [];
  private readonly listeners = new Set<ChangeListener>();
  /** The newest resourceVersion whose event is gone: watching from below it is 410 Expired. */
  private floor = 0;
  private max = DEFAULT_WATCH_HISTORY_LIMIT;

  get limit(): number {
    return this.max;
  }

  set limit(value: number) {
    if (!Number.isInteger(value) || value < 1)
      throw new Error(
        `the watch history limit must be a positive integer, got ${value}`,
      );
    this.max = value;
    this.trim();
  }

  /** The oldest resourceVersion a watch can still start from. */
  get oldestWatchable(): number {
    return this.floor;
  }

  /** Events kept now (oldest first). */
  get size(): number {
    return this.events.length;
  }

  append(event: ChangeEvent): void {
    this.events.push(event);
    this.trim();
    for (const listener of [...this.listeners]) listener(event);
  }

  /**
   * The events after `rv`, oldest first; `undefined` when some of them are no longer kept
   * (the caller answers 410 Expired).
   */
  since(rv: number): ChangeEvent[] | undefined {
    if (rv < this.floor) return undefined;
    let i = this.events.length;
    while (i > 0 && this.events[i - 1].rv > rv) i -= 1;
    return this.events.slice(i);
  }

  /** Forgets every event up to `rv` (the current resourceVersion): a compaction. */
  compact(rv: number): void {
    this.events.length = 0;
    this.floor = Math.max(this.floor, rv);
  }

  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private trim(): void {
    if (this.events.length <= this.max) return;
    const dropped = this.events.splice(0, this.events.length - this.max);
    this.floor = Math.max(this.floor, dropped[dropped.length - 1].rv);
  }
}
