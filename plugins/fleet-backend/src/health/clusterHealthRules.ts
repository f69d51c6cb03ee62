/*
 * The cluster health state machine, as pure functions: what one probe does to one
 * cluster, and when the mass-outage guard holds the cascade. The HealthWorker only carries out
 * what these decide.
 */
import { ConflictError } from '@backstage/errors';
import { ClusterReasons, type ClusterStatus } from '@cnp/plugin-fleet-common';
import type { ProbeOutcome } from '../kubernetes/ClusterClients';
import { redactDetail } from '../util/redactDetail';

export interface ClusterHealthState {
  status: ClusterStatus;
  consecutiveFailures: number;
  consecutiveSuccesses: number;
}

export interface HealthThresholds {
  /** Consecutive failures that confirm an outage (rule 1). */
  failureThreshold: number;
  /** Consecutive successes that bring an OFFLINE cluster back (rule 1). */
  recoveryThreshold: number;
}

/** What to do to the cluster's deployments. */
export type Cascade = 'degrade' | 'restore' | 'none';

export interface HealthDecision extends ClusterHealthState {
  statusReason: string;
  /** Set when the status changes. */
  transition?: { from: ClusterStatus; to: ClusterStatus };
  cascade: Cascade;
}

/**
 * Applies one probe outcome to a cluster's state.
 *
 * 1. Grace period: a failure increments the count; OFFLINE only at the threshold. A success resets
 *    it and makes the cluster ONLINE; after a confirmed outage (OFFLINE, or UNKNOWN with the
 *    outage's failure count kept by rule 5) only after `recoveryThreshold` consecutive successes.
 * 2. Cascade only on a confirmed ONLINE → OFFLINE; UNKNOWN → OFFLINE changes the cluster only.
 * 3. Targeted recovery: becoming ONLINE restores (only) the deployments degraded by an outage.
 * 5. Not probeable: UNKNOWN, counts neither reset nor advanced, nothing cascades.
 */
export function decideClusterHealth(
  current: ClusterHealthState,
  outcome: ProbeOutcome,
  thresholds: HealthThresholds,
): HealthDecision {
  const from = current.status;
  const decide = (
    to: ClusterStatus,
    statusReason: string,
    counts: Pick<
      ClusterHealthState,
      'consecutiveFailures' | 'consecutiveSuccesses'
    >,
    cascade: Cascade = 'none',
  ): HealthDecision => ({
    status: to,
    statusReason,
    ...counts,
    transition: to !== from ? { from, to } : undefined,
    cascade: to !== from ? cascade : 'none',
  });

  switch (outcome.kind) {
    case 'not-probeable':
      return decide(
        'UNKNOWN',
        `${ClusterReasons.NOT_PROBEABLE}: ${outcome.message}`,
        {
          consecutiveFailures: current.consecutiveFailures,
          consecutiveSuccesses: current.consecutiveSuccesses,
        },
      );

    case 'success': {
      const successes = current.consecutiveSuccesses + 1;
      // An outage is over only after recoveryThreshold successes, also when the cluster went
      // UNKNOWN meanwhile (rule 5 keeps its failure count, which is how it is told apart): a
      // kubeconfig unreadable for a moment must not shortcut the recovery.
      const inOutage =
        from === 'OFFLINE' ||
        (from === 'UNKNOWN' &&
          current.consecutiveFailures >= thresholds.failureThreshold);
      if (inOutage && successes < thresholds.recoveryThreshold) {
        // The failure count stays until the outage is over, so an UNKNOWN cycle in the middle
        // of a recovery does not forget it.
        return decide(
          from,
          `RECOVERING: ${successes}/${thresholds.recoveryThreshold} consecutive successful probes`,
          {
            consecutiveFailures: current.consecutiveFailures,
            consecutiveSuccesses: successes,
          },
        );
      }
      return decide(
        'ONLINE',
        ClusterReasons.PROBE_SUCCEEDED,
        { consecutiveFailures: 0, consecutiveSuccesses: successes },
        'restore',
      );
    }

    case 'failure': {
      const counts = {
        consecutiveFailures: current.consecutiveFailures + 1,
        consecutiveSuccesses: 0,
      };
      const tally = `${counts.consecutiveFailures}/${thresholds.failureThreshold} consecutive probes failed: ${outcome.message}`;
      if (counts.consecutiveFailures >= thresholds.failureThreshold) {
        return decide(
          'OFFLINE',
          `${ClusterReasons.FAILURE_THRESHOLD_REACHED}: ${tally}`,
          counts,
          from === 'ONLINE' ? 'degrade' : 'none',
        );
      }
      return decide(from, `${ClusterReasons.PROBE_FAILED}: ${tally}`, counts);
    }

    default: {
      // Exhaustive: a new ProbeOutcome kind fails type checking here until it has a rule.
      const unhandled: never = outcome;
      throw new Error(`Unknown probe outcome: ${JSON.stringify(unhandled)}`);
    }
  }
}

export interface MassOutagePolicy {
  minClusters: number;
  fraction: number;
}

/**
 * Rule 6, the mass-outage guard: when at least `minClusters` clusters and at least `fraction` of
 * the probeable clusters would newly go OFFLINE in one cycle, the likely fault is the prober's
 * own network, so the app cascade is held.
 */
export function isMassOutage(
  newlyOffline: number,
  probeable: number,
  policy: MassOutagePolicy,
): boolean {
  return (
    probeable > 0 &&
    newlyOffline >= policy.minClusters &&
    newlyOffline >= policy.fraction * probeable
  );
}

/**
 * The deploy guard: a deployment may not be created on, or an application moved to, an OFFLINE
 * cluster. UNKNOWN and ONLINE clusters are allowed.
 */
export function assertClusterAcceptsDeployments(cluster: {
  name: string;
  status: ClusterStatus;
  statusReason?: string | null;
}): void {
  if (cluster.status === 'OFFLINE') {
    // Deployers read this, and they need not be cluster admins: no host detail in it (the
    // cluster's own answer shows admins the whole reason).
    const reason = redactDetail(cluster.statusReason);
    throw new ConflictError(
      `Cluster '${cluster.name}' is OFFLINE${
        reason ? ` (${reason})` : ''
      }; deployments to it are refused until it is back ONLINE`,
    );
  }
}
