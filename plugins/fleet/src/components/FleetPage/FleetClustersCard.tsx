import {
  InfoCard,
  Progress,
  ResponseErrorPanel,
} from '@backstage/core-components';
import {
  CLUSTER_STATUSES,
  type Cluster,
  type ClusterStatus,
} from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import Grid from '@material-ui/core/Grid';
import MenuItem from '@material-ui/core/MenuItem';
import Table from '@material-ui/core/Table';
import TableBody from '@material-ui/core/TableBody';
import TableCell from '@material-ui/core/TableCell';
import TableHead from '@material-ui/core/TableHead';
import TablePagination from '@material-ui/core/TablePagination';
import TableRow from '@material-ui/core/TableRow';
import Tooltip from '@material-ui/core/Tooltip';
import TextField from '@material-ui/core/TextField';
import Typography from '@material-ui/core/Typography';
import { memo, useEffect, useMemo, useRef, useState } from 'react';
import { RelativeTime } from '../RelativeTime';
import { ClusterStatusChip, ReasonText } from '../StatusChip';
import {
  filterAndSortClusters,
  labelText,
  reuseUnchanged,
} from './clusterList';
import { ClusterLink } from '../ClusterLink';

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

/** Short values stay on one line; a long reason wraps instead of squeezing them. */
const noWrap = { whiteSpace: 'nowrap' } as const;
const reasonCell = {
  minWidth: 220,
  maxWidth: 420,
  overflowWrap: 'break-word',
} as const;

/**
 * An API server's URL in a narrow column without breaking it mid-word: its host (`https://` left
 * out, the whole URL in the tooltip) and, below, its path when it has one, each on one line.
 */
function Endpoint(props: { url: string }) {
  let host = props.url;
  let rest = '';
  try {
    const url = new URL(props.url);
    host = url.host;
    rest = `${url.pathname === '/' ? '' : url.pathname}${url.search}`;
  } catch {
    // not a URL: shown as it is
  }
  return (
    <Tooltip title={props.url}>
      <span aria-label={props.url}>
        <code style={noWrap}>{host}</code>
        {rest && (
          <>
            <br />
            <code style={noWrap}>{rest}</code>
          </>
        )}
      </span>
    </Tooltip>
  );
}

/**
 * One row of the clusters table. It renders again only when its cluster changed, or when `minute`
 * ticks (to move "2 minutes ago" on).
 */
function ClusterRowView(props: { cluster: Cluster; minute: number }) {
  const c = props.cluster;
  return (
    <TableRow data-cluster={c.name}>
      <TableCell style={noWrap}>
        <ClusterLink name={c.name} />
      </TableCell>
      <TableCell>
        <ClusterStatusChip
          status={c.status}
          reason={c.statusReason}
          consecutiveFailures={c.consecutiveFailures}
        />
      </TableCell>
      <TableCell style={reasonCell}>
        {c.statusReason && (
          <ReasonText reason={c.statusReason} variant="body2" />
        )}
      </TableCell>
      <TableCell>
        <Endpoint url={c.endpoint} />
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

/** A status to fetch the clusters of, or every cluster. */
export type ClusterStatusFilter = ClusterStatus | 'ALL';

/**
 * The "All clusters" card of the fleet page, as an item of its grid: the clusters paginated, with
 * a name or `key=value` label filter (applied here) and a status filter (applied by the fetch, so
 * it is the caller's). The filters stay up while a filtered fetch loads or fails; the table stays on
 * the page shown across polls, moving back to the last page that still exists when it shrinks.
 */
export function FleetClustersCard(props: {
  /** The clusters of the current answer; undefined until there is one for `status`. */
  clusters: readonly Cluster[] | undefined;
  /** How many clusters the whole fleet has: a status filter counts its clusters out of this. */
  fleetSize: number;
  status: ClusterStatusFilter;
  onStatusChange: (status: ClusterStatusFilter) => void;
  /** Why the fetch failed, shown in place of the table while there is no answer. */
  error?: Error;
  loading: boolean;
}) {
  const { status, onStatusChange } = props;
  const [query, setQuery] = useState('');
  const [page, setPage] = useState(0);
  const [rowsPerPage, setRowsPerPage] = useState(ROWS_PER_PAGE_OPTIONS[0]);

  const clusters = useStableClusters(props.clusters);
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
  const hasValue = props.clusters !== undefined;
  useEffect(() => {
    if (hasValue && page > lastPage) setPage(lastPage);
  }, [hasValue, page, lastPage]);
  const minute = Math.floor(Date.now() / 60_000);

  const renderClusters = (total: number) => {
    if (clusters.length === 0) {
      return (
        <Typography variant="body2">
          {status === 'ALL'
            ? 'No clusters yet: point fleet.discovery at your kubeconfigs.'
            : `No ${status} clusters.`}
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
  const content = () => {
    if (props.clusters) {
      return renderClusters(
        // With a status filter, the count is out of the whole fleet.
        status === 'ALL'
          ? clusters.length
          : Math.max(props.fleetSize, clusters.length),
      );
    }
    if (props.error) return <ResponseErrorPanel error={props.error} />;
    return props.loading ? <Progress /> : null;
  };

  return (
    <Grid item xs={12}>
      <InfoCard
        title="All clusters"
        action={
          <Box display="flex" flexWrap="wrap" style={{ gap: 16, margin: 16 }}>
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
              value={status}
              onChange={e => {
                onStatusChange(e.target.value as ClusterStatusFilter);
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
        {content()}
      </InfoCard>
    </Grid>
  );
}
