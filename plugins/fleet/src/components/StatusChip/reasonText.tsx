import Typography from '@material-ui/core/Typography';

/**
 * Fleet's reason codes in words. A cluster's, a deployment's, an event's or a release step's
 * reason is a machine-readable code (sometimes followed by `: details`); people read these words,
 * with the code beside them for searching logs and the API.
 */
const WORDS: Record<string, string> = {
  // deployments
  CLUSTER_OFFLINE: 'Cluster offline',
  APPLY_FAILED: 'Kubernetes refused the apply',
  OWNERSHIP_CONFLICT: "Another owner's object is in the way (left untouched)",
  CLUSTER_NOT_CONFIGURED: 'Cluster has no usable kubeconfig',
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
 * A deployment's status reason for people, as text: its words, then the code.
 *
 * @public
 */
export function deploymentReasonText(reason: string): string {
  const { words, code, detail } = reasonParts(reason);
  return [code ? `${words} (${code})` : words, detail]
    .filter(Boolean)
    .join(': ');
}

/**
 * A reason as words, the code beside them in small monospace (never broken mid-word), then its
 * details.
 *
 * @public
 */
export function ReasonText(props: {
  reason: string;
  variant?: 'caption' | 'body2';
  display?: 'block' | 'inline';
}) {
  const { words, code, detail } = reasonParts(props.reason);
  return (
    <Typography
      variant={props.variant ?? 'caption'}
      display={props.display ?? 'block'}
      component="span"
    >
      {words}
      {code && (
        <>
          {' '}
          <Typography
            component="code"
            variant="caption"
            color="textSecondary"
            style={{ whiteSpace: 'nowrap', fontFamily: 'monospace' }}
          >
            {code}
          </Typography>
        </>
      )}
      {detail && <>: {detail}</>}
    </Typography>
  );
}
