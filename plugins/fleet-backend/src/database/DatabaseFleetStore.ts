import {
  DatabaseService,
  resolvePackagePath,
} from '@backstage/backend-plugin-api';
import { ConflictError } from '@backstage/errors';
import {
  CLUSTER_STATUSES,
  DEPLOYMENT_STATUSES,
  DeploymentReasons,
  SYNC_STATUSES,
  type Application,
  type ClusterStatus,
  type Deployment,
  type DeploymentStatus,
  type FleetEvent,
} from '@cnp/plugin-fleet-common';
import { randomUUID } from 'node:crypto';
import { Knex } from 'knex';
import {
  ClusterHealthTransaction,
  ClusterOrigin,
  ClusterHealthUpdate,
  ClusterRecord,
  DeploymentFilter,
  DeploymentStatusUpdate,
  DeploymentSyncUpdate,
  DeploymentUpdateCondition,
  DiscoveredCluster,
  FleetStore,
  NewApplication,
  NewCluster,
  NewDeployment,
  NewEvent,
  SummaryCounts,
} from './FleetStore';

const migrationsDir = resolvePackagePath(
  '@cnp/plugin-fleet-backend',
  'migrations',
);

/** Turns what a driver gives back for a timestamp column into ISO 8601. */
export function toIso(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'number') return new Date(value).toISOString();
  const text = String(value);
  if (/^\d+$/.test(text)) return new Date(Number(text)).toISOString();
  // SQLite's CURRENT_TIMESTAMP style: '2026-11-29 10:00:00' (UTC)
  const normalized = /[zZ]|[+-]\d\d:?\d\d$/.test(text)
    ? text
    : `${text.replace(' ', 'T')}Z`;
  return new Date(normalized).toISOString();
}

function parseJson<T>(text: unknown, fallback: T): T {
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

type Row = Record<string, any>;

function toClusterRecord(row: Row): ClusterRecord {
  return {
    name: row.name,
    endpoint: row.endpoint,
    kubeconfigRef: row.kubeconfig_ref,
    context: optional(row.context),
    source: row.source,
    labels: parseJson(row.labels, {}),
    status: row.status,
    statusReason: optional(row.status_reason),
    consecutiveFailures: Number(row.consecutive_failures),
    consecutiveSuccesses: Number(row.consecutive_successes),
    failureThreshold:
      row.failure_threshold === null || row.failure_threshold === undefined
        ? undefined
        : Number(row.failure_threshold),
    cascadeHeldAt: toIso(row.cascade_held_at),
    lastProbeAt: toIso(row.last_probe_at),
    lastSuccessAt: toIso(row.last_success_at),
    lastTransitionAt: toIso(row.last_transition_at),
    probeLatencyMs:
      row.probe_latency_ms === null || row.probe_latency_ms === undefined
        ? undefined
        : Number(row.probe_latency_ms),
    serverVersion: optional(row.server_version),
    createdAt: toIso(row.created_at)!,
    updatedAt: toIso(row.updated_at)!,
  };
}

function toApplication(row: Row): Application {
  return {
    id: row.id,
    entityRef: row.entity_ref,
    name: row.name,
    origin: optional(row.origin),
    spec: parseJson(row.spec, {}),
    placement: parseJson(row.placement, {}),
    createdAt: toIso(row.created_at)!,
    updatedAt: toIso(row.updated_at)!,
  };
}

function toDeployment(row: Row): Deployment {
  return {
    id: row.id,
    applicationId: row.application_id,
    entityRef: row.entity_ref,
    cluster: row.cluster,
    clusterStatus: optional(row.cluster_status),
    status: row.status,
    statusReason: optional(row.status_reason),
    message: optional(row.message),
    syncStatus: row.sync_status,
    syncDifferences: row.sync_differences
      ? parseJson(row.sync_differences, undefined)
      : undefined,
    image: optional(row.image),
    revision: Number(row.revision),
    lastAppliedAt: toIso(row.last_applied_at),
    lastSyncedAt: toIso(row.last_synced_at),
    createdAt: toIso(row.created_at)!,
    updatedAt: toIso(row.updated_at)!,
  };
}

function toEvent(row: Row): FleetEvent {
  return {
    id: String(row.id),
    subjectKind: row.subject_kind,
    subject: row.subject,
    actor: row.actor,
    from: optional(row.from_status),
    to: row.to_status,
    reason: optional(row.reason),
    message: optional(row.message),
    createdAt: toIso(row.created_at)!,
  };
}

function eventRow(event: NewEvent, now: Date) {
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

function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return (
    e?.code === '23505' || // PostgreSQL
    e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    e?.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    e?.code === 'ER_DUP_ENTRY' ||
    /UNIQUE constraint failed|duplicate key/i.test(e?.message ?? '')
  );
}

/**
 * Locks the selected rows until the transaction ends (PostgreSQL), so that a check and the write
 * that depends on it cannot interleave with another writer. SQLite runs one write transaction at
 * a time, so it needs (and supports) no row locks.
 */
function isPostgres(db: Knex | Knex.Transaction): boolean {
  const client = String(db.client.config.client ?? '');
  return client === 'pg' || client.includes('postgres');
}

function forUpdate<T extends Knex.QueryBuilder>(
  query: T,
  db: Knex | Knex.Transaction,
): T {
  return isPostgres(db) ? (query.forUpdate() as T) : query;
}

function isForeignKeyViolation(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return (
    e?.code === '23503' || // PostgreSQL
    e?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY' ||
    /FOREIGN KEY constraint failed|violates foreign key constraint/i.test(
      e?.message ?? '',
    )
  );
}

function zeroCounts<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map(k => [k, 0])) as Record<K, number>;
}

function deploymentsQuery(db: Knex | Knex.Transaction) {
  return db('fleet_deployments as d')
    .join('fleet_applications as a', 'a.id', 'd.application_id')
    .leftJoin('fleet_clusters as c', 'c.name', 'd.cluster')
    .select('d.*', 'a.entity_ref as entity_ref', 'c.status as cluster_status');
}

/** Moves deployments and writes one event per deployment moved, inside `tx`. */
async function moveDeployments(
  tx: Knex.Transaction,
  where: { cluster: string; status: DeploymentStatus; statusReason?: string },
  to: {
    status: DeploymentStatus;
    statusReason: string | null;
    message: string;
  },
  actor: string,
): Promise<number> {
  let query = forUpdate(
    tx('fleet_deployments')
      .where({ cluster: where.cluster, status: where.status })
      .select('id', 'status'),
    tx,
  );
  if (where.statusReason)
    query = query.andWhere('status_reason', where.statusReason);
  const rows: Row[] = await query;
  if (rows.length === 0) return 0;
  const now = new Date();
  const ids = rows.map(r => r.id);
  await tx('fleet_deployments').whereIn('id', ids).update({
    status: to.status,
    status_reason: to.statusReason,
    message: to.message,
    updated_at: now,
  });
  await tx('fleet_events').insert(
    rows.map(r =>
      eventRow(
        {
          subjectKind: 'deployment',
          subject: r.id,
          actor,
          from: r.status,
          to: to.status,
          reason: to.statusReason ?? undefined,
          message: to.message,
        },
        now,
      ),
    ),
  );
  return rows.length;
}

/** The knex implementation of {@link FleetStore}, on SQLite and PostgreSQL. */
export class DatabaseFleetStore implements FleetStore {
  private constructor(
    private readonly db: Knex,
    private readonly preparedStatements = true,
  ) {}

  static async create(options: {
    database: DatabaseService;
    /** Named prepared statements for hot reads on PostgreSQL (default true). */
    preparedStatements?: boolean;
  }): Promise<DatabaseFleetStore> {
    const client = await options.database.getClient();
    if (!options.database.migrations?.skip) {
      await client.migrate.latest({ directory: migrationsDir });
    }
    return new DatabaseFleetStore(client, options.preparedStatements ?? true);
  }

  /** For tests and tools that already hold a migrated knex. */
  static fromKnex(db: Knex): DatabaseFleetStore {
    return new DatabaseFleetStore(db);
  }

  static readonly migrationsDir = migrationsDir;

  async listClusters(filter?: {
    status?: ClusterStatus;
  }): Promise<ClusterRecord[]> {
    const query = this.db('fleet_clusters').orderBy('name');
    if (filter?.status) query.where({ status: filter.status });
    return (await query).map(toClusterRecord);
  }

  async getCluster(name: string): Promise<ClusterRecord | undefined> {
    const row = await this.db('fleet_clusters').where({ name }).first();
    return row ? toClusterRecord(row) : undefined;
  }

  async insertCluster(cluster: NewCluster): Promise<ClusterRecord> {
    const now = new Date();
    try {
      await this.db.transaction(async tx => {
        await tx('fleet_clusters').insert({
          name: cluster.name,
          endpoint: cluster.endpoint,
          kubeconfig_ref: cluster.kubeconfigRef,
          context: cluster.context ?? null,
          source: cluster.source,
          labels: JSON.stringify(cluster.labels ?? {}),
          status: 'UNKNOWN',
          status_reason: 'NEVER_PROBED',
          consecutive_failures: 0,
          consecutive_successes: 0,
          created_at: now,
          updated_at: now,
        });
        await tx('fleet_events').insert(
          eventRow(
            {
              subjectKind: 'cluster',
              subject: cluster.name,
              actor:
                cluster.actor ??
                (cluster.source === 'discovered'
                  ? 'fleet-discovery'
                  : 'fleet-api'),
              to: 'UNKNOWN',
              reason: 'NEVER_PROBED',
              message: `Cluster registered (${cluster.source})`,
            },
            now,
          ),
        );
      });
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new ConflictError(`Cluster '${cluster.name}' already exists`);
      }
      throw error;
    }
    return (await this.getCluster(cluster.name))!;
  }

  async listClusterOrigins(): Promise<ClusterOrigin[]> {
    const rows: Row[] = await this.db('fleet_clusters').select(
      'name',
      'endpoint',
      'kubeconfig_ref',
      'context',
      'source',
    );
    return rows.map(row => ({
      name: row.name,
      endpoint: row.endpoint,
      kubeconfigRef: row.kubeconfig_ref,
      context: optional(row.context),
      source: row.source,
    }));
  }

  async upsertDiscoveredClusters(
    clusters: DiscoveredCluster[],
    origins?: ClusterOrigin[],
  ): Promise<{
    inserted: string[];
    updated: string[];
    failed: Array<{ name: string; message: string }>;
  }> {
    const inserted: string[] = [];
    const updated: string[] = [];
    const failed: Array<{ name: string; message: string }> = [];
    // One read for all: discovery runs every cycle and must stay cheap for a large fleet.
    const known = new Map(
      (origins ?? (await this.listClusterOrigins())).map(o => [o.name, o]),
    );
    for (const cluster of clusters) {
      try {
        await this.upsertDiscoveredCluster(
          cluster,
          known.get(cluster.name),
          inserted,
          updated,
        );
      } catch (error) {
        // One cluster the database refuses must not keep the others from being discovered.
        failed.push({ name: cluster.name, message: (error as Error).message });
      }
    }
    return { inserted, updated, failed };
  }

  private async upsertDiscoveredCluster(
    cluster: DiscoveredCluster,
    existing: ClusterOrigin | undefined,
    inserted: string[],
    updated: string[],
  ): Promise<void> {
    if (!existing) {
      try {
        await this.insertCluster({ ...cluster, source: 'discovered' });
        inserted.push(cluster.name);
      } catch (error) {
        // Another replica inserted it between our read and write: it is known now.
        if ((error as Error).name !== 'ConflictError') throw error;
      }
      return;
    }
    if (existing.source !== 'discovered') return; // a manual registration wins
    if (
      existing.endpoint !== cluster.endpoint ||
      existing.kubeconfigRef !== cluster.kubeconfigRef ||
      (existing.context ?? null) !== (cluster.context ?? null)
    ) {
      await this.db('fleet_clusters')
        // Only while it is still a discovered cluster: a manual registration of the same name
        // since the read above wins.
        .where({ name: cluster.name, source: 'discovered' })
        .update({
          endpoint: cluster.endpoint,
          kubeconfig_ref: cluster.kubeconfigRef,
          context: cluster.context ?? null,
          updated_at: new Date(),
        });
      updated.push(cluster.name);
    }
  }

  async updateClusterSettings(
    name: string,
    settings: {
      labels?: Record<string, string>;
      failureThreshold?: number | null;
    },
    actor?: string,
  ): Promise<ClusterRecord | undefined> {
    const now = new Date();
    const patch: Row = { updated_at: now };
    if (settings.labels !== undefined)
      patch.labels = JSON.stringify(settings.labels);
    if (settings.failureThreshold !== undefined)
      patch.failure_threshold = settings.failureThreshold;
    const updated = await this.db.transaction(async tx => {
      const row = await tx('fleet_clusters').where({ name }).first();
      if (!row) return false;
      await tx('fleet_clusters').where({ name }).update(patch);
      if (actor) {
        const changes: string[] = [];
        if (settings.labels !== undefined) {
          const labels = Object.entries(settings.labels).map(
            ([k, v]) => `${k}=${v}`,
          );
          changes.push(
            `labels set to ${labels.length ? labels.join(',') : '(none)'}`,
          );
        }
        if (settings.failureThreshold !== undefined) {
          changes.push(
            settings.failureThreshold === null
              ? 'failure threshold back to the fleet default'
              : `failure threshold set to ${settings.failureThreshold}`,
          );
        }
        await tx('fleet_events').insert(
          eventRow(
            {
              subjectKind: 'cluster',
              subject: name,
              actor,
              from: row.status,
              to: row.status,
              reason: 'SETTINGS_CHANGED',
              message: changes.join('; '),
            },
            now,
          ),
        );
      }
      return true;
    });
    return updated ? this.getCluster(name) : undefined;
  }

  async deleteCluster(name: string, actor?: string): Promise<boolean> {
    return this.db.transaction(async tx => {
      const row = await forUpdate(
        tx('fleet_clusters').where({ name }),
        tx,
      ).first();
      if (!row) return false;
      // Checked here, in the transaction, and enforced by the foreign key on PostgreSQL: a
      // deployment created meanwhile makes this a 409, never a 500.
      const deployments = await tx('fleet_deployments')
        .where({ cluster: name })
        .count({ n: '*' })
        .first();
      if (Number(deployments?.n ?? 0) > 0) {
        throw new ConflictError(
          `Cluster '${name}' still has ${
            deployments!.n
          } deployment(s); remove them first`,
        );
      }
      try {
        await tx('fleet_clusters').where({ name }).delete();
      } catch (error) {
        if (isForeignKeyViolation(error)) {
          throw new ConflictError(
            `Cluster '${name}' still has deployments; remove them first`,
          );
        }
        throw error;
      }
      await tx('fleet_events').insert(
        eventRow(
          {
            subjectKind: 'cluster',
            subject: name,
            actor: actor ?? 'fleet-api',
            from: row.status,
            to: 'DELETED',
            reason: 'DELETED',
            message: `Cluster removed (${row.source})`,
          },
          new Date(),
        ),
      );
      return true;
    });
  }

  async updateClustersHealth(
    updates: Array<{ name: string; update: ClusterHealthUpdate }>,
  ): Promise<void> {
    if (updates.length === 0) return;
    const pg = isPostgres(this.db);
    // One UPDATE ... SET column = CASE name WHEN ... END per column; a column a cluster does not
    // change keeps its value (ELSE column). PostgreSQL needs the parameters' types spelled out.
    const cast = (type: string) => (pg ? `CAST(? AS ${type})` : '?');
    const columns: Array<{
      column: string;
      type: string;
      value: (u: ClusterHealthUpdate) => unknown;
    }> = [
      { column: 'status', type: 'varchar', value: u => u.status },
      {
        column: 'status_reason',
        type: 'text',
        value: u => u.statusReason ?? null,
      },
      {
        column: 'consecutive_failures',
        type: 'integer',
        value: u => u.consecutiveFailures,
      },
      {
        column: 'consecutive_successes',
        type: 'integer',
        value: u => u.consecutiveSuccesses,
      },
      {
        column: 'last_probe_at',
        type: 'timestamptz',
        value: u => u.lastProbeAt,
      },
      {
        column: 'last_success_at',
        type: 'timestamptz',
        value: u => u.lastSuccessAt,
      },
      {
        column: 'probe_latency_ms',
        type: 'integer',
        value: u => u.probeLatencyMs,
      },
      {
        column: 'server_version',
        type: 'varchar',
        value: u => u.serverVersion?.slice(0, 64),
      },
    ];
    const sets: string[] = [];
    const bindings: unknown[] = [];
    for (const { column, type, value } of columns) {
      const arms = updates.filter(({ update }) => value(update) !== undefined);
      if (arms.length === 0) continue;
      sets.push(
        `${column} = CASE name ${arms
          .map(() => `WHEN ? THEN ${cast(type)}`)
          .join(' ')} ELSE ${column} END`,
      );
      for (const { name, update } of arms) bindings.push(name, value(update));
    }
    sets.push(`updated_at = ${cast('timestamptz')}`);
    bindings.push(new Date());
    bindings.push(...updates.map(u => u.name));
    await this.db.raw(
      `UPDATE fleet_clusters SET ${sets.join(', ')} WHERE name IN (${updates
        .map(() => '?')
        .join(', ')})`,
      bindings as Knex.RawBinding[],
    );
  }

  async inClusterTransaction<T>(
    fn: (tx: ClusterHealthTransaction) => Promise<T>,
  ): Promise<T> {
    return this.db.transaction(async trx => {
      const api: ClusterHealthTransaction = {
        updateClusterHealth: async (
          name: string,
          update: ClusterHealthUpdate,
        ) => {
          const patch: Row = {
            status: update.status,
            status_reason: update.statusReason ?? null,
            consecutive_failures: update.consecutiveFailures,
            consecutive_successes: update.consecutiveSuccesses,
            updated_at: new Date(),
          };
          if (update.lastProbeAt) patch.last_probe_at = update.lastProbeAt;
          if (update.lastSuccessAt)
            patch.last_success_at = update.lastSuccessAt;
          if (update.lastTransitionAt)
            patch.last_transition_at = update.lastTransitionAt;
          if (update.probeLatencyMs !== undefined)
            patch.probe_latency_ms = update.probeLatencyMs;
          if (update.serverVersion !== undefined)
            patch.server_version = update.serverVersion.slice(0, 64);
          await trx('fleet_clusters').where({ name }).update(patch);
        },
        setCascadeHeld: async (name: string, held: boolean) => {
          await trx('fleet_clusters')
            .where({ name })
            .update({ cascade_held_at: held ? new Date() : null });
        },
        degradeDeploymentsOnCluster: (cluster, actor, message) =>
          moveDeployments(
            trx,
            { cluster, status: 'DEPLOYED' },
            {
              status: 'DEGRADED',
              statusReason: DeploymentReasons.CLUSTER_OFFLINE,
              message,
            },
            actor,
          ),
        restoreDeploymentsOnCluster: (cluster, actor, message) =>
          moveDeployments(
            trx,
            {
              cluster,
              status: 'DEGRADED',
              statusReason: DeploymentReasons.CLUSTER_OFFLINE,
            },
            { status: 'DEPLOYED', statusReason: null, message },
            actor,
          ),
        insertEvent: async event => {
          await trx('fleet_events').insert(eventRow(event, new Date()));
        },
      };
      return fn(api);
    });
  }

  async listEvents(filter: {
    subjectKind: FleetEvent['subjectKind'];
    subject: string;
    limit?: number;
  }): Promise<FleetEvent[]> {
    const rows = await this.db('fleet_events')
      .where({ subject_kind: filter.subjectKind, subject: filter.subject })
      .orderBy('id', 'desc')
      .limit(filter.limit ?? 100);
    return rows.map(toEvent);
  }

  async listRecentEvents(limit: number): Promise<FleetEvent[]> {
    const rows = await this.db('fleet_events')
      .orderBy('id', 'desc')
      .limit(limit);
    return rows.map(toEvent);
  }

  async deleteEventsBefore(cutoff: Date, limit: number): Promise<number> {
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new Error(
        `deleteEventsBefore needs a positive integer limit, got ${limit}`,
      );
    }
    // DELETE ... LIMIT is not portable; a bounded subquery is, on SQLite and PostgreSQL alike.
    const oldest = this.db('fleet_events')
      .select('id')
      .where('created_at', '<', cutoff)
      .orderBy('created_at')
      .limit(limit);
    return this.db('fleet_events').whereIn('id', oldest).delete();
  }

  async getState<T>(key: string): Promise<T | undefined> {
    const row = await this.db('fleet_state').where({ key }).first();
    return row ? parseJson<T | undefined>(row.value, undefined) : undefined;
  }

  async setState<T>(key: string, value: T): Promise<void> {
    await this.db('fleet_state')
      .insert({ key, value: JSON.stringify(value), updated_at: new Date() })
      .onConflict('key')
      .merge(['value', 'updated_at']);
  }

  async tryAcquireLease(
    name: string,
    holder: string,
    ttlMs: number,
  ): Promise<boolean> {
    const now = new Date();
    const expiresAt = new Date(now.getTime() + ttlMs);
    // Take over an expired lease (or renew our own) ...
    const taken = await this.db('fleet_locks')
      .where({ name })
      .andWhere(q => q.where('expires_at', '<', now).orWhere({ holder }))
      .update({ holder, expires_at: expiresAt });
    if (taken > 0) return true;
    // ... or create it when nobody holds it.
    try {
      await this.db('fleet_locks').insert({
        name,
        holder,
        expires_at: expiresAt,
      });
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    await this.db('fleet_locks').where({ name, holder }).delete();
  }

  private async countBy<K extends string>(
    table: string,
    column: string,
    keys: readonly K[],
  ): Promise<Record<K, number>> {
    const counts = zeroCounts(keys);
    const rows: Row[] = await this.db(table)
      .select(column)
      .count({ n: '*' })
      .groupBy(column);
    for (const row of rows) counts[row[column] as K] = Number(row.n);
    return counts;
  }

  async getSummaryCounts(): Promise<SummaryCounts> {
    return {
      clusters: await this.countBy(
        'fleet_clusters',
        'status',
        CLUSTER_STATUSES,
      ),
      deploymentsByStatus: await this.countBy(
        'fleet_deployments',
        'status',
        DEPLOYMENT_STATUSES,
      ),
      deploymentsBySyncStatus: await this.countBy(
        'fleet_deployments',
        'sync_status',
        SYNC_STATUSES,
      ),
    };
  }

  async listApplications(filter?: {
    entityRef?: string;
  }): Promise<Application[]> {
    const query = this.db('fleet_applications').orderBy('entity_ref');
    if (filter?.entityRef) query.where({ entity_ref: filter.entityRef });
    return (await query).map(toApplication);
  }

  async getApplication(id: string): Promise<Application | undefined> {
    const row = await this.db('fleet_applications').where({ id }).first();
    return row ? toApplication(row) : undefined;
  }

  async getApplicationByEntityRef(
    entityRef: string,
  ): Promise<Application | undefined> {
    const row = await this.db('fleet_applications')
      .where({ entity_ref: entityRef })
      .first();
    return row ? toApplication(row) : undefined;
  }

  async insertApplication(application: NewApplication): Promise<Application> {
    const now = new Date();
    const id = randomUUID();
    try {
      await this.db('fleet_applications').insert({
        id,
        entity_ref: application.entityRef,
        name: application.name,
        origin: application.origin ?? null,
        spec: JSON.stringify(application.spec),
        placement: JSON.stringify(application.placement ?? {}),
        created_at: now,
        updated_at: now,
      });
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new ConflictError(
          `An application for '${application.entityRef}' already exists`,
        );
      }
      throw error;
    }
    return (await this.getApplication(id))!;
  }

  async updateApplication(
    id: string,
    update: {
      spec?: Application['spec'];
      placement?: Application['placement'];
    },
  ): Promise<Application | undefined> {
    const patch: Row = { updated_at: new Date() };
    if (update.spec !== undefined) patch.spec = JSON.stringify(update.spec);
    if (update.placement !== undefined)
      patch.placement = JSON.stringify(update.placement);
    const count = await this.db('fleet_applications')
      .where({ id })
      .update(patch);
    return count ? this.getApplication(id) : undefined;
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
      this.db.client.dialect === 'postgresql' &&
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

  async getDeployment(id: string): Promise<Deployment | undefined> {
    const row = await deploymentsQuery(this.db).where('d.id', id).first();
    return row ? toDeployment(row) : undefined;
  }

  async getDeploymentFor(
    applicationId: string,
    cluster: string,
  ): Promise<Deployment | undefined> {
    const row = await deploymentsQuery(this.db)
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
        await tx('fleet_deployments').insert({
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
      const current = await forUpdate(
        tx('fleet_deployments').where({ id }),
        tx,
      ).first();
      if (!current) return undefined;
      if (
        condition?.status !== undefined &&
        current.status !== condition.status
      )
        return undefined;
      if (
        condition?.revision !== undefined &&
        Number(current.revision) !== condition.revision
      ) {
        return undefined;
      }
      const now = new Date();
      const patch: Row = { status: update.status, updated_at: now };
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
      await tx('fleet_deployments').where({ id }).update(patch);
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
      const row = await deploymentsQuery(tx).where('d.id', id).first();
      return toDeployment(row);
    });
  }

  async recordSync(
    id: string,
    update: DeploymentSyncUpdate,
    actor: string,
  ): Promise<Deployment | undefined> {
    return this.db.transaction(async tx => {
      const current = await forUpdate(
        tx('fleet_deployments').where({ id }),
        tx,
      ).first();
      if (!current) return undefined;
      const now = new Date();
      const patch: Row = {
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
        await tx('fleet_deployments').where({ id }).update(patch);
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
      const row = await deploymentsQuery(tx).where('d.id', id).first();
      return toDeployment(row);
    });
  }

  async countDeploymentsOnCluster(cluster: string): Promise<number> {
    const row = await this.db('fleet_deployments')
      .where({ cluster })
      .count({ n: '*' })
      .first();
    return Number(row?.n ?? 0);
  }
}
