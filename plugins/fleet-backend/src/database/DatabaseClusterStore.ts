import { ConflictError } from '@backstage/errors';
import { CLUSTER_STATUSES, type ClusterStatus } from '@cnp/plugin-fleet-common';
import type { Knex } from 'knex';
import {
  clusterHealthTransaction,
  updateClustersHealth,
} from './clusterHealthWrites';
import { EventLoggingStore, type EventLogOptions } from './eventLog';
import { fenced } from './leaseFence';
import {
  afterKey,
  forUpdate,
  isForeignKeyViolation,
  isUniqueViolation,
  lockForTransaction,
} from './dialect';
import { countByValue, toClusterRecord, type ClusterRow } from './tables';
import type {
  ClusterHealthTransaction,
  ClusterHealthUpdate,
  ClusterOrigin,
  ClusterRecord,
  ClusterSettings,
  ClusterStore,
  DiscoveredCluster,
  DiscoveryUpsertResult,
  LeaseFence,
  NewCluster,
  PageRequest,
} from './types';
import {
  describeIdentity,
  normalizeServer,
  sameIdentity,
  type ClusterIdentity,
} from './clusterIdentity';

/** Says what a settings change did, for its event: `labels set to env=prod; ...`. */
function describeSettings(settings: ClusterSettings): string {
  const changes: string[] = [];
  if (settings.labels !== undefined) {
    const labels = Object.entries(settings.labels).map(([k, v]) => `${k}=${v}`);
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
  return changes.join('; ');
}

/** The most names one `listClusters` statement binds. */
const NAMES_PER_QUERY = 500;

function chunk<T>(items: T[], size: number): T[][] {
  const parts: T[][] = [];
  for (let i = 0; i < items.length; i += size)
    parts.push(items.slice(i, i + size));
  return parts;
}

/** The knex implementation of {@link ClusterStore}, on SQLite and PostgreSQL. */
export class DatabaseClusterStore
  extends EventLoggingStore
  implements ClusterStore
{
  static create(db: Knex, options: EventLogOptions = {}): DatabaseClusterStore {
    return new DatabaseClusterStore(db, options);
  }

  async listClusters(filter?: {
    status?: ClusterStatus;
    names?: readonly string[];
    page?: PageRequest;
  }): Promise<ClusterRecord[]> {
    const names = filter?.names && [...new Set(filter.names)];
    if (names && names.length > NAMES_PER_QUERY && !filter?.page) {
      // Each name is a bound parameter, and SQLite binds a limited number per statement.
      const parts = await Promise.all(
        chunk(names, NAMES_PER_QUERY).map(part =>
          this.listClusters({ ...filter, names: part }),
        ),
      );
      return parts.flat().sort((a, b) => (a.name < b.name ? -1 : 1));
    }
    if (names?.length === 0) return [];
    const query = this.db<ClusterRow>('fleet_clusters').orderBy('name');
    if (filter?.status) query.where({ status: filter.status });
    if (names) query.whereIn('name', names);
    if (filter?.page) {
      afterKey(query, ['name'], filter.page.after).limit(filter.page.limit);
    }
    return (await query).map(toClusterRecord);
  }

  async getCluster(name: string): Promise<ClusterRecord | undefined> {
    const row = await this.db<ClusterRow>('fleet_clusters')
      .where({ name })
      .first();
    return row ? toClusterRecord(row) : undefined;
  }

  /** The stored cluster that is this API server, if any (another name than `except`). */
  private async identityHolder(
    db: Knex,
    identity: ClusterIdentity,
    except?: string,
  ): Promise<string | undefined> {
    const rows: Array<Pick<ClusterRow, 'name' | 'identity_ca'>> =
      await db<ClusterRow>('fleet_clusters')
        .where({ identity_server: identity.server })
        .select('name', 'identity_ca')
        .orderBy('name');
    return rows.find(
      row =>
        row.name !== except &&
        sameIdentity(identity, {
          server: identity.server,
          ca: row.identity_ca ?? undefined,
        }),
    )?.name;
  }

  async insertCluster(
    cluster: NewCluster,
    options?: { maxManual?: number },
  ): Promise<ClusterRecord> {
    const now = new Date();
    const identity: ClusterIdentity = {
      server: normalizeServer(cluster.endpoint),
      ca: cluster.identityCa,
    };
    const identityTaken = (holder: string) =>
      new ConflictError(
        `API server ${describeIdentity(
          identity,
        )} is already registered as cluster '${holder}'`,
      );
    const maxManual =
      cluster.source === 'manual' ? options?.maxManual : undefined;
    try {
      await this.db.transaction(async tx => {
        if (maxManual !== undefined) {
          // Two registrations counting at once would both see room for one more.
          await lockForTransaction(tx, 'fleet_manual_clusters');
          const manual = await tx('fleet_clusters')
            .where({ source: 'manual' })
            .count({ n: '*' })
            .first();
          if (Number(manual?.n ?? 0) >= maxManual) {
            throw new ConflictError(
              `Fleet has ${maxManual} manually registered clusters, the most fleet.clusters.maxManual allows; remove one first or raise the limit`,
            );
          }
        }
        if (
          await tx<ClusterRow>('fleet_clusters')
            .where({ name: cluster.name })
            .first('name')
        )
          throw new ConflictError(`Cluster '${cluster.name}' already exists`);
        // A name is a label: one API server is one cluster, whatever it is called.
        const holder = await this.identityHolder(tx, identity);
        if (holder !== undefined) throw identityTaken(holder);
        await tx<ClusterRow>('fleet_clusters').insert({
          name: cluster.name,
          endpoint: cluster.endpoint,
          kubeconfig_ref: cluster.kubeconfigRef,
          context: cluster.context ?? null,
          source: cluster.source,
          identity_server: identity.server,
          identity_ca: cluster.identityCa ?? null,
          labels: JSON.stringify(cluster.labels ?? {}),
          status: 'UNKNOWN',
          status_reason: 'NEVER_PROBED',
          consecutive_failures: 0,
          consecutive_successes: 0,
          created_at: now,
          updated_at: now,
        });
        await this.log.write(
          tx,
          [
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
          ],
          now,
        );
      });
    } catch (error) {
      if (isUniqueViolation(error)) {
        // Inserted meanwhile (another replica or request): the name, or the identity.
        if (await this.getCluster(cluster.name))
          throw new ConflictError(`Cluster '${cluster.name}' already exists`);
        const holder = await this.identityHolder(this.db, identity);
        throw holder !== undefined
          ? identityTaken(holder)
          : new ConflictError(`Cluster '${cluster.name}' already exists`);
      }
      throw error;
    }
    return (await this.getCluster(cluster.name))!;
  }

  async listClusterOrigins(): Promise<ClusterOrigin[]> {
    const rows = await this.db<ClusterRow>('fleet_clusters').select(
      'name',
      'endpoint',
      'kubeconfig_ref',
      'context',
      'source',
      'identity_server',
      'identity_ca',
    );
    return rows.map(row => ({
      name: row.name,
      endpoint: row.endpoint,
      kubeconfigRef: row.kubeconfig_ref,
      context: row.context ?? undefined,
      source: row.source,
      // Normalized again: a row that kept an earlier spelling is compared as its server.
      identityServer: normalizeServer(row.identity_server ?? row.endpoint),
      identityCa: row.identity_ca ?? undefined,
    }));
  }

  async upsertDiscoveredClusters(
    clusters: DiscoveredCluster[],
    origins?: ClusterOrigin[],
  ): Promise<DiscoveryUpsertResult> {
    const result: DiscoveryUpsertResult = {
      inserted: [],
      updated: [],
      failed: [],
    };
    // One read for all: discovery runs every cycle and must stay cheap for a large fleet.
    const known = new Map(
      (origins ?? (await this.listClusterOrigins())).map(o => [o.name, o]),
    );
    for (const cluster of clusters) {
      try {
        await this.upsertDiscoveredCluster(
          cluster,
          known.get(cluster.name),
          result,
        );
      } catch (error) {
        // One cluster the database refuses must not keep the others from being discovered.
        result.failed.push({
          name: cluster.name,
          message: error instanceof Error ? error.message : String(error),
        });
      }
    }
    return result;
  }

  private async upsertDiscoveredCluster(
    cluster: DiscoveredCluster,
    existing: ClusterOrigin | undefined,
    result: DiscoveryUpsertResult,
  ): Promise<void> {
    const { nameHeldBy, ...found } = cluster;
    if (!existing) {
      try {
        await this.insertCluster({ ...found, source: 'discovered' });
        result.inserted.push(cluster.name);
      } catch (error) {
        // Another replica inserted it between our read and write: it is known now.
        if (!(error instanceof ConflictError)) throw error;
        return;
      }
      if (nameHeldBy) {
        const held = await this.getCluster(nameHeldBy.name);
        if (held) {
          await this.log.write(
            this.db,
            [
              {
                subjectKind: 'cluster',
                subject: held.name,
                actor: 'fleet-discovery',
                from: held.status,
                to: held.status,
                reason: 'NAME_REUSED',
                message: nameHeldBy.message,
              },
            ],
            new Date(),
          );
        }
      }
      return;
    }
    if (existing.source !== 'discovered') return; // a manual registration wins
    const identity: ClusterIdentity = {
      server: normalizeServer(cluster.endpoint),
      ca: cluster.identityCa ?? existing.identityCa,
    };
    // Never re-point a cluster at another API server: its deployments would follow the name.
    if (
      !sameIdentity(identity, {
        server: existing.identityServer,
        ca: existing.identityCa,
      })
    ) {
      throw new Error(
        `it is API server ${describeIdentity(identity)}, not ${describeIdentity(
          {
            server: existing.identityServer,
            ca: existing.identityCa,
          },
        )}; not re-pointed`,
      );
    }
    if (
      existing.endpoint !== cluster.endpoint ||
      existing.kubeconfigRef !== cluster.kubeconfigRef ||
      (existing.context ?? null) !== (cluster.context ?? null) ||
      existing.identityServer !== identity.server ||
      existing.identityCa !== identity.ca
    ) {
      await this.db<ClusterRow>('fleet_clusters')
        // Only while it is still a discovered cluster: a manual registration of the same name
        // since the read above wins.
        .where({ name: cluster.name, source: 'discovered' })
        .update({
          endpoint: cluster.endpoint,
          kubeconfig_ref: cluster.kubeconfigRef,
          context: cluster.context ?? null,
          identity_server: identity.server,
          identity_ca: identity.ca ?? null,
          updated_at: new Date(),
        });
      result.updated.push(cluster.name);
    }
  }

  async updateClusterSettings(
    name: string,
    settings: ClusterSettings,
    actor?: string,
  ): Promise<ClusterRecord | undefined> {
    const now = new Date();
    const patch: Partial<ClusterRow> = { updated_at: now };
    if (settings.labels !== undefined)
      patch.labels = JSON.stringify(settings.labels);
    if (settings.failureThreshold !== undefined)
      patch.failure_threshold = settings.failureThreshold;
    const updated = await this.db.transaction(async tx => {
      const row = await tx<ClusterRow>('fleet_clusters')
        .where({ name })
        .first();
      if (!row) return false;
      await tx<ClusterRow>('fleet_clusters').where({ name }).update(patch);
      if (actor) {
        await this.log.write(
          tx,
          [
            {
              subjectKind: 'cluster',
              subject: name,
              actor,
              from: row.status,
              to: row.status,
              reason: 'SETTINGS_CHANGED',
              message: describeSettings(settings),
            },
          ],
          now,
        );
      }
      return true;
    });
    return updated ? this.getCluster(name) : undefined;
  }

  async deleteCluster(name: string, actor?: string): Promise<boolean> {
    return this.db.transaction(async tx => {
      const row: ClusterRow | undefined = await forUpdate(
        tx<ClusterRow>('fleet_clusters').where({ name }),
        tx,
      ).first();
      if (!row) return false;
      // Checked here, in the transaction, and enforced by the foreign key: a deployment created
      // meanwhile makes this a 409, never a 500.
      const deployments = await tx('fleet_deployments')
        .where({ cluster: name })
        .count({ n: '*' })
        .first();
      const count = Number(deployments?.n ?? 0);
      if (count > 0) {
        throw new ConflictError(
          `Cluster '${name}' still has ${count} deployment(s); remove them first`,
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
      await this.log.write(
        tx,
        [
          {
            subjectKind: 'cluster',
            subject: name,
            actor: actor ?? 'fleet-api',
            from: row.status,
            to: 'DELETED',
            reason: 'DELETED',
            message: `Cluster removed (${row.source})`,
          },
        ],
        new Date(),
      );
      return true;
    });
  }

  async countClustersByStatus(): Promise<Record<ClusterStatus, number>> {
    return countByValue(this.db, 'fleet_clusters', 'status', CLUSTER_STATUSES);
  }

  async inClusterTransaction<T>(
    fn: (tx: ClusterHealthTransaction) => Promise<T>,
    fence?: LeaseFence,
  ): Promise<T> {
    return fenced(this.db, fence, trx =>
      fn(clusterHealthTransaction(trx, this.log)),
    );
  }

  async updateClustersHealth(
    updates: Array<{ name: string; update: ClusterHealthUpdate }>,
    fence?: LeaseFence,
  ): Promise<void> {
    if (!fence) {
      await updateClustersHealth(this.db, updates);
      return;
    }
    await fenced(this.db, fence, tx => updateClustersHealth(tx, updates));
  }
}
