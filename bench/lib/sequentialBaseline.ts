/*
 * THE SEQUENTIAL BASELINE — the original design's loop: the health worker probes each cluster
 * (a namespace list with a timeout) in a plain loop, one cluster after another, and commits each
 * cluster on its own before probing the next. Written here, in the
 * benchmark, to compare against; Fleet itself never runs it.
 *
 * To compare only the probing strategy, it uses Fleet's own probe (same client-node calls, same
 * timeout), Fleet's own rules (decideClusterHealth) and Fleet's own per-cluster transaction, so
 * the database work is the same; it has no bounded concurrency and no mass-outage guard (the
 * original had neither).
 */
import type { ProbeFn } from '@cnp/fleet-harness';
import {
  decideClusterHealth,
  healthUpdateOf,
  type ClusterStore,
  type FleetConfig,
  type ProbeOutcome,
} from '@cnp/plugin-fleet-backend/testUtils';

export async function sequentialBaselineCycle(options: {
  clusters: Pick<ClusterStore, 'listClusters' | 'inClusterTransaction'>;
  probe: ProbeFn;
  health: FleetConfig['health'];
  discover: () => Promise<void>;
}): Promise<{ probed: number; errors: number }> {
  const { clusters: clusterStore, probe, health, discover } = options;
  await discover();
  const clusters = await clusterStore.listClusters();
  let errors = 0;
  for (const cluster of clusters) {
    let outcome: ProbeOutcome;
    try {
      outcome = await probe(cluster, health.probeTimeoutMs);
    } catch (error) {
      outcome = {
        kind: 'failure',
        latencyMs: 0,
        message: String((error as Error)?.message ?? error),
      };
    }
    const now = new Date();
    const decision = decideClusterHealth(
      cluster,
      outcome,
      {
        failureThreshold: cluster.failureThreshold ?? health.failureThreshold,
        recoveryThreshold: health.recoveryThreshold,
        minOutageMs: health.minOutageMs,
      },
      now,
    );
    try {
      await clusterStore.inClusterTransaction(async tx => {
        await tx.updateClusterHealth(
          cluster.name,
          healthUpdateOf(decision, outcome, now),
        );
        if (decision.transition) {
          await tx.insertEvent({
            subjectKind: 'cluster',
            subject: cluster.name,
            actor: 'sequential-baseline',
            from: decision.transition.from,
            to: decision.transition.to,
            reason: decision.statusReason.split(':')[0],
            message: decision.statusReason,
          });
        }
        if (decision.cascade === 'degrade') {
          await tx.degradeDeploymentsOnCluster(
            cluster.name,
            'sequential-baseline',
            decision.statusReason,
          );
        } else if (decision.cascade === 'restore') {
          await tx.restoreDeploymentsOnCluster(
            cluster.name,
            'sequential-baseline',
            'back ONLINE',
          );
        }
      });
    } catch {
      errors += 1; // rolled back for this cluster alone; the loop goes on
    }
  }
  return { probed: clusters.length, errors };
}
