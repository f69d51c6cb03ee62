/**
 * The shapes the simulated cluster store (store.ts) works with: objects as stored and
 * returned, list pages, write options, the write history, and an entry of the store.
 */
import type { FieldManagement } from './managedFields';
import { ResourceDef } from './resourceDef';
import { RolloutState } from './rolloutState';
import { asObject, clone, isPlainObject, JsonObject } from './util';
import { RolloutClock } from './workloads';
import type { StoreValidationOptions } from './validateStored';

/** What kind of write a history entry records. */
export type WriteVerb = 'create' | 'update' | 'patch' | 'delete' | 'status';

/** One API write, as `history()` shows it. */
export interface HistoryEntry {
  /** When the write happened (ISO 8601, milliseconds). */
  at: string;
  verb: WriteVerb;
  kind: string;
  namespace?: string;
  name: string;
  /** The resourceVersion the write produced. */
  resourceVersion: string;
  /** The stored object right after the write (for a delete: the last state). */
  object: SimObject;
}

export interface HistoryFilter {
  kind?: string;
  namespace?: string;
  name?: string;
  verb?: WriteVerb;
}

/** The most writes a cluster's history keeps (the oldest go first). */
export const HISTORY_LIMIT = 2000;

/** An object as stored: what GET returns, with apiVersion and kind always set. */
export interface SimObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid: string;
    resourceVersion: string;
    generation?: number;
    creationTimestamp: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  spec?: any;
  status?: any;
  [key: string]: unknown;
}

export interface ListQuery {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continueToken?: string;
}

export interface WriteOptions extends StoreValidationOptions {
  dryRun?: boolean;
  /** Who writes, for `metadata.managedFields` (none: the simulator's own write). */
  fieldManagement?: FieldManagement;
  /** 'status' for the /status subresource: only status changes are kept. */
  subresource?: 'status';
}

export interface WriteResult {
  object: SimObject;
  created: boolean;
}

export interface SimList {
  kind: string;
  apiVersion: string;
  metadata: {
    resourceVersion: string;
    continue?: string;
    remainingItemCount?: number;
  };
  items: any[];
}

export function out(obj: JsonObject): SimObject {
  return clone(obj) as unknown as SimObject;
}

export interface Entry {
  def: ResourceDef;
  obj: JsonObject;
  clock?: RolloutClock;
  /** When the object was created, in milliseconds (its creationTimestamp has seconds only). */
  createdAt?: number;
  /** Services only: when the Service became a LoadBalancer after its creation. */
  loadBalancerRequestedAt?: number;
  /**
   * HPAs only: the HPA's last clamp of its target, while the target keeps the clamped count
   * (`from` is what the simulated metrics go on asking for).
   */
  hpaScaled?: { from: number; to: number };
  /** The simulated Argo Rollouts controller's state (Rollouts only). */
  ro?: RolloutState;
}

export const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export function keyOf(
  def: ResourceDef,
  namespace: string | undefined,
  name: string,
): string {
  return `${def.group}/${def.plural}/${namespace ?? ''}/${name}`;
}

export function metaOf(obj: JsonObject): JsonObject {
  if (!isPlainObject(obj.metadata)) obj.metadata = {};
  return obj.metadata as JsonObject;
}

/** The part of an object whose changes bump metadata.generation. */
export function generationRelevant(obj: JsonObject): JsonObject {
  const rest = { ...obj };
  delete rest.metadata;
  delete rest.status;
  delete rest.apiVersion;
  delete rest.kind;
  return rest;
}

/** The kinds with a `spec.replicas` an HPA scales. */
export function isWorkload(def: ResourceDef): boolean {
  return (
    def.kind === 'Deployment' ||
    def.kind === 'Rollout' ||
    def.kind === 'StatefulSet'
  );
}

/** The kinds whose status follows rollouts, one per generation (a `RolloutClock`). */
export function hasRolloutClock(def: ResourceDef): boolean {
  return isWorkload(def) || def.kind === 'DaemonSet';
}

export function availableOf(obj: JsonObject): number {
  const status = asObject(obj.status);
  return typeof status?.availableReplicas === 'number'
    ? status.availableReplicas
    : 0;
}
