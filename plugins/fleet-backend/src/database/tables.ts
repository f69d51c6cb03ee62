import type {
  Application,
  ApplicationOrigin,
  ClusterSource,
  ClusterStatus,
  Deployment,
  DeploymentStatus,
  FleetEvent,
  Revision,
  RevisionCause,
  SyncStatus,
} from '@cnp/plugin-fleet-common';
import type { Knex } from 'knex';
import { toIso } from './dialect';
import type { ClusterRecord, DeploymentState, NewEvent } from './types';

/*
 * The rows of Fleet's tables as the drivers return them, and the mappers to the API's types.
 * Timestamps come back as a Date (PostgreSQL), a number or a string (SQLite); JSON columns are
 * text. The migrations in `migrations/` define these tables.
 */

type Timestamp = Date | string | number;

export interface ClusterRow {
  name: string;
  endpoint: string;
  kubeconfig_ref: string;
  context: string | null;
  source: ClusterSource;
  /** JSON map */
  labels: string;
  status: ClusterStatus;
  status_reason: string | null;
  consecutive_failures: number | string;
  consecutive_successes: number | string;
  failure_threshold: number | string | null;
  cascade_held_at: Timestamp | null;
  first_failure_at: Timestamp | null;
  last_probe_at: Timestamp | null;
  last_success_at: Timestamp | null;
  last_transition_at: Timestamp | null;
  probe_latency_ms: number | string | null;
  server_version: string | null;
  /** The identity: the normalized server URL and the CA fingerprint (NULL: unknown). */
  identity_server: string | null;
  identity_ca: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ApplicationRow {
  id: string;
  entity_ref: string;
  name: string;
  origin: ApplicationOrigin | null;
  /** JSON application spec */
  spec: string;
  /** JSON placement */
  placement: string;
  /** Joined from fleet_application_removals: a boolean (PostgreSQL) or 0/1 (SQLite). */
  removing?: boolean | number;
  /** Bumped on every write of spec or placement. */
  version: number | string;
  /** Joined from fleet_placement_grants: JSON [{ cluster, reason }], or null. */
  placement_refused?: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface DeploymentRow {
  id: string;
  application_id: string;
  cluster: string;
  status: DeploymentStatus;
  status_reason: string | null;
  message: string | null;
  sync_status: SyncStatus;
  /** JSON list of what differs, while OUT_OF_SYNC */
  sync_differences: string | null;
  image: string | null;
  revision: number | string;
  /** A boolean (PostgreSQL) or 0/1 (SQLite). */
  placed: boolean | number;
  last_applied_at: Timestamp | null;
  last_synced_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A deployment row joined with its application's entity ref and its cluster's status. */
export interface DeploymentViewRow extends DeploymentRow {
  entity_ref: string;
  cluster_status: ClusterStatus | null;
}

export interface RevisionRow {
  id: number | string;
  deployment_id: string;
  application_id: string;
  cluster: string;
  revision: number | string;
  image: string;
  replicas: number | string | null;
  /** JSON map */
  env: string | null;
  /** JSON { requests, limits } */
  resources: string | null;
  namespace: string | null;
  port: number | string | null;
  cause: RevisionCause;
  created_by: string;
  created_at: Timestamp;
  outcome: 'DEPLOYED' | 'FAILED' | null;
  outcome_reason: string | null;
  outcome_at: Timestamp | null;
  /** JSON ManifestSource, for a component's own manifests */
  source?: string | null;
  /** JSON array of the objects rendered for the cluster, for a component's own manifests */
  objects?: string | null;
}

export interface EventRow {
  id: number | string;
  subject_kind: FleetEvent['subjectKind'];
  subject: string;
  actor: string;
  from_status: string | null;
  to_status: string;
  reason: string | null;
  message: string | null;
  created_at: Timestamp;
}

export interface StateRow {
  key: string;
  /** JSON */
  value: string;
  updated_at: Timestamp;
}

export interface LockRow {
  name: string;
  holder: string;
  expires_at: Timestamp;
  /** The fencing token: bumped whenever a new holder takes the lease. */
  token: number | string;
}

export function parseJson<T>(text: unknown, fallback: T): T {
  if (typeof text !== 'string' || text === '') return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

function optional<T>(value: T | null | undefined): T | undefined {
  return value === null ? undefined : value;
}

/*
 * The API's types have every field that may have no value, as null when unset (the spec lists
 * them as required and nullable): the mappers to them say null, not undefined.
 */

function orNull<T>(value: T | null | undefined): T | null {
  return value ?? null;
}

function numberOrNull(
  value: number | string | null | undefined,
): number | null {
  return value === null || value === undefined ? null : Number(value);
}

function isoOrNull(value: unknown): string | null {
  return toIso(value) ?? null;
}

function jsonOrNull<T>(text: string | null): T | null {
  return text ? parseJson<T | null>(text, null) : null;
}

export function toClusterRecord(row: ClusterRow): ClusterRecord {
  return {
    name: row.name,
    endpoint: row.endpoint,
    kubeconfigRef: row.kubeconfig_ref,
    context: orNull(row.context),
    source: row.source,
    labels: parseJson(row.labels, {}),
    status: row.status,
    statusReason: orNull(row.status_reason),
    consecutiveFailures: Number(row.consecutive_failures),
    consecutiveSuccesses: Number(row.consecutive_successes),
    failureThreshold: numberOrNull(row.failure_threshold),
    cascadeHeldAt: toIso(row.cascade_held_at),
    firstFailureAt: toIso(row.first_failure_at),
    lastProbeAt: isoOrNull(row.last_probe_at),
    lastSuccessAt: isoOrNull(row.last_success_at),
    lastTransitionAt: isoOrNull(row.last_transition_at),
    probeLatencyMs: numberOrNull(row.probe_latency_ms),
    serverVersion: orNull(row.server_version),
    identityCa: optional(row.identity_ca),
    createdAt: toIso(row.created_at)!,
    updatedAt: toIso(row.updated_at)!,
  };
}

export function toApplication(row: ApplicationRow): Application {
  return {
    id: row.id,
    entityRef: row.entity_ref,
    name: row.name,
    origin: orNull(row.origin),
    spec: parseJson(row.spec, {}),
    placement: parseJson(row.placement, {}),
    removing: !!row.removing,
    version: Number(row.version),
    placementRefused: parseJson(row.placement_refused ?? null, []),
    createdAt: toIso(row.created_at)!,
    updatedAt: toIso(row.updated_at)!,
  };
}

export function toDeployment(row: DeploymentViewRow): Deployment {
  return {
    id: row.id,
    applicationId: row.application_id,
    entityRef: row.entity_ref,
    cluster: row.cluster,
    clusterStatus: orNull(row.cluster_status),
    status: row.status,
    statusReason: orNull(row.status_reason),
    message: orNull(row.message),
    syncStatus: row.sync_status,
    syncDifferences: row.sync_differences
      ? parseJson(row.sync_differences, undefined)
      : undefined,
    image: orNull(row.image),
    revision: Number(row.revision),
    placed:
      row.placed === undefined || row.placed === null ? true : !!row.placed,
    lastAppliedAt: isoOrNull(row.last_applied_at),
    lastSyncedAt: isoOrNull(row.last_synced_at),
    createdAt: toIso(row.created_at)!,
    updatedAt: toIso(row.updated_at)!,
  };
}

/** The columns of a deployment that {@link DeploymentState} has, and its revision's namespace. */
export type DeploymentStateRow = Pick<
  DeploymentRow,
  | 'id'
  | 'application_id'
  | 'cluster'
  | 'status'
  | 'status_reason'
  | 'sync_status'
  | 'revision'
  | 'placed'
> & { namespace: string | null };

/** As `toDeployment` maps the same columns. */
export function toDeploymentState(row: DeploymentStateRow): DeploymentState {
  return {
    id: row.id,
    applicationId: row.application_id,
    cluster: row.cluster,
    status: row.status,
    statusReason: orNull(row.status_reason),
    syncStatus: row.sync_status,
    revision: Number(row.revision),
    placed:
      row.placed === undefined || row.placed === null ? true : !!row.placed,
    namespace: optional(row.namespace),
  };
}

export function toRevision(row: RevisionRow): Revision {
  return {
    deploymentId: row.deployment_id,
    applicationId: row.application_id,
    cluster: row.cluster,
    revision: Number(row.revision),
    image: row.image,
    replicas: numberOrNull(row.replicas),
    env: jsonOrNull(row.env),
    resources: jsonOrNull(row.resources),
    namespace: orNull(row.namespace),
    port: numberOrNull(row.port),
    cause: row.cause,
    createdBy: row.created_by,
    createdAt: toIso(row.created_at)!,
    outcome: orNull(row.outcome),
    outcomeReason: orNull(row.outcome_reason),
    outcomeAt: isoOrNull(row.outcome_at),
    source: jsonOrNull(row.source ?? null),
  };
}

export function toEvent(row: EventRow): FleetEvent {
  return {
    id: String(row.id),
    subjectKind: row.subject_kind,
    subject: row.subject,
    actor: row.actor,
    from: orNull(row.from_status),
    to: row.to_status,
    reason: orNull(row.reason),
    message: orNull(row.message),
    createdAt: toIso(row.created_at)!,
    // The component and cluster it is about: the event store adds them from other tables.
    entityRef: null,
    cluster: null,
  };
}

/** The row of a new event (its id comes from the database). */
export function eventRow(event: NewEvent, now: Date): Omit<EventRow, 'id'> {
  return {
    subject_kind: event.subjectKind,
    subject: event.subject,
    actor: event.actor.slice(0, 255),
    from_status: event.from ?? null,
    to_status: event.to,
    reason: event.reason ?? null,
    message: event.message ?? null,
    created_at: now,
  };
}

/**
 * The rows of `table` counted by the value of `column`, every one of `values` answered (zero when
 * no row has it).
 */
export async function countByValue<V extends string>(
  db: Knex,
  table: string,
  column: string,
  values: readonly V[],
): Promise<Record<V, number>> {
  const counts = Object.fromEntries(values.map(v => [v, 0])) as Record<
    V,
    number
  >;
  const rows: Array<Record<string, V | number | string>> = await db(table)
    .select(column)
    .count({ n: '*' })
    .groupBy(column);
  for (const row of rows) counts[row[column] as V] = Number(row.n);
  return counts;
}
