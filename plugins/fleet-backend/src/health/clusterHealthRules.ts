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
  /** When the first of the consecutive failures was seen (ISO 8601); unset without failures. */
  firstFailureAt?: string;
}

export interface HealthThresholds {
  /** Consecutive failures that confirm an outage (rule 1). */
  failureThreshold: number;
  /**
   * How long since the first of them an outage must have lasted to be confirmed (rule 1), in
   * milliseconds; 0 confirms on the count alone.
   */
  minOutageMs: number;
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
 * 1. Grace period: a failure increments the count; OFFLINE only once the count reaches the
 *    threshold and `minOutageMs` have passed since the first of those failures (so quick probes in
 *    a row, e.g. manual runs during a short blip, cannot confirm an outage). A success resets
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
  /** When the probe ran. */
  now: Date,
): HealthDecision {
  switch (outcome.kind) {
    case 'not-probeable':
      return decide(
        current.status,
        'UNKNOWN',
        `${ClusterReasons.NOT_PROBEABLE}: ${outcome.message}`,
        {
          consecutiveFailures: current.consecutiveFailures,
          consecutiveSuccesses: current.consecutiveSuccesses,
          firstFailureAt: current.firstFailureAt,
        },
      );
    case 'success':
      return afterSuccess(current, thresholds);
    case 'failure':
      return afterFailure(current, outcome.message, thresholds, now);
    default: {
      // Exhaustive: a new ProbeOutcome kind fails type checking here until it has a rule.
      const unhandled: never = outcome;
      throw new Error(`Unknown probe outcome: ${JSON.stringify(unhandled)}`);
    }
  }
}

type Counts = Pick<
  ClusterHealthState,
  'consecutiveFailures' | 'consecutiveSuccesses' | 'firstFailureAt'
>;

/** The decision to go from `from` to `to`: a transition and its cascade only on a change. */
function decide(
  from: ClusterStatus,
  to: ClusterStatus,
  statusReason: string,
  counts: Counts,
  cascade: Cascade = 'none',
): HealthDecision {
  return {
    status: to,
    statusReason,
    ...counts,
    transition: to !== from ? { from, to } : undefined,
    cascade: to !== from ? cascade : 'none',
  };
}

/** Rules 1 and 3 for a successful probe. */
function afterSuccess(
  current: ClusterHealthState,
  thresholds: HealthThresholds,
): HealthDecision {
  const from = current.status;
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
      from,
      `RECOVERING: ${successes}/${thresholds.recoveryThreshold} consecutive successful probes`,
      {
        consecutiveFailures: current.consecutiveFailures,
        consecutiveSuccesses: successes,
        firstFailureAt: current.firstFailureAt,
      },
    );
  }
  return decide(
    from,
    'ONLINE',
    ClusterReasons.PROBE_SUCCEEDED,
    { consecutiveFailures: 0, consecutiveSuccesses: successes },
    'restore',
  );
}

/** Rules 1 and 2 for a failed probe. */
function afterFailure(
  current: ClusterHealthState,
  message: string,
  thresholds: HealthThresholds,
  now: Date,
): HealthDecision {
  const from = current.status;
  // A failure count without its first failure's time (a row older than that column) starts
  // the clock now: the time rule is never skipped.
  const firstFailureAt =
    current.consecutiveFailures > 0 && current.firstFailureAt
      ? current.firstFailureAt
      : now.toISOString();
  const counts = {
    consecutiveFailures: current.consecutiveFailures + 1,
    consecutiveSuccesses: 0,
    firstFailureAt,
  };
  const failingMs = Math.max(
    0,
    now.getTime() - new Date(firstFailureAt).getTime(),
  );
  const lasted =
    failingMs >=
    thresholds.minOutageMs - minOutageSlackMs(thresholds.minOutageMs);
  const tally = `${counts.consecutiveFailures}/${
    thresholds.failureThreshold
  } consecutive probes failed${
    thresholds.minOutageMs > 0
      ? ` over ${seconds(failingMs)} (an outage is confirmed after ${seconds(
          thresholds.minOutageMs,
        )})`
      : ''
  }: ${message}`;
  if (counts.consecutiveFailures >= thresholds.failureThreshold && lasted) {
    return decide(
      from,
      'OFFLINE',
      `${ClusterReasons.FAILURE_THRESHOLD_REACHED}: ${tally}`,
      counts,
      from === 'ONLINE' ? 'degrade' : 'none',
    );
  }
  return decide(from, from, `${ClusterReasons.PROBE_FAILED}: ${tally}`, counts);
}

/**
 * How much shorter than `minOutage` an outage may be and still count as lasting it: a scheduled
 * cycle starts when a scheduler worker next polls (every few seconds), so two cycles one interval
 * apart may start a little less than one interval apart. A tenth of minOutage, at most 10 s.
 */
export function minOutageSlackMs(minOutageMs: number): number {
  return Math.min(minOutageMs / 10, 10_000);
}

/** A duration for a status reason: `45 s`, `1.5 s`. */
function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
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
