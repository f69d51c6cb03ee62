import {
  InfoCard,
  Progress,
  ResponseErrorPanel,
} from '@backstage/core-components';
import { useApi } from '@backstage/core-plugin-api';
import type { Application } from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import Button from '@material-ui/core/Button';
import Grid from '@material-ui/core/Grid';
import Table from '@material-ui/core/Table';
import TableBody from '@material-ui/core/TableBody';
import TableCell from '@material-ui/core/TableCell';
import TableHead from '@material-ui/core/TableHead';
import TableRow from '@material-ui/core/TableRow';
import Typography from '@material-ui/core/Typography';
import { useMemo, useState } from 'react';
import { fleetApiRef } from '../../api';
import { usePolling } from '../../hooks/usePolling';
import { fleetSignalChannels, imageVersion } from '@cnp/plugin-fleet-common';
import { SyncStatusChip } from '../StatusChip';
import { EntityName } from '../EntityName';

/** How many applications are shown at first, and how many more each "Show more" adds. */
export const APPLICATIONS_PAGE_SIZE = 25;

/** One application's row: its fleet summary and, per cluster, the version and sync status. */
function ApplicationRow(props: {
  application: Application;
  pollIntervalMs?: number;
}) {
  const { application } = props;
  const api = useApi(fleetApiRef);
  const { value, error } = usePolling(
    () => api.getApplicationStatus(application.id),
    [api, application.id],
    {
      intervalMs: props.pollIntervalMs,
      signals: {
        channels: [fleetSignalChannels.deploymentsOf(application.entityRef)],
      },
    },
  );
  let summary;
  if (value) summary = value.summary;
  else if (error) summary = `Could not load its status: ${error.message}`;
  else summary = 'Loading…';
  return (
    <TableRow data-application={application.id}>
      <TableCell>
        <EntityName entityRef={application.entityRef} />
      </TableCell>
      <TableCell>
        <Typography variant="body2">{summary}</Typography>
      </TableCell>
      <TableCell>
        {value && value.clusters.length === 0 && (
          <Typography variant="body2">Not deployed anywhere</Typography>
        )}
        {value && value.clusters.length > 0 && (
          <Box
            component="ul"
            aria-label={`Versions of ${application.entityRef}`}
            p={0}
            m={0}
            style={{ listStyle: 'none' }}
          >
            {value.clusters.map(c => (
              <Box
                component="li"
                key={c.cluster}
                display="flex"
                alignItems="center"
                style={{ gap: 6 }}
                data-cluster={c.cluster}
              >
                <span>{c.cluster}:</span>
                <code>{c.image ? imageVersion(c.image) : 'no image'}</code>
                <SyncStatusChip status={c.syncStatus} />
                {!c.placed && (
                  <Typography variant="caption">no longer placed</Typography>
                )}
              </Box>
            ))}
          </Box>
        )}
      </TableCell>
    </TableRow>
  );
}

/**
 * The fleet page's applications, as an item of its grid: each with its summary line ("3 of 4
 * SYNCED; 1.4.2 on 3 clusters, 1.4.1 on 1") and the version and sync status on each cluster. Shows
 * the first {@link APPLICATIONS_PAGE_SIZE}, and more on demand.
 */
export function FleetApplicationsCard(props: { pollIntervalMs?: number }) {
  const api = useApi(fleetApiRef);
  const [limit, setLimit] = useState(APPLICATIONS_PAGE_SIZE);
  const { value, error, loading } = usePolling(
    () => api.listApplications(),
    [api],
    {
      intervalMs: props.pollIntervalMs,
      // A new application shows with its first deployment (an event from nothing).
      signals: {
        channels: [fleetSignalChannels.deployments],
        accepts: message => message.changes.some(c => c.from === null),
      },
    },
  );
  const sorted = useMemo(
    () =>
      [...(value ?? [])].sort((a, b) => a.entityRef.localeCompare(b.entityRef)),
    [value],
  );

  let content;
  if (loading && !value) {
    content = <Progress />;
  } else if (error && !value) {
    content = <ResponseErrorPanel error={error} />;
  } else if (sorted.length === 0) {
    content = (
      <Typography variant="body2">No applications in Fleet yet.</Typography>
    );
  } else {
    const left = sorted.length - limit;
    content = (
      <>
        <Table size="small" aria-label="Applications">
          <TableHead>
            <TableRow>
              <TableCell>Application</TableCell>
              <TableCell>Summary</TableCell>
              <TableCell>Version per cluster</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {sorted.slice(0, limit).map(a => (
              <ApplicationRow
                key={a.id}
                application={a}
                pollIntervalMs={props.pollIntervalMs}
              />
            ))}
          </TableBody>
        </Table>
        {left > 0 && (
          <Box mt={1}>
            <Button
              size="small"
              onClick={() => setLimit(l => l + APPLICATIONS_PAGE_SIZE)}
            >
              Show {Math.min(left, APPLICATIONS_PAGE_SIZE)} more ({left} not
              shown)
            </Button>
          </Box>
        )}
      </>
    );
  }

  return (
    <Grid item xs={12}>
      <InfoCard title="Applications">{content}</InfoCard>
    </Grid>
  );
}
