import {
  Content,
  ContentHeader,
  Header,
  InfoCard,
  Page,
  Progress,
  ResponseErrorPanel,
  WarningPanel,
} from '@backstage/core-components';
import { useApi } from '@backstage/core-plugin-api';
import { CLUSTER_STATUSES, type ClusterStatus } from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import Button from '@material-ui/core/Button';
import Grid from '@material-ui/core/Grid';
import MenuItem from '@material-ui/core/MenuItem';
import Table from '@material-ui/core/Table';
import TableBody from '@material-ui/core/TableBody';
import TableCell from '@material-ui/core/TableCell';
import TableHead from '@material-ui/core/TableHead';
import TableRow from '@material-ui/core/TableRow';
import TextField from '@material-ui/core/TextField';
import Typography from '@material-ui/core/Typography';
import Alert from '@material-ui/lab/Alert';
import { useState } from 'react';
import { apiErrorMessage, fleetApiRef } from '../../api';
import { usePolling } from '../../hooks/usePolling';
import { EventList } from '../EventList';
import { RelativeTime } from '../RelativeTime';
import { ClusterStatusChip } from '../StatusChip';

/**
 * The fleet at a glance: counts, the mass-outage warning, every cluster with a status filter, and
 * the latest status changes. Refreshes on its own.
 *
 * @public
 */
export function FleetPage(props: { pollIntervalMs?: number }) {
  const api = useApi(fleetApiRef);
  const [filter, setFilter] = useState<ClusterStatus | 'ALL'>('ALL');
  const [running, setRunning] = useState(false);
  const [runMessage, setRunMessage] = useState<{ severity: 'success' | 'error'; text: string }>();
  const { value, error, loading, refresh } = usePolling(
    async () => {
      const [summary, clusters, events] = await Promise.all([
        api.getSummary(),
        api.listClusters(filter === 'ALL' ? undefined : { status: filter }),
        api.listRecentEvents({ limit: 20 }),
      ]);
      return { summary, clusters, events };
    },
    [api, filter],
    { intervalMs: props.pollIntervalMs },
  );

  const runNow = async () => {
    setRunning(true);
    setRunMessage(undefined);
    try {
      const cycle = await api.runHealthCycle();
      setRunMessage({
        severity: 'success',
        text: `Health cycle done in ${cycle.durationMs} ms: ${cycle.online} ONLINE, ${cycle.offline} OFFLINE, ${cycle.unknown} UNKNOWN`,
      });
      refresh();
    } catch (e) {
      setRunMessage({ severity: 'error', text: apiErrorMessage(e) });
    } finally {
      setRunning(false);
    }
  };

  return (
    <Page themeId="tool">
      <Header title="Fleet" subtitle="Clusters, their health and what runs on them" />
      <Content>
        <ContentHeader title="Clusters">
          <Button variant="outlined" color="primary" onClick={runNow} disabled={running}>
            {running ? 'Running health check…' : 'Run health check'}
          </Button>
        </ContentHeader>
        {runMessage && (
          <Box mb={2}>
            <Alert severity={runMessage.severity}>{runMessage.text}</Alert>
          </Box>
        )}
        {loading && !value && <Progress />}
        {error && !value && <ResponseErrorPanel error={error} />}
        {value && (
          <Grid container spacing={3}>
            {value.summary.massOutage.active && (
              <Grid item xs={12}>
                <WarningPanel severity="error" title="Mass outage suspected: deployment cascades are held" defaultExpanded>
                  {value.summary.massOutage.message} Clusters: {value.summary.massOutage.clusters.join(', ')}.
                </WarningPanel>
              </Grid>
            )}
            <Grid item xs={12} md={6}>
              <InfoCard title="Clusters">
                <Box display="flex" style={{ gap: 16 }} aria-label="Cluster counts">
                  {CLUSTER_STATUSES.map(s => (
                    <Box key={s} display="flex" alignItems="center" style={{ gap: 6 }}>
                      <ClusterStatusChip status={s} />
                      <Typography variant="h6" component="span">
                        {value.summary.clusters[s]}
                      </Typography>
                    </Box>
                  ))}
                </Box>
              </InfoCard>
            </Grid>
            <Grid item xs={12} md={6}>
              <InfoCard title="Deployments">
                <Typography variant="body2" aria-label="Deployment counts">
                  {value.summary.deployments.total} in all ·{' '}
                  {Object.entries(value.summary.deployments.byStatus)
                    .map(([s, n]) => `${s} ${n}`)
                    .join(' · ')}
                  <br />
                  {Object.entries(value.summary.deployments.bySyncStatus)
                    .map(([s, n]) => `${s.replace(/_/g, ' ')} ${n}`)
                    .join(' · ')}
                </Typography>
              </InfoCard>
            </Grid>
            <Grid item xs={12}>
              <InfoCard
                title="All clusters"
                action={
                  <TextField
                    select
                    size="small"
                    label="Status"
                    value={filter}
                    onChange={e => setFilter(e.target.value as ClusterStatus | 'ALL')}
                    style={{ minWidth: 160, margin: 16 }}
                    inputProps={{ 'aria-label': 'Status filter' }}
                  >
                    <MenuItem value="ALL">All</MenuItem>
                    {CLUSTER_STATUSES.map(s => (
                      <MenuItem key={s} value={s}>
                        {s}
                      </MenuItem>
                    ))}
                  </TextField>
                }
              >
                {value.clusters.length === 0 ? (
                  <Typography variant="body2">
                    {filter === 'ALL' ? 'No clusters yet: point fleet.discovery at your kubeconfigs.' : `No ${filter} clusters.`}
                  </Typography>
                ) : (
                  <Table size="small" aria-label="Clusters">
                    <TableHead>
                      <TableRow>
                        <TableCell>Name</TableCell>
                        <TableCell>Status</TableCell>
                        <TableCell>Reason</TableCell>
                        <TableCell>Endpoint</TableCell>
                        <TableCell>Last probe</TableCell>
                        <TableCell>Failures</TableCell>
                        <TableCell>Version</TableCell>
                        <TableCell>Labels</TableCell>
                      </TableRow>
                    </TableHead>
                    <TableBody>
                      {value.clusters.map(c => (
                        <TableRow key={c.name} data-cluster={c.name}>
                          <TableCell>{c.name}</TableCell>
                          <TableCell>
                            <ClusterStatusChip status={c.status} reason={c.statusReason} />
                          </TableCell>
                          <TableCell>{c.statusReason}</TableCell>
                          <TableCell>
                            <code>{c.endpoint}</code>
                          </TableCell>
                          <TableCell>
                            <RelativeTime value={c.lastProbeAt} />
                          </TableCell>
                          <TableCell>{c.consecutiveFailures}</TableCell>
                          <TableCell>{c.serverVersion ?? '—'}</TableCell>
                          <TableCell>
                            {Object.entries(c.labels)
                              .map(([k, v]) => `${k}=${v}`)
                              .join(', ') || '—'}
                          </TableCell>
                        </TableRow>
                      ))}
                    </TableBody>
                  </Table>
                )}
              </InfoCard>
            </Grid>
            <Grid item xs={12}>
              <InfoCard title="Recent events">
                <EventList events={value.events} showSubject />
              </InfoCard>
            </Grid>
          </Grid>
        )}
      </Content>
    </Page>
  );
}
