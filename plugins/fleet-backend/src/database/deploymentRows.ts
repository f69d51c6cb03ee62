import type { Deployment } from '@cnp/plugin-fleet-common';
import type { Knex } from 'knex';
import { forUpdate, isPostgres } from './dialect';
import type { EventLog } from './eventLog';
import {
  toDeployment,
  type DeploymentRow,
  type DeploymentViewRow,
} from './tables';
import type {
  DeploymentFilter,
  DeploymentStatusUpdate,
  DeploymentUpdateCondition,
  NewEvent,
} from './types';

/*
 * The reads and writes of one deployment row that the deployment store's methods share: the
 * joined read, the row lock, the status patch and its condition, the revision's outcome.
 */

/** The columns of `fleet_deployments` other than its four timestamps. */
export const DEPLOYMENT_COLUMNS = [
  'id',
  'application_id',
  'cluster',
  'status',
  'status_reason',
  'message',
  'sync_status',
  'sync_differences',
  'image',
  'revision',
  'placed',
] as const;
export const TIMESTAMP_COLUMNS = [
  'last_applied_at',
  'last_synced_at',
  'created_at',
  'updated_at',
] as const;

/**
 * Deployments with their application's entity ref and their cluster's status. On PostgreSQL
 * the timestamps come as the ISO 8601 text the API answers with (UTC, milliseconds, as
 * `Date.toISOString` writes it), formatted by the database: the driver would otherwise parse
 * each one into a `Date` that `toIso` formats back, four per row, most of the CPU an entity
 * card's read spends on its rows.
 */
export function deploymentsQuery(db: Knex | Knex.Transaction) {
  const query = db<DeploymentViewRow>('fleet_deployments as d')
    .join('fleet_applications as a', 'a.id', 'd.application_id')
    .leftJoin('fleet_clusters as c', 'c.name', 'd.cluster');
  if (!isPostgres(db)) {
    return query.select(
      'd.*',
      'a.entity_ref as entity_ref',
      'c.status as cluster_status',
    );
  }
  return query.select(
    ...DEPLOYMENT_COLUMNS.map(column => `d.${column}`),
    ...TIMESTAMP_COLUMNS.map(column =>
      db.raw(
        `to_char(?? AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as ??`,
        [`d.${column}`, column],
      ),
    ),
    'a.entity_ref as entity_ref',
    'c.status as cluster_status',
  );
}

export async function readDeployment(
  db: Knex | Knex.Transaction,
  id: string,
): Promise<Deployment | undefined> {
  const row: DeploymentViewRow | undefined = await deploymentsQuery(db)
    .where('d.id', id)
    .first();
  return row ? toDeployment(row) : undefined;
}

/** Reads a deployment's row and locks it until `tx` ends: the check and the write stay one. */
export function lockDeployment(
  tx: Knex.Transaction,
  id: string,
): Promise<DeploymentRow | undefined> {
  return forUpdate(
    tx<DeploymentRow>('fleet_deployments').where({ id }),
    tx,
  ).first();
}

/** The outcome of the deployment's current revision, when its rollout ends; set once. */
export async function recordOutcome(
  tx: Knex.Transaction,
  current: DeploymentRow,
  outcome: 'DEPLOYED' | 'FAILED',
  reason: string | null,
  now: Date,
): Promise<void> {
  await tx('fleet_revisions')
    .where({ deployment_id: current.id, revision: current.revision })
    .whereNull('outcome')
    .update({
      outcome,
      outcome_reason: outcome === 'FAILED' ? reason : null,
      outcome_at: now,
    });
}

/** The row a status update writes, from the row it changes. */
export function statusPatch(
  update: DeploymentStatusUpdate,
  now: Date,
): Partial<DeploymentRow> {
  const patch: Partial<DeploymentRow> = {
    status: update.status,
    updated_at: now,
  };
  if (update.statusReason !== undefined)
    patch.status_reason = update.statusReason;
  if (update.message !== undefined) patch.message = update.message;
  if (update.syncStatus !== undefined) {
    patch.sync_status = update.syncStatus;
    if (update.syncStatus !== 'OUT_OF_SYNC') patch.sync_differences = null;
  }
  if (update.image !== undefined) patch.image = update.image;
  if (update.revision !== undefined) patch.revision = update.revision;
  if (update.lastAppliedAt !== undefined)
    patch.last_applied_at = update.lastAppliedAt;
  if (update.lastSyncedAt !== undefined)
    patch.last_synced_at = update.lastSyncedAt;
  return patch;
}

export function matches(
  current: DeploymentRow,
  condition: DeploymentUpdateCondition | undefined,
): boolean {
  if (condition?.status !== undefined && current.status !== condition.status)
    return false;
  return (
    condition?.revision === undefined ||
    Number(current.revision) === condition.revision
  );
}

/** Writes one event of a deployment, inside `tx`. */
export async function insertDeploymentEvent(
  log: EventLog,
  tx: Knex.Transaction,
  id: string,
  event: Omit<NewEvent, 'subjectKind' | 'subject'>,
  now: Date,
): Promise<void> {
  await log.write(
    tx,
    [{ subjectKind: 'deployment', subject: id, ...event }],
    now,
  );
}

/** Narrows a deployments query to the filter's entity, cluster, application and statuses. */
export function whereFilter(
  query: Knex.QueryBuilder,
  filter: Omit<DeploymentFilter, 'ids' | 'page'>,
): void {
  if (filter.entityRef) query.where('a.entity_ref', filter.entityRef);
  if (filter.cluster) query.where('d.cluster', filter.cluster);
  if (filter.applicationId)
    query.where('d.application_id', filter.applicationId);
  if (filter.statuses) query.whereIn('d.status', filter.statuses);
}

/** Ids bound per statement when reading deployments by id. */
const ID_CHUNK = 500;

/** The deployments of the given ids the filter selects, by entity ref and cluster. */
export async function deploymentsByIds(
  db: Knex,
  given: string[],
  filter: Omit<DeploymentFilter, 'ids' | 'page'>,
): Promise<Deployment[]> {
  const ids = [...new Set(given)];
  // A bounded number of bound parameters per statement (SQLite's limit is the lowest).
  const found: Deployment[] = [];
  for (let i = 0; i < ids.length; i += ID_CHUNK) {
    const query = deploymentsQuery(db).whereIn(
      'd.id',
      ids.slice(i, i + ID_CHUNK),
    );
    whereFilter(query, filter);
    for (const row of await query) found.push(toDeployment(row));
  }
  const byKey = (d: Deployment) => `${d.entityRef}\u0000${d.cluster}`;
  return found.sort((a, b) => (byKey(a) < byKey(b) ? -1 : 1));
}
