import {
  InfoCard,
  Progress,
  ResponseErrorPanel,
} from '@backstage/core-components';
import { useApi } from '@backstage/core-plugin-api';
import { fleetSignalChannels, type Release } from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import Grid from '@material-ui/core/Grid';
import Table from '@material-ui/core/Table';
import TableBody from '@material-ui/core/TableBody';
import TableCell from '@material-ui/core/TableCell';
import TableHead from '@material-ui/core/TableHead';
import TableRow from '@material-ui/core/TableRow';
import Typography from '@material-ui/core/Typography';
import { fleetApiRef } from '../../api';
import { usePolling } from '../../hooks/usePolling';
import { ActorName, EntityName } from '../EntityName';
import { RelativeTime } from '../RelativeTime';
import { releasedText } from '../ReleasePanel/releaseText';
import { useTableStyles } from '../tables';

const statusWords: Partial<Record<Release['status'], string>> = {
  PROGRESSING: 'progressing',
  PAUSED: 'paused',
  ABORTING: 'rolling back',
};

/**
 * How far a release under way is, in words: "wave 2 of 3, 4 of 6 clusters done" (a cluster is
 * done once its canary completed), or its targets' count without a strategy.
 */
export function releaseProgressText(release: Release): string {
  const progress = release.progress;
  if (!progress) {
    const ended = release.targets.filter(
      t => t.status !== 'PENDING' && t.status !== 'PROGRESSING',
    ).length;
    return `${ended} of ${release.targets.length} clusters done`;
  }
  const done = progress.clusters.filter(c => c.state === 'DONE').length;
  const total = progress.clusters.length;
  const waves = progress.waves.length;
  const wave =
    waves > 1
      ? `wave ${Math.min(progress.currentWave + 1, waves)} of ${waves}, `
      : '';
  return `${wave}${done} of ${total} clusters done`;
}

/**
 * The fleet page's releases under way with a strategy, oldest first, as an item of its grid:
 * the component, what it releases, its status in words, how far it is, who started it and when.
 * The component's name leads to its page, where the release panel steers it.
 */
export function FleetReleasesUnderWayCard(props: { pollIntervalMs?: number }) {
  const api = useApi(fleetApiRef);
  const classes = useTableStyles();
  const { value, error, loading } = usePolling(
    () => api.listReleasesUnderWay(),
    [api],
    {
      intervalMs: props.pollIntervalMs,
      // A release moves its clusters' deployments as it goes: the list follows them.
      signals: { channels: [fleetSignalChannels.deployments] },
    },
  );

  let content;
  if (loading && !value) {
    content = <Progress />;
  } else if (error && !value) {
    content = <ResponseErrorPanel error={error} />;
  } else if (!value || value.length === 0) {
    content = <Typography variant="body2">No release is under way.</Typography>;
  } else {
    content = (
      <Box className={classes.scroll}>
        <Table
          size="small"
          aria-label="Releases under way"
          className={classes.table}
        >
          <TableHead>
            <TableRow>
              <TableCell>Component</TableCell>
              <TableCell>Releases</TableCell>
              <TableCell>Status</TableCell>
              <TableCell>Progress</TableCell>
              <TableCell>Started</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {value.map(r => (
              <TableRow key={r.id} data-release={r.id}>
                <TableCell>
                  <EntityName entityRef={r.entityRef} />
                </TableCell>
                <TableCell className={classes.nowrap}>
                  {releasedText(r) ?? 'the current image'}
                </TableCell>
                <TableCell>{statusWords[r.status] ?? r.status}</TableCell>
                <TableCell>{releaseProgressText(r)}</TableCell>
                <TableCell>
                  <RelativeTime value={r.createdAt} /> by{' '}
                  <ActorName actor={r.createdBy} />
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </Box>
    );
  }

  return (
    <Grid item xs={12} md={6}>
      <InfoCard title="Releases under way">{content}</InfoCard>
    </Grid>
  );
}
