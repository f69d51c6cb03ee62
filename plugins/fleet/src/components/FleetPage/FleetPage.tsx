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
import {
  CLUSTER_STATUSES,
  type Cluster,
  type ClusterStatus,
} from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import Button from '@material-ui/core/Button';
import Grid from '@material-ui/core/Grid';
import MenuItem from '@material-ui/core/MenuItem';
import Table from '@material-ui/core/Table';
import TableBody from '@material-ui/core/TableBody';
import TableCell from '@material-ui/core/TableCell';
import TableHead from '@material-ui/core/TableHead';
import TablePagination from '@material-ui/core/TablePagination';
import TableRow from '@material-ui/core/TableRow';
import TextField from '@material-ui/core/TextField';
import Typography from '@material-ui/core/Typography';
import Alert from '@material-ui/lab/Alert';
import { memo, useEffect, useMemo, useRef, useState } from 'react';
import { apiErrorMessage, fleetApiRef } from '../../api';
import { usePolling } from '../../hooks/usePolling';
import { EventList } from '../EventList';
import { RelativeTime } from '../RelativeTime';
import { ClusterStatusChip } from '../StatusChip';
import {
  filterAndSortClusters,
  labelText,
  reuseUnchanged,
} from './clusterList';

const ROWS_PER_PAGE_OPTIONS = [25, 50, 100];
const EMPTY: readonly Cluster[] = [];
const formatCount = (n: number) => n.toLocaleString('en-US');

/**
 * The polled clusters, keeping the objects of the previous poll for every cluster that did not
 * change (and the previous array when none did), so that memoized lists and rows stay put.
 */
function useStableClusters(
  next: readonly Cluster[] | undefined,
): readonly Cluster[] {
  const previous = useRef<readonly Cluster[]>(EMPTY);
  return useMemo(() => {
    previous.current = reuseUnchanged(previous.current, next ?? EMPTY);
    return previous.current;
  }, [next]);
}

/**
 * One row of the clusters table. It renders again only when its cluster changed, or when `minute`
 * ticks (to move "2 minutes ago" on).
 */
/** Short values stay on one line; a long reason wraps instead of squeezing them. */
const noWrap = { whiteSpace: 'nowrap' } as const;
const reasonCell = {
  minWidth: 220,
  maxWidth: 420,
  overflowWrap: 'anywhere',
} as const;

function ClusterRowView(props: { cluster: Cluster; minute: number }) {
  const c = props.cluster;
  return (
    <TableRow data-cluster={c.name}>
      <TableCell style={noWrap}>{c.name}</TableCell>
      <TableCell>
        <ClusterStatusChip status={c.status} reason={c.statusReason} />
      </TableCell>
      <TableCell style={reasonCell}>{c.statusReason}</TableCell>
      <TableCell>
        <code>{c.endpoint}</code>
      </TableCell>
      <TableCell style={noWrap}>
        <RelativeTime value={c.lastProbeAt} />
      </TableCell>
      <TableCell style={noWrap}>{c.consecutiveFailures}</TableCell>
      <TableCell style={noWrap}>{c.serverVersion ?? '—'}</TableCell>
      <TableCell>{labelText(c.labels).join(', ') || '—'}</TableCell>
    </TableRow>
  );
}
const ClusterRow = memo(ClusterRowView);

/**
 * The fleet at a glance: counts, the mass-outage warning, every cluster (paginated, with a status
 * filter and a name or `key=value` label filter), and the latest status changes. Refreshes on its
 * own, staying on the page shown.
 *
 * @public
 */
export function FleetPage(props: { pollIntervalMs?: number }) {
  const api = useApi(fleetApiRef);
  const [filter, setFilter] = useState<ClusterStatus | 'ALL'>('ALL');
  const [query, setQuery] = useState('');
  const [page, setPage] = useState(0);
  const [rowsPerPage, setRowsPerPage] = useState(ROWS_PER_PAGE_OPTIONS[0]);
  const [running, setRunning] = useState(false);
  const [runMessage, setRunMessage] = useState<{
    severity: 'success' | 'error';
    text: string;
  }>();
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

  const clusters = useStableClusters(value?.clusters);
  const rows = useMemo(
    () => filterAndSortClusters(clusters, query),
    [clusters, query],
  );
  const lastPage = Math.max(0, Math.ceil(rows.length / rowsPerPage) - 1);
  const currentPage = Math.min(page, lastPage);
  const pageRows = useMemo(
    () =>
      rows.slice(currentPage * rowsPerPage, (currentPage + 1) * rowsPerPage),
    [rows, currentPage, rowsPerPage],
  );
  // A poll that brings fewer clusters moves back to the last page that still exists.
  const hasValue = value !== undefined;
  useEffect(() => {
    if (hasValue && page > lastPage) setPage(lastPage);
  }, [hasValue, page, lastPage]);
  const minute = Math.floor(Date.now() / 60_000);

  const renderClusters = (total: number) => {
    if (clusters.length === 0) {
      return (
        <Typography variant="body2">
          {filter === 'ALL'
            ? 'No clusters yet: point fleet.discovery at your kubeconfigs.'
            : `No ${filter} clusters.`}
        </Typography>
      );
    }
    const count = (
      <Typography variant="body2" role="status" aria-label="Clusters shown">
        {formatCount(rows.length)} of {formatCount(total)} clusters
      </Typography>
    );
    if (rows.length === 0) {
      return (
        <>
          {count}
          <Typography variant="body2">
            No clusters match “{query.trim()}”.
          </Typography>
        </>
      );
    }
    return (
      <>
        {count}
        <Table size="small" aria-label="Clusters">
          <TableHead>
            <TableRow>
              <TableCell style={noWrap}>Name</TableCell>
              <TableCell>Status</TableCell>
              <TableCell>Reason</TableCell>
              <TableCell>Endpoint</TableCell>
              <TableCell style={noWrap}>Last probe</TableCell>
              <TableCell style={noWrap}>Failures</TableCell>
              <TableCell style={noWrap}>Version</TableCell>
              <TableCell style={noWrap}>Labels</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {pageRows.map(c => (
              <ClusterRow key={c.name} cluster={c} minute={minute} />
            ))}
          </TableBody>
        </Table>
        <TablePagination
          component="div"
          count={rows.length}
          page={currentPage}
          rowsPerPage={rowsPerPage}
          rowsPerPageOptions={ROWS_PER_PAGE_OPTIONS}
          onPageChange={(_, p) => setPage(p)}
          onRowsPerPageChange={e => {
            setRowsPerPage(parseInt(e.target.value, 10));
            setPage(0);
          }}
        />
      </>
    );
  };

  /** The table once there is an answer; meanwhile the spinner or the error, inside the card. */
  const clustersCardContent = () => {
    if (value) {
      return renderClusters(
        // With a status filter, the count is out of the whole fleet.
        filter === 'ALL'
          ? clusters.length
          : Math.max(value.summary.clusters.total, clusters.length),
      );
    }
    if (error) return <ResponseErrorPanel error={error} />;
    return loading ? <Progress /> : null;
  };

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
      <Header
        title="Fleet"
        subtitle="Clusters, their health and what runs on them"
      />
      <Content>
        <ContentHeader title="Clusters">
          <Button
            variant="outlined"
            color="primary"
            onClick={runNow}
            disabled={running}
          >
            {running ? 'Running health check…' : 'Run health check'}
          </Button>
        </ContentHeader>
        {runMessage && (
          <Box mb={2}>
            <Alert severity={runMessage.severity}>{runMessage.text}</Alert>
          </Box>
        )}
        {/* The clusters card, with its filters, stays up while a filtered fetch loads or fails. */}
        <Grid container spacing={3}>
          {value && value.summary.massOutage.active && (
            <Grid item xs={12}>
              <WarningPanel
                severity="error"
                title="Mass outage suspected: deployment cascades are held"
                defaultExpanded
              >
                {value.summary.massOutage.message} Clusters:{' '}
                {value.summary.massOutage.clusters.join(', ')}.
              </WarningPanel>
            </Grid>
          )}
          {value && (
            <>
              <Grid item xs={12} md={6}>
                <InfoCard title="Clusters">
                  <Box
                    display="flex"
                    style={{ gap: 16 }}
                    aria-label="Cluster counts"
                  >
                    {CLUSTER_STATUSES.map(s => (
                      <Box
                        key={s}
                        display="flex"
                        alignItems="center"
                        style={{ gap: 6 }}
                      >
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
            </>
          )}
          <Grid item xs={12}>
            <InfoCard
              title="All clusters"
              action={
                <Box
                  display="flex"
                  flexWrap="wrap"
                  style={{ gap: 16, margin: 16 }}
                >
                  <TextField
                    type="search"
                    size="small"
                    label="Filter"
                    placeholder="name or key=value"
                    value={query}
                    onChange={e => {
                      setQuery(e.target.value);
                      setPage(0);
                    }}
                    style={{ minWidth: 220 }}
                    inputProps={{ 'aria-label': 'Name or label filter' }}
                  />
                  <TextField
                    select
                    size="small"
                    label="Status"
                    value={filter}
                    onChange={e => {
                      setFilter(e.target.value as ClusterStatus | 'ALL');
                      setPage(0);
                    }}
                    style={{ minWidth: 160 }}
                    inputProps={{ 'aria-label': 'Status filter' }}
                  >
                    <MenuItem value="ALL">All</MenuItem>
                    {CLUSTER_STATUSES.map(s => (
                      <MenuItem key={s} value={s}>
                        {s}
                      </MenuItem>
                    ))}
                  </TextField>
                </Box>
              }
            >
              {clustersCardContent()}
            </InfoCard>
          </Grid>
          {value && (
            <Grid item xs={12}>
              <InfoCard title="Recent events">
                <EventList events={value.events} showSubject />
              </InfoCard>
            </Grid>
          )}
        </Grid>
      </Content>
    </Page>
  );
}
