import type {
  Cluster,
  Deployment,
  Release,
  SyncDifference,
} from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import Table from '@material-ui/core/Table';
import TableBody from '@material-ui/core/TableBody';
import TableCell from '@material-ui/core/TableCell';
import TableHead from '@material-ui/core/TableHead';
import TableRow from '@material-ui/core/TableRow';
import Tooltip from '@material-ui/core/Tooltip';
import Typography from '@material-ui/core/Typography';
import LayersIcon from '@material-ui/icons/Layers';
import {
  DeploymentActions,
  type DeploymentAction,
  type PermissionState,
} from '../DeploymentActions';
import { ClusterLink } from '../ClusterLink';
import { RelativeTime } from '../RelativeTime';
import { RUNNING_STATUSES } from '../ReleasePanel/releaseText';
import {
  ClusterStatusChip,
  DeploymentStatusChip,
  ReasonText,
  SyncStatusChip,
  ToneChip,
} from '../StatusChip';
import { useTableStyles } from '../tables';

/**
 * What a release under way does on each cluster, in words, by cluster: "canary running, 20 %",
 * "canary paused, 20 %", "canary completing", "release rolling back", or "release in flight" for
 * a release without canary steps whose target there has not ended.
 */
export function releasesInFlight(releases: Release[]): Map<string, string> {
  const marks = new Map<string, string>();
  for (const release of releases) {
    if (!RUNNING_STATUSES.includes(release.status)) continue;
    if (!release.progress) {
      for (const t of release.targets)
        if (t.status === 'PENDING' || t.status === 'PROGRESSING')
          marks.set(t.cluster, 'release in flight');
      continue;
    }
    for (const c of release.progress.clusters) {
      if (c.state === 'RUNNING')
        marks.set(
          c.cluster,
          `canary ${release.status === 'PAUSED' ? 'paused' : 'running'}, ${
            c.weight
          } %`,
        );
      else if (c.state === 'COMPLETING')
        marks.set(c.cluster, 'canary completing');
      else if (c.state === 'ROLLING_BACK')
        marks.set(c.cluster, 'release rolling back');
    }
  }
  return marks;
}

function Differences(props: { cluster: string; diffs: SyncDifference[] }) {
  return (
    <Box
      component="ul"
      pl={2}
      m={0}
      aria-label={`Differences on ${props.cluster}`}
    >
      {props.diffs.map(diff => (
        <Typography
          component="li"
          variant="caption"
          key={`${diff.kind}/${diff.name}${diff.path}`}
        >
          {diff.kind} {diff.name}:{' '}
          {diff.path === '/' ? 'missing' : <code>{diff.path}</code>}
        </Typography>
      ))}
    </Box>
  );
}

/**
 * What a rollout under way waits for ("2 of 4 updated replicas available") and when it fails if
 * it has not completed, shown all along rather than only once it has failed.
 */
function RolloutProgress(props: { deployment: Deployment }) {
  const { message, progressDeadlineAt } = props.deployment;
  if (!message && !progressDeadlineAt) return null;
  return (
    <Typography
      variant="caption"
      display="block"
      data-testid="rollout-progress"
    >
      {message}
      {message && progressDeadlineAt && '; '}
      {progressDeadlineAt && (
        <>
          fails <RelativeTime value={progressDeadlineAt} /> if not complete
        </>
      )}
    </Typography>
  );
}

function DeploymentRow(props: {
  deployment: Deployment;
  cluster?: Cluster;
  inFlight?: string;
  componentName: string;
  permissions: { rollback: PermissionState; undeploy: PermissionState };
  onAction: (action: DeploymentAction) => void;
}) {
  const classes = useTableStyles();
  const { deployment: d, cluster } = props;
  return (
    <TableRow data-deployment={d.id} data-cluster={d.cluster}>
      <TableCell>
        <Box display="flex" alignItems="center" style={{ gap: 6 }}>
          <span className={classes.nowrap}>
            <ClusterLink name={d.cluster} />
          </span>
          <ClusterStatusChip
            status={cluster?.status ?? d.clusterStatus ?? 'UNKNOWN'}
            reason={cluster?.statusReason}
            consecutiveFailures={cluster?.consecutiveFailures}
          />
        </Box>
        {!d.placed && (
          <Tooltip title="The application's placement no longer selects this cluster: the deployment stays, but Fleet no longer heals it">
            <Typography variant="caption" display="block">
              no longer placed
            </Typography>
          </Tooltip>
        )}
      </TableCell>
      <TableCell>
        <DeploymentStatusChip status={d.status} reason={d.message} />
        {d.status === 'PROGRESSING' && <RolloutProgress deployment={d} />}
        {props.inFlight && (
          <Box mt={0.5} data-testid="release-in-flight">
            <ToneChip
              label={props.inFlight}
              tone="progress"
              icon={<LayersIcon />}
              what="Release on this cluster"
              title="A release of this component is under way on this cluster: see Releases below"
            />
          </Box>
        )}
        {d.statusReason && <ReasonText reason={d.statusReason} />}
      </TableCell>
      <TableCell>
        <SyncStatusChip status={d.syncStatus} />
        {d.syncStatus === 'OUT_OF_SYNC' &&
          d.syncDifferences &&
          d.syncDifferences.length > 0 && (
            <Differences cluster={d.cluster} diffs={d.syncDifferences} />
          )}
      </TableCell>
      <TableCell>
        <code className={classes.nowrap}>{d.image ?? '—'}</code>
      </TableCell>
      <TableCell className={classes.nowrap}>
        <RelativeTime value={d.updatedAt} />
      </TableCell>
      <TableCell>
        <DeploymentActions
          deployment={d}
          componentName={props.componentName}
          permissions={props.permissions}
          onAction={props.onAction}
        />
      </TableCell>
    </TableRow>
  );
}

/**
 * The component's deployments, one row each: the cluster and its state, the deployment's status
 * (with a marker while a release is under way there), sync status, image, last change and
 * actions.
 */
export function DeploymentRows(props: {
  deployments: Deployment[];
  clusters: Cluster[];
  releases: Release[];
  componentName: string;
  permissions: { rollback: PermissionState; undeploy: PermissionState };
  onAction: (action: DeploymentAction, deployment: Deployment) => void;
}) {
  const classes = useTableStyles();
  const status = new Map(props.clusters.map(c => [c.name, c]));
  const inFlight = releasesInFlight(props.releases);
  return (
    <Box className={classes.scroll}>
      <Table size="small" aria-label="Deployments" className={classes.table}>
        <TableHead>
          <TableRow>
            <TableCell>Cluster</TableCell>
            <TableCell>Deployment</TableCell>
            <TableCell>Sync</TableCell>
            <TableCell>Image</TableCell>
            <TableCell>Last change</TableCell>
            <TableCell>Actions</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {props.deployments.map(d => (
            <DeploymentRow
              key={d.id}
              deployment={d}
              cluster={status.get(d.cluster)}
              inFlight={inFlight.get(d.cluster)}
              componentName={props.componentName}
              permissions={props.permissions}
              onAction={action => props.onAction(action, d)}
            />
          ))}
        </TableBody>
      </Table>
    </Box>
  );
}
