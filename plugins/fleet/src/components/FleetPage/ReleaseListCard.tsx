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
import type { ReactNode } from 'react';
import { fleetApiRef, type FleetApi } from '../../api';
import { usePolling } from '../../hooks/usePolling';
import { useTableStyles } from '../tables';

/** One column of a release list: its heading, its cell, and whether the cell never wraps. */
export interface ReleaseColumn {
  heading: string;
  cell: (release: Release) => ReactNode;
  nowrap?: boolean;
}

/**
 * A fleet page card listing releases, as an item of its grid: read by `load`, again whenever a
 * release changes status or a deployment does (a release moves its clusters' deployments as it
 * goes), a row per release with `columns`, or `empty` when none.
 */
export function ReleaseListCard(props: {
  title: string;
  load: (api: FleetApi) => Promise<Release[]>;
  columns: ReleaseColumn[];
  empty: string;
  pollIntervalMs?: number;
}) {
  const api = useApi(fleetApiRef);
  const classes = useTableStyles();
  const { load, columns } = props;
  const { value, error, loading } = usePolling(() => load(api), [api, load], {
    intervalMs: props.pollIntervalMs,
    signals: {
      channels: [fleetSignalChannels.releases, fleetSignalChannels.deployments],
    },
  });

  let content;
  if (loading && !value) {
    content = <Progress />;
  } else if (error && !value) {
    content = <ResponseErrorPanel error={error} />;
  } else if (!value || value.length === 0) {
    content = <Typography variant="body2">{props.empty}</Typography>;
  } else {
    content = (
      <Box className={classes.scroll}>
        <Table size="small" aria-label={props.title} className={classes.table}>
          <TableHead>
            <TableRow>
              {columns.map(c => (
                <TableCell key={c.heading}>{c.heading}</TableCell>
              ))}
            </TableRow>
          </TableHead>
          <TableBody>
            {value.map(r => (
              <TableRow key={r.id} data-release={r.id}>
                {columns.map(c => (
                  <TableCell
                    key={c.heading}
                    className={c.nowrap ? classes.nowrap : undefined}
                  >
                    {c.cell(r)}
                  </TableCell>
                ))}
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </Box>
    );
  }

  return (
    <Grid item xs={12} md={6}>
      <InfoCard title={props.title}>{content}</InfoCard>
    </Grid>
  );
}
