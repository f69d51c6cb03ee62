import type {
  ClusterStatus,
  DeploymentStatus,
  SyncStatus,
} from '@cnp/plugin-fleet-common';
import type { BackstagePaletteAdditions } from '@backstage/theme';
import Chip from '@material-ui/core/Chip';
import Tooltip from '@material-ui/core/Tooltip';
import { getContrastRatio, makeStyles } from '@material-ui/core/styles';
import CheckCircleIcon from '@material-ui/icons/CheckCircle';
import DeleteSweepIcon from '@material-ui/icons/DeleteSweep';
import ErrorIcon from '@material-ui/icons/Error';
import HelpIcon from '@material-ui/icons/Help';
import HourglassEmptyIcon from '@material-ui/icons/HourglassEmpty';
import SyncIcon from '@material-ui/icons/Sync';
import SyncProblemIcon from '@material-ui/icons/SyncProblem';
import WarningIcon from '@material-ui/icons/Warning';
import type { ReactElement } from 'react';
import { reasonWords } from './reasonText';

export type Tone = 'ok' | 'error' | 'warning' | 'neutral' | 'progress';

/** The theme's status colour of each tone (`aborted` is the theme's grey). */
const toneColour: Record<Tone, keyof BackstagePaletteAdditions['status']> = {
  ok: 'ok',
  error: 'error',
  warning: 'warning',
  neutral: 'aborted',
  progress: 'running',
};

const useStyles = makeStyles(theme => {
  const { black, white } = theme.palette.common;
  /** On the tone's colour, black or white text, whichever contrasts more: 4.5:1 at least (WCAG AA). */
  const tone = (t: Tone) => {
    const background = theme.palette.status[toneColour[t]];
    return {
      backgroundColor: background,
      color:
        getContrastRatio(background, white) >=
        getContrastRatio(background, black)
          ? white
          : black,
    };
  };
  return {
    ok: tone('ok'),
    error: tone('error'),
    warning: tone('warning'),
    neutral: tone('neutral'),
    progress: tone('progress'),
    icon: { color: 'inherit' },
  };
});

/** A chip in a tone's theme colour, with its text label and an icon, never colour alone. */
export function ToneChip(props: {
  label: string;
  tone: Tone;
  icon: ReactElement;
  what: string;
  title?: string;
}) {
  const classes = useStyles();
  const chip = (
    <Chip
      size="small"
      label={props.label}
      icon={props.icon}
      className={classes[props.tone]}
      classes={{ icon: classes.icon }}
      aria-label={`${props.what}: ${props.label}`}
    />
  );
  return props.title ? <Tooltip title={props.title}>{chip}</Tooltip> : chip;
}

const clusterTone: Record<ClusterStatus, { tone: Tone; icon: ReactElement }> = {
  ONLINE: { tone: 'ok', icon: <CheckCircleIcon /> },
  OFFLINE: { tone: 'error', icon: <ErrorIcon /> },
  UNKNOWN: { tone: 'neutral', icon: <HelpIcon /> },
};

/**
 * An ONLINE cluster whose last probe failed: in the grace period before a second failed probe
 * confirms an outage.
 */
function probeFailing(props: {
  status: ClusterStatus;
  reason?: string | null;
  consecutiveFailures?: number;
}): boolean {
  return (
    props.status === 'ONLINE' &&
    ((props.consecutiveFailures ?? 0) > 0 ||
      /^PROBE_FAILED\b/.test(props.reason ?? ''))
  );
}

/**
 * A cluster's status in the theme's status colours: ok for ONLINE, error for OFFLINE, grey for
 * UNKNOWN, always with its text label and an icon, never colour alone. An ONLINE cluster whose
 * last probe failed (the grace period before an outage is confirmed) is a warning, "ONLINE —
 * probe failing". The reason in words on hover.
 *
 * @public
 */
export function ClusterStatusChip(props: {
  status: ClusterStatus;
  reason?: string | null;
  /** Failed probes in a row: above 0 on an ONLINE cluster, its probe is failing. */
  consecutiveFailures?: number;
}) {
  const failing = probeFailing(props);
  const { tone, icon } = failing
    ? { tone: 'warning' as const, icon: <WarningIcon /> }
    : clusterTone[props.status] ?? clusterTone.UNKNOWN;
  return (
    <ToneChip
      label={failing ? `${props.status} — probe failing` : props.status}
      tone={tone}
      icon={icon}
      what="Cluster status"
      title={props.reason ? reasonWords(props.reason) : undefined}
    />
  );
}

const deploymentTone: Record<
  DeploymentStatus,
  { tone: Tone; icon: ReactElement }
> = {
  PENDING: { tone: 'neutral', icon: <HourglassEmptyIcon /> },
  PROGRESSING: { tone: 'progress', icon: <SyncIcon /> },
  DEPLOYED: { tone: 'ok', icon: <CheckCircleIcon /> },
  DEGRADED: { tone: 'warning', icon: <WarningIcon /> },
  FAILED: { tone: 'error', icon: <ErrorIcon /> },
  REMOVING: { tone: 'neutral', icon: <DeleteSweepIcon /> },
};

/** @public */
export function DeploymentStatusChip(props: {
  status: DeploymentStatus;
  reason?: string | null;
}) {
  const { tone, icon } = deploymentTone[props.status] ?? deploymentTone.PENDING;
  return (
    <ToneChip
      label={props.status}
      tone={tone}
      icon={icon}
      what="Deployment status"
      title={props.reason ? reasonWords(props.reason) : undefined}
    />
  );
}

const syncTone: Record<SyncStatus, { tone: Tone; icon: ReactElement }> = {
  SYNCED: { tone: 'ok', icon: <SyncIcon /> },
  OUT_OF_SYNC: { tone: 'warning', icon: <SyncProblemIcon /> },
  UNKNOWN: { tone: 'neutral', icon: <HelpIcon /> },
};

/** @public */
export function SyncStatusChip(props: { status: SyncStatus }) {
  const { tone, icon } = syncTone[props.status] ?? syncTone.UNKNOWN;
  return (
    <ToneChip
      label={props.status.replace(/_/g, ' ')}
      tone={tone}
      icon={icon}
      what="Sync status"
    />
  );
}
