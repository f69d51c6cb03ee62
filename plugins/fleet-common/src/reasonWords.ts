/**
 * Fleet's codes in words, one map for the portal and the notifications. A cluster's, a
 * deployment's, an event's or a release step's reason is a machine-readable code (sometimes
 * followed by `: details`), as are statuses and states; people read these words, the portal
 * keeps the code on hover for searching logs and the API.
 */
const WORDS: Record<string, string> = {
  // deployments
  CLUSTER_OFFLINE: 'Cluster offline',
  APPLY_FAILED: 'Kubernetes refused the apply',
  OWNERSHIP_CONFLICT: "Another owner's object is in the way (left untouched)",
  CLUSTER_NOT_CONFIGURED: 'Cluster not configured',
  WORKLOAD_UNHEALTHY: 'Fewer replicas available than desired',
  PROGRESS_DEADLINE_EXCEEDED: 'Rollout missed its deadline',
  ROLLED_BACK:
    'Rolled back: a newer revision failed, so the last DEPLOYED one runs again',
  AUTO_ROLLED_BACK: 'Rolled back automatically',
  DRIFT_DETECTED: 'Changed outside Fleet',
  IN_SYNC: 'Matches what Fleet applied',
  SELF_HEALED: 'Re-applied after a drift',
  SELF_HEAL_FAILED: 'Re-applying after a drift failed',
  READ_FAILED: 'Could not read the live objects',
  PRUNED: 'Undeployed: no longer placed here',
  UNDEPLOYED: 'Undeployed',
  FORGOTTEN: 'Forgotten (objects may remain)',
  DELETED: 'Deleted',
  SETTINGS_CHANGED: 'Settings changed',
  NAME_REUSED: 'Name reused by another API server',
  // clusters
  NEVER_PROBED: 'Not probed yet',
  PROBE_SUCCEEDED: 'Probe succeeded',
  PROBE_FAILED: 'Probe failed',
  FAILURE_THRESHOLD_REACHED: 'Outage confirmed',
  NOT_PROBEABLE: 'Cannot be probed',
  CLUSTER_NOT_ONLINE: 'Cluster not online',
  // releases
  ANALYSIS_FAILED: 'Analysis failed',
  ANALYSIS_INCONCLUSIVE: 'Analysis inconclusive',
  ANALYSIS_ERROR: 'Analysis could not be measured',
  INCONCLUSIVE: 'Paused: analysis inconclusive',
  STEP_FAILED: 'Step failed',
  STEP_TIMEOUT: 'Step timed out',
  STEP_DONE: 'Step done',
  WEIGHT_SET: 'Canary weight set',
  PAUSE_STARTED: 'Paused for promotion',
  PAUSED: 'Paused',
  RESUMED: 'Resumed',
  PROMOTED: 'Promoted',
  ABORTED: 'Aborted',
  WAVE_STARTED: 'Wave started',
  CLUSTER_STARTED: 'Cluster started',
  CLUSTER_PROMOTED: 'Cluster promoted',
  CLUSTER_DONE: 'Cluster done',
  // release statuses and where each cluster of a progressive release stands
  PROGRESSING: 'Progressing',
  COMPLETED: 'Completed',
  FAILED: 'Failed',
  ABORTING: 'Aborting',
  WAITING_FOR_APPROVAL: 'Waiting for approval',
  WAITING_FOR_WINDOW: 'Waiting for a freeze window',
  REJECTED: 'Rejected',
  WAITING: 'Waiting',
  RUNNING: 'Running',
  COMPLETING: 'Completing',
  DONE: 'Done',
  ROLLING_BACK: 'Rolling back',
  ROLLBACK_PENDING: 'Rollback pending (cluster offline)',
  SKIPPED: 'Skipped',
  // deployment statuses and what a release target became
  PENDING: 'Pending',
  DEPLOYED: 'Deployed',
  DEGRADED: 'Degraded',
  REMOVING: 'Removing',
  REMOVED: 'Removed',
  SUPERSEDED: 'Superseded',
  REVISION_ROLLBACK: 'Rolled back to an earlier revision',
  // cluster statuses
  ONLINE: 'Online',
  OFFLINE: 'Offline',
  UNKNOWN: 'Unknown',
};

/**
 * A reason split for people: its words, the code, and any details after the code.
 *
 * @public
 */
export function reasonParts(reason: string): {
  words: string;
  code?: string;
  detail?: string;
} {
  const match = reason.match(/^([A-Z][A-Z0-9_]*[A-Z0-9])(?::\s*(.*))?$/s);
  if (!match) return { words: reason };
  const [, code, detail] = match;
  const words =
    WORDS[code] ??
    code.charAt(0) +
      code.slice(1).toLocaleLowerCase('en-US').replace(/_/g, ' ');
  return { words, code, ...(detail ? { detail } : {}) };
}

/**
 * A reason, a status or a state in words, with its details: `Cluster offline: sim-2 is down` for
 * `CLUSTER_OFFLINE: sim-2 is down`, `Degraded` for `DEGRADED`; text that is not a code as it is.
 *
 * @public
 */
export function reasonWords(reason: string): string {
  const { words, detail } = reasonParts(reason);
  return detail ? `${words}: ${detail}` : words;
}
