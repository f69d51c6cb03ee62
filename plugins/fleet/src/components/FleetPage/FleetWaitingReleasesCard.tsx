import {
  InfoCard,
  Progress,
  ResponseErrorPanel,
} from '@backstage/core-components';
import { useApi } from '@backstage/core-plugin-api';
import { fleetSignalChannels } from '@cnp/plugin-fleet-common';
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
import { RelativeTime } from '../RelativeTime';
import {
  approvalsText,
  gateStatusText,
  windowText,
} from '../ReleasePanel/gateText';
import { useTableStyles } from '../tables';
import { EntityName } from '../EntityName';

/**
 * The fleet page's releases waiting before they start, oldest first, as an item of its grid:
 * the component, its stage, what it waits for, since when, and who must approve it or which
 * freeze window holds it.
 */
export function FleetWaitingReleasesCard(props: { pollIntervalMs?: number }) {
  const api = useApi(fleetApiRef);
  const classes = useTableStyles();
  const { value, error, loading } = usePolling(
    () => api.listWaitingReleases(),
    [api],
    {
      intervalMs: props.pollIntervalMs,
      // A waiting release that starts or ends changes deployments: the list follows them.
      signals: { channels: [fleetSignalChannels.deployments] },
    },
  );

  let content;
  if (loading && !value) {
    content = <Progress />;
  } else if (error && !value) {
    content = <ResponseErrorPanel error={error} />;
  } else if (!value || value.length === 0) {
    content = (
      <Typography variant="body2">
        No release is waiting for an approval or a freeze window.
      </Typography>
    );
  } else {
    content = (
      <Box className={classes.scroll}>
        <Table
          size="small"
          aria-label="Releases waiting"
          className={classes.table}
        >
          <TableHead>
            <TableRow>
              <TableCell>Component</TableCell>
              <TableCell>Stage</TableCell>
              <TableCell>Status</TableCell>
              <TableCell>Since</TableCell>
              <TableCell>Waiting for</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {value.map(r => (
              <TableRow key={r.id} data-release={r.id}>
                <TableCell>
                  <EntityName entityRef={r.entityRef} />
                </TableCell>
                <TableCell>{r.stage ?? '—'}</TableCell>
                <TableCell>{gateStatusText(r)}</TableCell>
                <TableCell className={classes.nowrap}>
                  <RelativeTime value={r.createdAt} />
                </TableCell>
                <TableCell>
                  {[approvalsText(r.gate), windowText(r.gate)]
                    .filter(Boolean)
                    .join('; ')}
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
      <InfoCard title="Releases waiting">{content}</InfoCard>
    </Grid>
  );
}
