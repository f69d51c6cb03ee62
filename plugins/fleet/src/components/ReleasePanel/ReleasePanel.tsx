import type { Release } from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import Typography from '@material-ui/core/Typography';
import { RelativeTime } from '../RelativeTime';
import type { PermissionState } from '../DeploymentActions';
import { ReleaseControls } from './ReleaseControls';
import { ReleaseGrid } from './ReleaseGrid';
import { ReleaseHistory } from './ReleaseHistory';
import { FINISHED_STATUSES, RUNNING_STATUSES } from './releaseText';

/** A release without a strategy: its clusters and where each stands. */
function PlainTargets(props: { release: Release }) {
  return (
    <Box
      component="ul"
      aria-label="Release targets"
      m={0}
      pl={2}
      data-testid="fleet-release-targets"
    >
      {props.release.targets.map(t => (
        <Typography
          component="li"
          variant="body2"
          key={t.cluster}
          data-testid={`fleet-release-cluster-${t.cluster}`}
        >
          {t.cluster}: revision {t.revision}, {t.status}
        </Typography>
      ))}
    </Box>
  );
}

function RunningRelease(props: {
  release: Release;
  componentName: string;
  permission: PermissionState;
  onChanged: () => void;
}) {
  const { release } = props;
  const { progress } = release;
  return (
    <Box mb={2} aria-label="Running release" role="region">
      <Typography variant="body2" gutterBottom>
        <strong data-testid="fleet-release-status">{release.status}</strong>
        {' — '}
        <code>{release.image ?? 'current image'}</code>, started{' '}
        <RelativeTime value={release.createdAt} /> by {release.createdBy}
        {release.status === 'PAUSED' &&
          progress?.pausedBy &&
          `; paused by ${progress.pausedBy}`}
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
        <ReleaseGrid
          progress={progress}
          steps={release.strategy?.canary?.steps?.length ?? 0}
        />
      ) : (
        <PlainTargets release={release} />
      )}
    </Box>
  );
}

/**
 * The releases of the component's application: the one under way (waves × clusters, with
 * Promote, Pause, Resume and Abort for a progressive one), then the finished ones.
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
      {running.map(r => (
        <RunningRelease
          key={r.id}
          release={r}
          componentName={props.componentName}
          permission={props.permission}
          onChanged={props.onChanged}
        />
      ))}
      {running.length === 0 && !props.error && (
        <Typography variant="body2" gutterBottom>
          No release under way.
        </Typography>
      )}
      <ReleaseHistory releases={finished.slice(0, 10)} />
    </Box>
  );
}
