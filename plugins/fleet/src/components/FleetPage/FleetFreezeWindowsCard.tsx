import {
  InfoCard,
  Progress,
  ResponseErrorPanel,
} from '@backstage/core-components';
import { useApi } from '@backstage/core-plugin-api';
import type { FreezeWindow } from '@cnp/plugin-fleet-common';
import Grid from '@material-ui/core/Grid';
import Table from '@material-ui/core/Table';
import TableBody from '@material-ui/core/TableBody';
import TableCell from '@material-ui/core/TableCell';
import TableHead from '@material-ui/core/TableHead';
import TableRow from '@material-ui/core/TableRow';
import Typography from '@material-ui/core/Typography';
import { fleetApiRef } from '../../api';
import { usePolling } from '../../hooks/usePolling';
import { formatExact, formatRelative } from '../RelativeTime/RelativeTime';

/** An exact time with the relative one on hover; "—" when there is none. */
function Time(props: { value: string | null }) {
  if (!props.value) return <span>—</span>;
  return (
    <time dateTime={props.value} title={formatRelative(props.value)}>
      {formatExact(props.value)}
    </time>
  );
}

function clustersText(window: FreezeWindow): string {
  if (window.clusters.length > 0) return window.clusters.join(', ');
  return window.clusterSelector ?? 'every cluster';
}

/** The windows, as a table: open ones with when they close, the next with when they open. */
function WindowTable(props: {
  label: string;
  windows: FreezeWindow[];
  open: boolean;
}) {
  return (
    <Table size="small" aria-label={props.label}>
      <TableHead>
        <TableRow>
          <TableCell>Window</TableCell>
          <TableCell>Clusters</TableCell>
          <TableCell>{props.open ? 'Closes at' : 'Opens at'}</TableCell>
          {!props.open && <TableCell>For</TableCell>}
        </TableRow>
      </TableHead>
      <TableBody>
        {props.windows.map(w => (
          <TableRow key={w.name} data-window={w.name}>
            <TableCell>{w.name}</TableCell>
            <TableCell>{clustersText(w)}</TableCell>
            <TableCell>
              <Time value={props.open ? w.closesAt : w.nextOpensAt} />
            </TableCell>
            {!props.open && <TableCell>{w.duration}</TableCell>}
          </TableRow>
        ))}
      </TableBody>
    </Table>
  );
}

/**
 * The fleet page's freeze windows, as an item of its grid: those open now (their clusters, when
 * they close), then the next ones by when they open. A release that touches a cluster of an open
 * window waits for it to close.
 */
export function FleetFreezeWindowsCard(props: { pollIntervalMs?: number }) {
  const api = useApi(fleetApiRef);
  const { value, error, loading } = usePolling(
    () => api.listFreezeWindows(),
    [api],
    { intervalMs: props.pollIntervalMs },
  );

  let content;
  if (loading && !value) {
    content = <Progress />;
  } else if (error && !value) {
    content = <ResponseErrorPanel error={error} />;
  } else {
    const windows = value ?? [];
    const open = windows.filter(w => w.open);
    const next = windows
      .filter(w => !w.open && w.nextOpensAt)
      .sort((a, b) => Date.parse(a.nextOpensAt!) - Date.parse(b.nextOpensAt!));
    content = (
      <>
        <Typography variant="subtitle2" component="h3">
          Open now
        </Typography>
        {open.length > 0 ? (
          <WindowTable label="Open freeze windows" windows={open} open />
        ) : (
          <Typography variant="body2" gutterBottom>
            No freeze window is open: releases start when they are ready.
          </Typography>
        )}
        <Typography
          variant="subtitle2"
          component="h3"
          style={{ marginTop: 16 }}
        >
          Next
        </Typography>
        {next.length > 0 ? (
          <WindowTable
            label="Next freeze windows"
            windows={next}
            open={false}
          />
        ) : (
          <Typography variant="body2">
            No freeze window is scheduled to open.
          </Typography>
        )}
      </>
    );
  }

  return (
    <Grid item xs={12} md={6}>
      <InfoCard title="Freeze windows">{content}</InfoCard>
    </Grid>
  );
}
