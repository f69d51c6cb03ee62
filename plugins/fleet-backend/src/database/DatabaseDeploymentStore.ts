import { ConflictError } from '@backstage/errors';
import {
  DEPLOYMENT_STATUSES,
  SYNC_STATUSES,
  type Deployment,
  type DeploymentStatus,
  type SyncStatus,
} from '@cnp/plugin-fleet-common';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import {
  forUpdate,
  isForeignKeyViolation,
  isPostgres,
  isUniqueViolation,
} from './dialect';
import {
  eventRow,
  toDeployment,
  zeroCounts,
  type DeploymentRow,
  type DeploymentViewRow,
} from './tables';
import type {
  DeploymentFilter,
  DeploymentStatusUpdate,
  DeploymentStore,
  DeploymentSyncUpdate,
  DeploymentUpdateCondition,
  NewDeployment,
} from './types';

/** Deployments with their application's entity ref and their cluster's status. */
function deploymentsQuery(db: Knex | Knex.Transaction) {
  return db<DeploymentViewRow>('fleet_deployments as d')
    .join('fleet_applications as a', 'a.id', 'd.application_id')
    .leftJoin('fleet_clusters as c', 'c.name', 'd.cluster')
    .select('d.*', 'a.entity_ref as entity_ref', 'c.status as cluster_status');
}

async function readDeployment(
  db: Knex | Knex.Transaction,
  id: string,
): Promise<Deployment | undefined> {
  const row: DeploymentViewRow | undefined = await deploymentsQuery(db)
    .where('d.id', id)
    .first();
  return row ? toDeployment(row) : undefined;
}

/** Reads a deployment's row and locks it until `tx` ends: the check and the write stay one. */
function lockDeployment(
  tx: Knex.Transaction,
  id: string,
): Promise<DeploymentRow | undefined> {
  return forUpdate(
    tx<DeploymentRow>('fleet_deployments').where({ id }),
    tx,
  ).first();
}

/** The row a status update writes, from the row it changes. */
function statusPatch(
  current: DeploymentRow,
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
  if (update.bumpRevision) patch.revision = Number(current.revision) + 1;
  if (update.lastAppliedAt !== undefined)
    patch.last_applied_at = update.lastAppliedAt;
  if (update.lastSyncedAt !== undefined)
    patch.last_synced_at = update.lastSyncedAt;
  return patch;
}

function matches(
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

/** The knex implementation of {@link DeploymentStore}, on SQLite and PostgreSQL. */
export class DatabaseDeploymentStore implements DeploymentStore {
  private constructor(
    private readonly db: Knex,
    private readonly preparedStatements: boolean,
  ) {}

  static create(
    db: Knex,
    options: {
      /** Named prepared statements for hot reads on PostgreSQL (default true). */
      preparedStatements?: boolean;
    } = {},
  ): DatabaseDeploymentStore {
    return new DatabaseDeploymentStore(db, options.preparedStatements ?? true);
  }

  async listDeployments(filter?: DeploymentFilter): Promise<Deployment[]> {
    const query = deploymentsQuery(this.db).orderBy([
      { column: 'a.entity_ref' },
      { column: 'd.cluster' },
    ]);
    if (filter?.entityRef) query.where('a.entity_ref', filter.entityRef);
    if (filter?.cluster) query.where('d.cluster', filter.cluster);
    if (filter?.applicationId)
      query.where('d.application_id', filter.applicationId);
    if (
      this.preparedStatements &&
      isPostgres(this.db) &&
      filter?.entityRef &&
      !filter.cluster &&
      !filter.applicationId
    ) {
      // Every entity card polls this one: a named prepared statement is parsed (and, after a few
      // runs, planned) once per connection instead of at every poll. Its text never changes.
      query.options({ name: 'fleet_deployments_of_entity' });
    }
    return (await query).map(toDeployment);
  }

  getDeployment(id: string): Promise<Deployment | undefined> {
    return readDeployment(this.db, id);
  }

  async getDeploymentFor(
    applicationId: string,
    cluster: string,
  ): Promise<Deployment | undefined> {
    const row: DeploymentViewRow | undefined = await deploymentsQuery(this.db)
      .where('d.application_id', applicationId)
      .andWhere('d.cluster', cluster)
      .first();
    return row ? toDeployment(row) : undefined;
  }

  async insertDeployment(
    deployment: NewDeployment,
    actor: string,
  ): Promise<Deployment> {
    const now = new Date();
    const id = randomUUID();
    try {
      await this.db.transaction(async tx => {
        await tx<DeploymentRow>('fleet_deployments').insert({
          id,
          application_id: deployment.applicationId,
          cluster: deployment.cluster,
          status: deployment.status,
          status_reason: deployment.statusReason ?? null,
          message: deployment.message ?? null,
          sync_status: 'UNKNOWN',
          image: deployment.image ?? null,
          revision: deployment.revision ?? 0,
          created_at: now,
          updated_at: now,
        });
        await tx('fleet_events').insert(
          eventRow(
            {
              subjectKind: 'deployment',
              subject: id,
              actor,
              to: deployment.status,
              reason: deployment.statusReason,
              message: deployment.message,
            },
            now,
          ),
        );
      });
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new ConflictError(
          `Application '${deployment.applicationId}' already has a deployment on '${deployment.cluster}'`,
        );
      }
      if (isForeignKeyViolation(error)) {
        throw new ConflictError(
          `Cluster '${deployment.cluster}' was removed meanwhile`,
        );
      }
      throw error;
    }
    return (await this.getDeployment(id))!;
  }

  async updateDeploymentStatus(
    id: string,
    update: DeploymentStatusUpdate,
    actor: string,
    condition?: DeploymentUpdateCondition,
  ): Promise<Deployment | undefined> {
    return this.db.transaction(async tx => {
      const current = await lockDeployment(tx, id);
      if (!current || !matches(current, condition)) return undefined;
      const now = new Date();
      await tx<DeploymentRow>('fleet_deployments')
        .where({ id })
        .update(statusPatch(current, update, now));
      const reason =
        update.statusReason === undefined
          ? current.status_reason
          : update.statusReason;
      if (
        current.status !== update.status ||
        current.status_reason !== reason
      ) {
        await tx('fleet_events').insert(
          eventRow(
            {
              subjectKind: 'deployment',
              subject: id,
              actor,
              from: current.status,
              to: update.status,
              reason: reason ?? undefined,
              message: update.message ?? undefined,
            },
            now,
          ),
        );
      }
      return readDeployment(tx, id);
    });
  }

  async recordSync(
    id: string,
    update: DeploymentSyncUpdate,
    actor: string,
  ): Promise<Deployment | undefined> {
    return this.db.transaction(async tx => {
      const current = await lockDeployment(tx, id);
      if (!current) return undefined;
      const now = new Date();
      const patch: Partial<DeploymentRow> = {
        sync_status: update.syncStatus,
        sync_differences:
          update.syncStatus === 'OUT_OF_SYNC' && update.syncDifferences?.length
            ? JSON.stringify(update.syncDifferences)
            : null,
        updated_at: now,
      };
      if (update.lastSyncedAt) patch.last_synced_at = update.lastSyncedAt;
      if (update.lastAppliedAt) patch.last_applied_at = update.lastAppliedAt;
      const changed = current.sync_status !== update.syncStatus;
      const differencesChanged =
        (current.sync_differences ?? null) !== patch.sync_differences;
      if (
        changed ||
        differencesChanged ||
        update.lastSyncedAt ||
        update.lastAppliedAt
      ) {
        await tx<DeploymentRow>('fleet_deployments')
          .where({ id })
          .update(patch);
      }
      if (changed || update.forceEvent) {
        await tx('fleet_events').insert(
          eventRow(
            {
              subjectKind: 'deployment',
              subject: id,
              actor,
              from: current.sync_status,
              to: update.syncStatus,
              reason: update.reason,
              message: update.message,
            },
            now,
          ),
        );
      }
      return readDeployment(tx, id);
    });
  }

  async countDeploymentsOnCluster(cluster: string): Promise<number> {
    const row = await this.db('fleet_deployments')
      .where({ cluster })
      .count({ n: '*' })
      .first();
    return Number(row?.n ?? 0);
  }

  async countDeploymentsByStatus(): Promise<{
    byStatus: Record<DeploymentStatus, number>;
    bySyncStatus: Record<SyncStatus, number>;
  }> {
    const byStatus = zeroCounts(DEPLOYMENT_STATUSES);
    const bySyncStatus = zeroCounts(SYNC_STATUSES);
    const statusRows: Array<{ status: DeploymentStatus; n: number | string }> =
      await this.db('fleet_deployments')
        .select('status')
        .count({ n: '*' })
        .groupBy('status');
    for (const row of statusRows) byStatus[row.status] = Number(row.n);
    const syncRows: Array<{ sync_status: SyncStatus; n: number | string }> =
      await this.db('fleet_deployments')
        .select('sync_status')
        .count({ n: '*' })
        .groupBy('sync_status');
    for (const row of syncRows) bySyncStatus[row.sync_status] = Number(row.n);
    return { byStatus, bySyncStatus };
  }
}
