import type { Release } from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import Typography from '@material-ui/core/Typography';
import { RelativeTime } from '../RelativeTime';
import type { PermissionState } from '../DeploymentActions';
import { CodeWords } from '../StatusChip';
import { ReleaseControls } from './ReleaseControls';
import { PlainTargets } from './PlainTargets';
import { ReleaseGrid } from './ReleaseGrid';
import { ReleaseHistory } from './ReleaseHistory';
import { ReleaseJudgments } from './JudgmentTable';
import { useTableStyles } from '../tables';
import { WAITING_STATUSES } from './gateText';
import { WaitingRelease } from './WaitingRelease';
import {
  FINISHED_STATUSES,
  RUNNING_STATUSES,
  releasedText,
} from './releaseText';
import { ActorName, actorText } from '../EntityName';

/** What let a gated release start: an approval, or the end of its freeze window. */
function openedText(release: Release): string {
  const openedBy = release.gate?.openedBy;
  if (!openedBy) return '';
  return openedBy === 'fleet-release'
    ? '; went on when its freeze window closed'
    : `; approved by ${actorText(openedBy)}`;
}

function RunningRelease(props: {
  release: Release;
  componentName: string;
  permission: PermissionState;
  onChanged: () => void;
}) {
  const classes = useTableStyles();
  const { release } = props;
  const { progress } = release;
  return (
    <Box mb={2} aria-label="Running release" role="region">
      <Typography variant="body2" gutterBottom>
        <strong data-testid="fleet-release-status">
          <CodeWords code={release.status} />
        </strong>
        {' — '}
        <code className={classes.nowrap}>
          {releasedText(release) ?? 'current image'}
        </code>
        {release.stage && ` to stage ${release.stage}`}, started{' '}
        <RelativeTime value={release.createdAt} /> by{' '}
        <ActorName actor={release.createdBy} />
        {openedText(release)}
        {release.status === 'PAUSED' &&
          progress?.pausedBy &&
          `; paused by ${actorText(progress.pausedBy)}`}
      </Typography>
      {progress?.abort && (
        <Typography variant="body2" color="error" role="status" gutterBottom>
          {release.status === 'PAUSED'
            ? 'Paused after a failure (rollback is off)'
            : 'Aborting'}
          : {progress.abort.message}
        </Typography>
      )}
      {progress && (
        <ReleaseControls
          release={release}
          componentName={props.componentName}
          permission={props.permission}
          onChanged={props.onChanged}
        />
      )}
      {progress ? (
        <>
          <ReleaseGrid
            progress={progress}
            steps={release.strategy?.canary?.steps?.length ?? 0}
            status={release.status}
          />
          <ReleaseJudgments progress={progress} />
        </>
      ) : (
        <PlainTargets release={release} />
      )}
    </Box>
  );
}

/**
 * The releases of the component's application: those waiting for approval or a freeze window
 * (with Approve and Reject), the one under way (waves × clusters, with Promote, Pause, Resume and
 * Abort for a progressive one), then the finished ones.
 *
 * @public
 */
export function ReleasePanel(props: {
  /** The application's releases, newest first. */
  releases: Release[];
  componentName: string;
  /** `fleet.release.manage` on the component. */
  permission: PermissionState;
  /** Fetches again, after an action. */
  onChanged: () => void;
  /** Why the releases could not be read, if they could not. */
  error?: string;
}) {
  const running = props.releases.filter(r =>
    RUNNING_STATUSES.includes(r.status),
  );
  const waiting = props.releases.filter(r =>
    WAITING_STATUSES.includes(r.status),
  );
  const finished = props.releases.filter(r =>
    FINISHED_STATUSES.includes(r.status),
  );
  return (
    <Box
      component="section"
      mt={3}
      data-testid="fleet-release"
      aria-label="Releases"
    >
      <Typography variant="h6" component="h2" gutterBottom>
        Releases
      </Typography>
      {props.error && (
        <Typography
          variant="caption"
          color="error"
          role="status"
          display="block"
        >
          Could not read the releases ({props.error}).
        </Typography>
      )}
      {waiting.map(r => (
        <WaitingRelease
          key={r.id}
          release={r}
          componentName={props.componentName}
          onChanged={props.onChanged}
        />
      ))}
      {running.map(r => (
        <RunningRelease
          key={r.id}
          release={r}
          componentName={props.componentName}
          permission={props.permission}
          onChanged={props.onChanged}
        />
      ))}
      {running.length === 0 && waiting.length === 0 && !props.error && (
        <Typography variant="body2" gutterBottom>
          No release under way.
        </Typography>
      )}
      <ReleaseHistory releases={finished.slice(0, 10)} />
    </Box>
  );
}
