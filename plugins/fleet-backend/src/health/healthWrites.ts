import type { LoggerService } from '@backstage/backend-plugin-api';
import { reasonWords, type MassOutageWarning } from '@cnp/plugin-fleet-common';
import type { FleetConfig } from '../config/FleetConfig';
import type {
  ClusterHealthUpdate,
  ClusterRecord,
  ClusterStore,
  FleetStateStore,
  LeaseFence,
} from '../database/types';
import type { ProbeOutcome } from '../kubernetes/ClusterClients';
import type { HealthDecision } from './clusterHealthRules';

/*
 * What one health cycle writes: a cluster's decision in its own transaction (status, event,
 * cascades) and the fleet-wide mass-outage warning.
 */

const ACTOR = 'fleet-health';

/** The cluster row a probe outcome and its decision make. */
export function healthUpdateOf(
  decision: HealthDecision,
  outcome: ProbeOutcome,
  now: Date,
): ClusterHealthUpdate {
  return {
    status: decision.status,
    statusReason: decision.statusReason,
    consecutiveFailures: decision.consecutiveFailures,
    consecutiveSuccesses: decision.consecutiveSuccesses,
    firstFailureAt: decision.firstFailureAt
      ? new Date(decision.firstFailureAt)
      : null,
    lastProbeAt: outcome.kind === 'not-probeable' ? undefined : now,
    lastSuccessAt: outcome.kind === 'success' ? now : undefined,
    lastTransitionAt: decision.transition ? now : undefined,
    probeLatencyMs:
      outcome.kind === 'not-probeable' ? undefined : outcome.latencyMs,
    serverVersion:
      outcome.kind === 'success' ? outcome.serverVersion : undefined,
  };
}

/** One cluster's decision to write, under the lease of its cycle (or shard). */
export interface ApplyDecisionOptions {
  cluster: ClusterRecord;
  outcome: ProbeOutcome;
  decision: HealthDecision;
  /** The mass-outage guard is up: a new cascade is held. */
  guard: boolean;
  now: Date;
  lease: LeaseFence;
  /** Sharded: a cluster newly OFFLINE has its cascade held whatever the guard. */
  holdNew: boolean;
}

export interface MassOutageOptions {
  state: Pick<FleetStateStore, 'getMassOutage' | 'setMassOutage'>;
  logger: LoggerService;
  health: FleetConfig['health'];
  guard: boolean;
  newlyOffline: ClusterRecord[];
  probeable: number;
  now: Date;
  lease: LeaseFence;
}

export async function applyHealthDecision(
  clusters: Pick<ClusterStore, 'inClusterTransaction'>,
  opts: ApplyDecisionOptions,
): Promise<{ degraded: number; restored: number }> {
  const { cluster, outcome, decision, guard, now, lease, holdNew } = opts;
  return clusters.inClusterTransaction(async tx => {
    let degraded = 0;
    let restored = 0;
    await tx.updateClusterHealth(
      cluster.name,
      healthUpdateOf(decision, outcome, now),
    );
    if (decision.transition) {
      await tx.insertEvent({
        subjectKind: 'cluster',
        subject: cluster.name,
        actor: ACTOR,
        from: decision.transition.from,
        to: decision.transition.to,
        reason: decision.statusReason.split(':')[0],
        message: decision.statusReason,
      });
    }
    // In words for the component's people (`Outage confirmed: 2/2 consecutive probe failures`):
    // the cluster's reason code stays on the cluster and its event.
    const offlineMessage = `Cluster '${cluster.name}' is OFFLINE: ${reasonWords(
      decision.statusReason,
    )}`;
    if (decision.cascade === 'degrade') {
      // Sharded, a cluster newly OFFLINE always has its cascade held: the next cycle applies
      // it once the fleet-wide count, which then holds every shard's, stays below the guard.
      if (guard || holdNew) {
        await tx.setCascadeHeld(cluster.name, true);
      } else {
        degraded += await tx.degradeDeploymentsOnCluster(
          cluster.name,
          ACTOR,
          offlineMessage,
        );
      }
    } else if (decision.cascade === 'restore') {
      restored += await tx.restoreDeploymentsOnCluster(
        cluster.name,
        ACTOR,
        `Cluster '${cluster.name}' is back ONLINE`,
      );
    }
    // A cascade held by an earlier guard cycle: applied once the guard is off and the cluster
    // is still OFFLINE, dropped as soon as the cluster is no longer OFFLINE.
    if (cluster.cascadeHeldAt && decision.cascade !== 'degrade') {
      // Dropped only once the cluster is back ONLINE; a cluster that became UNKNOWN keeps its
      // hold, since UNKNOWN -> OFFLINE would never cascade again.
      if (decision.status === 'ONLINE') {
        await tx.setCascadeHeld(cluster.name, false);
      } else if (!guard && decision.status === 'OFFLINE') {
        degraded += await tx.degradeDeploymentsOnCluster(
          cluster.name,
          ACTOR,
          `${offlineMessage} (cascade held by the mass-outage guard since ${cluster.cascadeHeldAt}, applied now)`,
        );
        await tx.setCascadeHeld(cluster.name, false);
      }
    }
    return { degraded, restored };
  }, lease);
}

export async function updateMassOutageWarning(
  opts: MassOutageOptions,
): Promise<{ warning: MassOutageWarning; raised: boolean }> {
  const { state, logger, health, guard, newlyOffline, probeable, now, lease } =
    opts;
  const previous = await state.getMassOutage();
  if (guard) {
    const warning: MassOutageWarning = {
      active: true,
      raisedAt: previous?.active ? previous.raisedAt : now.toISOString(),
      clusters: [
        ...new Set([
          ...(previous?.active ? previous.clusters : []),
          ...newlyOffline.map(c => c.name),
        ]),
      ],
      message: `Mass outage suspected: ${
        newlyOffline.length
      } of ${probeable} probeable clusters went OFFLINE in this cycle or are still OFFLINE with a held cascade (threshold: ${
        health.massOutage.minClusters
      } clusters and ${Math.round(
        health.massOutage.fraction * 100,
      )}%). The likely fault is the prober's own network; cluster statuses are honest but deployment cascades are held.`,
    };
    logger.warn(warning.message!, {
      clusters: warning.clusters.join(','),
    });
    await state.setMassOutage(warning, lease);
    return { warning, raised: !previous?.active };
  }
  if (previous?.active) {
    logger.info(
      'Mass-outage guard lifted: held cascades are applied to clusters still OFFLINE',
    );
    const lifted: MassOutageWarning = {
      active: false,
      clusters: [],
      message: undefined,
    };
    await state.setMassOutage(lifted, lease);
    return { warning: lifted, raised: false };
  }
  return {
    warning: previous ?? { active: false, clusters: [] },
    raised: false,
  };
}
