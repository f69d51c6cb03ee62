import {
  DeploymentReasons,
  type DeploymentStatus,
} from '@cnp/plugin-fleet-common';
import type { Knex } from 'knex';
import { forUpdate, typedPlaceholder } from './dialect';
import type { EventLog } from './eventLog';
import type { ClusterRow, DeploymentRow } from './tables';
import type { ClusterHealthTransaction, ClusterHealthUpdate } from './types';

/*
 * The health cycle's writes: the batched write of the clusters whose status did not change, and
 * the per-cluster transaction of those that did (their status, their cascade, their events).
 */

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
  log: EventLog,
): Promise<number> {
  let query = forUpdate(
    tx<DeploymentRow>('fleet_deployments')
      .where({ cluster: where.cluster, status: where.status })
      .select('id', 'status'),
    tx,
  );
  if (where.statusReason)
    query = query.andWhere('status_reason', where.statusReason);
  const rows: Array<Pick<DeploymentRow, 'id' | 'status'>> = await query;
  if (rows.length === 0) return 0;
  const now = new Date();
  const ids = rows.map(r => r.id);
  await tx<DeploymentRow>('fleet_deployments').whereIn('id', ids).update({
    status: to.status,
    status_reason: to.statusReason,
    message: to.message,
    updated_at: now,
  });
  if (to.status === 'DEPLOYED') {
    // A rollout that completed while its cluster was away: its revision reached DEPLOYED. One
    // statement for the cluster, whatever the number of deployments.
    await tx('fleet_revisions')
      .whereIn('deployment_id', ids)
      .whereNull('outcome')
      .whereRaw(
        'revision = (select d.revision from fleet_deployments d where d.id = fleet_revisions.deployment_id)',
      )
      .update({ outcome: 'DEPLOYED', outcome_at: now });
  }
  await log.write(
    tx,
    rows.map(r => ({
      subjectKind: 'deployment',
      subject: r.id,
      actor,
      from: r.status,
      to: to.status,
      reason: to.statusReason ?? undefined,
      message: to.message,
    })),
    now,
  );
  return rows.length;
}

/** The writes of one cluster's health change, all inside `trx`. */
export function clusterHealthTransaction(
  trx: Knex.Transaction,
  log: EventLog,
): ClusterHealthTransaction {
  return {
    async updateClusterHealth(name, update) {
      const patch: Partial<ClusterRow> = {
        status: update.status,
        status_reason: update.statusReason ?? null,
        consecutive_failures: update.consecutiveFailures,
        consecutive_successes: update.consecutiveSuccesses,
        updated_at: new Date(),
      };
      if (update.firstFailureAt !== undefined)
        patch.first_failure_at = update.firstFailureAt;
      if (update.lastProbeAt) patch.last_probe_at = update.lastProbeAt;
      if (update.lastSuccessAt) patch.last_success_at = update.lastSuccessAt;
      if (update.lastTransitionAt)
        patch.last_transition_at = update.lastTransitionAt;
      if (update.probeLatencyMs !== undefined)
        patch.probe_latency_ms = update.probeLatencyMs;
      if (update.serverVersion !== undefined)
        patch.server_version = update.serverVersion.slice(0, 64);
      await trx<ClusterRow>('fleet_clusters').where({ name }).update(patch);
    },
    async setCascadeHeld(name, held) {
      await trx<ClusterRow>('fleet_clusters')
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
        log,
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
        log,
      ),
    async insertEvent(event) {
      await log.write(trx, [event], new Date());
    },
  };
}

/** The health columns a batched write sets, each with its type and its value in an update. */
const HEALTH_COLUMNS: Array<{
  column: keyof ClusterRow;
  type: string;
  value: (u: ClusterHealthUpdate) => unknown;
}> = [
  { column: 'status', type: 'varchar', value: u => u.status },
  { column: 'status_reason', type: 'text', value: u => u.statusReason ?? null },
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
    column: 'first_failure_at',
    type: 'timestamptz',
    value: u => u.firstFailureAt,
  },
  { column: 'last_probe_at', type: 'timestamptz', value: u => u.lastProbeAt },
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

/**
 * Writes the health rows of several clusters in one statement: one
 * `UPDATE ... SET column = CASE name WHEN ... END` per column; a column a cluster does not change
 * keeps its value (`ELSE column`).
 */
export async function updateClustersHealth(
  db: Knex | Knex.Transaction,
  updates: Array<{ name: string; update: ClusterHealthUpdate }>,
): Promise<void> {
  if (updates.length === 0) return;
  const sets: string[] = [];
  const bindings: Knex.RawBinding[] = [];
  for (const { column, type, value } of HEALTH_COLUMNS) {
    const arms = updates.filter(({ update }) => value(update) !== undefined);
    if (arms.length === 0) continue;
    sets.push(
      `${column} = CASE name ${arms
        .map(() => `WHEN ? THEN ${typedPlaceholder(db, type)}`)
        .join(' ')} ELSE ${column} END`,
    );
    for (const { name, update } of arms) {
      bindings.push(name, value(update) as Knex.RawBinding);
    }
  }
  sets.push(`updated_at = ${typedPlaceholder(db, 'timestamptz')}`);
  bindings.push(new Date());
  bindings.push(...updates.map(u => u.name));
  await db.raw(
    `UPDATE fleet_clusters SET ${sets.join(', ')} WHERE name IN (${updates
      .map(() => '?')
      .join(', ')})`,
    bindings,
  );
}
