import { ConflictError } from '@backstage/errors';
import {
  DEPLOYMENT_STATUSES,
  DeploymentReasons,
  SYNC_STATUSES,
  type Deployment,
  type DeploymentStatus,
  type SyncStatus,
} from '@cnp/plugin-fleet-common';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import {
  afterKey,
  forUpdate,
  isForeignKeyViolation,
  isPostgres,
  isUniqueViolation,
} from './dialect';
import { countDeploymentsPerCluster } from './deploymentCounts';
import { revisionRow } from './DatabaseRevisionStore';
import { EventLog } from './eventLog';
import {
  deploymentsByIds,
  deploymentsQuery,
  insertDeploymentEvent,
  lockDeployment,
  matches,
  readDeployment,
  recordOutcome,
  statusPatch,
  whereFilter,
} from './deploymentRows';
import {
  toDeployment,
  toDeploymentState,
  countByValue,
  type ClusterRow,
  type DeploymentRow,
  type DeploymentViewRow,
} from './tables';
import type {
  DeploymentFilter,
  DeploymentState,
  DeploymentStatusUpdate,
  DeploymentStore,
  DeploymentSyncUpdate,
  DeleteDeploymentRequest,
  DeploymentUpdateCondition,
  NewDeployment,
  NewEvent,
  NewRevision,
} from './types';

/** The knex implementation of {@link DeploymentStore}, on SQLite and PostgreSQL. */
export class DatabaseDeploymentStore implements DeploymentStore {
  private constructor(
    private readonly db: Knex,
    private readonly preparedStatements: boolean,
    private readonly log: EventLog,
  ) {}

  static create(
    db: Knex,
    options: {
      /** Named prepared statements for hot reads on PostgreSQL (default true). */
      preparedStatements?: boolean;
      eventLog?: EventLog;
    } = {},
  ): DatabaseDeploymentStore {
    return new DatabaseDeploymentStore(
      db,
      options.preparedStatements ?? true,
      options.eventLog ?? EventLog.create(),
    );
  }

  /** Writes one event of deployment `id` in `tx`. */
  private event(
    tx: Knex.Transaction,
    id: string,
    now: Date,
    event: Omit<NewEvent, 'subjectKind' | 'subject'>,
  ): Promise<void> {
    return insertDeploymentEvent(this.log, tx, id, event, now);
  }

  async listDeployments(filter?: DeploymentFilter): Promise<Deployment[]> {
    if (filter?.ids) {
      const { ids, ...rest } = filter;
      if (rest.page) throw new Error('listDeployments: ids and page together');
      return deploymentsByIds(this.db, ids, rest);
    }
    const query = deploymentsQuery(this.db).orderBy([
      { column: 'a.entity_ref' },
      { column: 'd.cluster' },
    ]);
    whereFilter(query, filter ?? {});
    if (filter?.page) {
      // (entity ref, cluster) is unique: an entity has one application, which has one
      // deployment per cluster.
      afterKey(query, ['a.entity_ref', 'd.cluster'], filter.page.after).limit(
        filter.page.limit,
      );
    }
    if (
      this.preparedStatements &&
      isPostgres(this.db) &&
      filter?.entityRef &&
      !filter.cluster &&
      !filter.applicationId &&
      !filter.page?.after
    ) {
      // Every entity card polls this one: a named prepared statement is parsed (and, after a few
      // runs, planned) once per connection instead of at every poll. Its text never changes
      // (one name per text: the API's first page adds a limit, bound as a parameter).
      query.options({
        name: filter.page
          ? 'fleet_deployments_of_entity_page'
          : 'fleet_deployments_of_entity',
      });
    }
    return (await query).map(toDeployment);
  }

  async listDeploymentStates(
    filter: { applicationId?: string } = {},
  ): Promise<DeploymentState[]> {
    // The same rows and order as listDeployments, without the columns a run does not use: at
    // 10,000 deployments a minute, parsing their four timestamps was most of an idle run's CPU.
    const query = this.db('fleet_deployments as d')
      .join('fleet_applications as a', 'a.id', 'd.application_id')
      .leftJoin('fleet_revisions as r', join =>
        join
          .on('r.deployment_id', '=', 'd.id')
          .andOn('r.revision', '=', 'd.revision'),
      )
      .select(
        'd.id',
        'd.application_id',
        'd.cluster',
        'd.status',
        'd.status_reason',
        'd.sync_status',
        'd.revision',
        'd.placed',
        'r.namespace',
      )
      .orderBy([{ column: 'a.entity_ref' }, { column: 'd.cluster' }]);
    if (filter.applicationId)
      query.where('d.application_id', filter.applicationId);
    return (await query).map(toDeploymentState);
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
          image: deployment.firstRevision?.image ?? deployment.image ?? null,
          revision: deployment.firstRevision ? 1 : 0,
          created_at: now,
          updated_at: now,
        });
        if (deployment.firstRevision) {
          await tx('fleet_revisions').insert(
            revisionRow(
              { id, ...deployment },
              1,
              deployment.firstRevision,
              now,
            ),
          );
        }
        await this.event(tx, id, now, {
          actor,
          to: deployment.status,
          reason: deployment.statusReason,
          message: deployment.message,
        });
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
    return this.withLocked(id, async (tx, current) => {
      if (!current || !matches(current, condition)) return undefined;
      return this.writeStatus(tx, current, update, actor);
    });
  }

  async completeRollout(
    id: string,
    revision: number,
    deployed: DeploymentStatusUpdate,
    actor: string,
  ): Promise<Deployment | undefined> {
    return this.db.transaction(async tx => {
      const row: Pick<DeploymentRow, 'cluster'> | undefined =
        await tx<DeploymentRow>('fleet_deployments')
          .where({ id })
          .first('cluster');
      if (!row) return undefined;
      // The cluster's row before the deployment's, in the order the health cascade takes them
      // (its cluster update, then the deployments it moves): the cascade either ran before and
      // its OFFLINE is read here, or waits for this write and then degrades what it wrote.
      const cluster: Pick<ClusterRow, 'status'> | undefined = await forUpdate(
        tx<ClusterRow>('fleet_clusters').where({ name: row.cluster }),
        tx,
      ).first('status');
      const current = await lockDeployment(tx, id);
      if (!current || !matches(current, { status: 'PROGRESSING', revision }))
        return undefined;
      const update: DeploymentStatusUpdate =
        cluster?.status === 'OFFLINE'
          ? {
              status: 'DEGRADED',
              statusReason: DeploymentReasons.CLUSTER_OFFLINE,
              message: `Rollout complete, but cluster '${current.cluster}' is OFFLINE`,
            }
          : deployed;
      return this.writeStatus(tx, current, update, actor);
    });
  }

  async noteRolloutProgress(
    id: string,
    revision: number,
    message: string,
  ): Promise<Deployment | undefined> {
    const changed = await this.db<DeploymentRow>('fleet_deployments')
      .where({ id, revision, status: 'PROGRESSING' })
      .andWhere(q => q.whereNull('message').orWhereNot('message', message))
      .update({ message, updated_at: new Date() });
    return changed > 0 ? this.getDeployment(id) : undefined;
  }

  /** Writes a status change of the locked row `current`, its revision's outcome and its event. */
  private async writeStatus(
    tx: Knex.Transaction,
    current: DeploymentRow,
    update: DeploymentStatusUpdate,
    actor: string,
  ): Promise<Deployment | undefined> {
    const id = current.id;
    const now = new Date();
    await tx<DeploymentRow>('fleet_deployments')
      .where({ id })
      .update(statusPatch(update, now));
    const reason =
      update.statusReason === undefined
        ? current.status_reason
        : update.statusReason;
    if (
      current.status !== update.status &&
      (update.status === 'DEPLOYED' || update.status === 'FAILED')
    ) {
      await recordOutcome(tx, current, update.status, reason, now);
    }
    if (current.status !== update.status || current.status_reason !== reason) {
      await this.event(tx, id, now, {
        actor,
        from: current.status,
        to: update.status,
        reason: reason ?? undefined,
        message: update.message ?? undefined,
      });
    }
    return readDeployment(tx, id);
  }

  async recordSync(
    id: string,
    update: DeploymentSyncUpdate,
    actor: string,
  ): Promise<Deployment | undefined> {
    return this.withLocked(id, async (tx, current) => {
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
        await this.event(tx, id, now, {
          actor,
          from: current.sync_status,
          to: update.syncStatus,
          reason: update.reason,
          message: update.message,
        });
      }
      return readDeployment(tx, id);
    });
  }

  async startRevision(
    id: string,
    revision: NewRevision,
    message: string,
    eventReason?: string,
  ): Promise<Deployment | undefined> {
    return this.withLocked(id, async (tx, current) => {
      if (!current) return undefined;
      if (current.status === 'REMOVING') {
        throw new ConflictError(
          `Deployment '${id}' is being undeployed: deploy again once it is gone`,
        );
      }
      // Numbered after every revision recorded, even one the deployment row did not keep.
      const highest = await tx('fleet_revisions')
        .where({ deployment_id: id })
        .max({ n: 'revision' })
        .first();
      const next =
        Math.max(Number(current.revision), Number(highest?.n ?? 0)) + 1;
      const now = new Date();
      await tx('fleet_revisions').insert(
        revisionRow(
          {
            id,
            applicationId: current.application_id,
            cluster: current.cluster,
          },
          next,
          revision,
          now,
        ),
      );
      await tx<DeploymentRow>('fleet_deployments').where({ id }).update({
        status: 'PENDING',
        status_reason: null,
        message,
        image: revision.image,
        revision: next,
        updated_at: now,
      });
      await this.event(tx, id, now, {
        actor: revision.createdBy,
        from: current.status,
        to: 'PENDING',
        reason:
          eventReason ??
          `REVISION_${revision.cause.toUpperCase().replace('-', '_')}`,
        message: `Revision ${next} (${revision.cause}): ${revision.image}. ${message}`,
      });
      return readDeployment(tx, id);
    });
  }

  async deleteDeployment(request: DeleteDeploymentRequest): Promise<boolean> {
    const { id, actor, reason, message, condition } = request;
    return this.withLocked(id, async (tx, current) => {
      if (!current || !matches(current, condition)) return false;
      // The event first: its component is read from the row, inside this transaction.
      await this.event(tx, id, new Date(), {
        actor,
        from: current.status,
        to: 'REMOVED',
        reason,
        message,
      });
      await tx('fleet_deployments').where({ id }).delete();
      return true;
    });
  }

  async setPlaced(
    id: string,
    placed: boolean,
    actor: string,
  ): Promise<Deployment | undefined> {
    return this.withLocked(id, async (tx, current) => {
      if (!current) return undefined;
      if (!!current.placed !== placed) {
        const now = new Date();
        await tx<DeploymentRow>('fleet_deployments')
          .where({ id })
          .update({ placed, updated_at: now });
        await this.event(tx, id, now, {
          actor,
          from: current.status,
          to: current.status,
          reason: placed ? 'PLACED' : 'NO_LONGER_PLACED',
          message: placed
            ? 'The placement selects this cluster again'
            : 'The placement no longer selects this cluster: kept, never healed again',
        });
      }
      return readDeployment(tx, id);
    });
  }

  /** Runs `fn` in one transaction with the deployment's row read and locked (undefined: gone). */
  private withLocked<T>(
    id: string,
    fn: (
      tx: Knex.Transaction,
      current: DeploymentRow | undefined,
    ) => Promise<T>,
  ): Promise<T> {
    return this.db.transaction(async tx =>
      fn(tx, await lockDeployment(tx, id)),
    );
  }

  async countDeploymentsByStatus(): Promise<{
    byStatus: Record<DeploymentStatus, number>;
    bySyncStatus: Record<SyncStatus, number>;
  }> {
    return {
      byStatus: await countByValue(
        this.db,
        'fleet_deployments',
        'status',
        DEPLOYMENT_STATUSES,
      ),
      bySyncStatus: await countByValue(
        this.db,
        'fleet_deployments',
        'sync_status',
        SYNC_STATUSES,
      ),
    };
  }

  countDeploymentsByCluster(): Promise<
    Array<{ cluster: string; byStatus: Record<DeploymentStatus, number> }>
  > {
    return countDeploymentsPerCluster(this.db);
  }
}
