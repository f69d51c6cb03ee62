import type {
  Cluster,
  ClusterDeploymentCounts,
} from '@cnp/plugin-fleet-common';
import { InfoCard } from '@backstage/core-components';
import { configApiRef, useApi, useRouteRef } from '@backstage/core-plugin-api';
import { entityRouteRef } from '@backstage/plugin-catalog-react';
import Box from '@material-ui/core/Box';
import Grid from '@material-ui/core/Grid';
import Link from '@material-ui/core/Link';
import NativeSelect from '@material-ui/core/NativeSelect';
import Typography from '@material-ui/core/Typography';
import { makeStyles } from '@material-ui/core/styles';
import CheckCircleIcon from '@material-ui/icons/CheckCircle';
import ErrorIcon from '@material-ui/icons/Error';
import HelpIcon from '@material-ui/icons/Help';
import WarningIcon from '@material-ui/icons/Warning';
import { memo, useMemo, useState } from 'react';
import { Link as RouterLink } from 'react-router-dom';
import {
  defaultGrouping,
  groupableKeys,
  labelKeys,
  layoutFleetMap,
  type FleetMapLayout,
  type MapTile,
} from './fleetMap';

/** At most this many tiles in a cell; the rest are counted ("and 12 more"). */
const TILES_PER_CELL = 48;

const useStyles = makeStyles(theme => {
  const edge = (colour: string) => ({ borderLeft: `6px solid ${colour}` });
  return {
    grid: { overflowX: 'auto' },
    table: { borderCollapse: 'separate', borderSpacing: theme.spacing(1) },
    head: { textAlign: 'left', verticalAlign: 'bottom', whiteSpace: 'nowrap' },
    rowHead: {
      textAlign: 'left',
      verticalAlign: 'top',
      whiteSpace: 'nowrap',
      paddingTop: theme.spacing(1),
    },
    cell: {
      verticalAlign: 'top',
      minWidth: 180,
      background: theme.palette.background.default,
      padding: theme.spacing(1),
      borderRadius: theme.shape.borderRadius,
    },
    tiles: { display: 'flex', flexWrap: 'wrap', gap: theme.spacing(1) },
    tile: {
      padding: theme.spacing(0.5, 1),
      background: theme.palette.background.paper,
      borderRadius: theme.shape.borderRadius,
      minWidth: 140,
      boxShadow: theme.shadows[1],
    },
    online: edge(theme.palette.status.ok),
    failing: edge(theme.palette.status.warning),
    offline: edge(theme.palette.status.error),
    unknown: edge(theme.palette.status.aborted),
    state: { display: 'flex', alignItems: 'center', gap: 4 },
    icon: { fontSize: 16 },
  };
});

const STATE_ICON = {
  online: CheckCircleIcon,
  failing: WarningIcon,
  offline: ErrorIcon,
  unknown: HelpIcon,
};

/**
 * A tile: the cluster's name linked to its catalog page (a plain link: a map of thousands of
 * clusters cannot ask the catalog for each one's title), its state and its deployments.
 */
const Tile = memo(function MapTileBox(props: { tile: MapTile; href: string }) {
  const classes = useStyles();
  const { tile } = props;
  const Icon = STATE_ICON[tile.state];
  const deployments =
    tile.deployments === 1 ? '1 deployment' : `${tile.deployments} deployments`;
  return (
    <Box
      className={`${classes.tile} ${classes[tile.state]}`}
      role="listitem"
      aria-label={`${tile.name}: ${tile.stateText}, ${deployments}`}
      data-cluster={tile.name}
      data-state={tile.state}
    >
      <Typography variant="body2">
        <Link component={RouterLink} to={props.href}>
          {tile.name}
        </Link>
      </Typography>
      <Typography
        variant="caption"
        className={classes.state}
        title={tile.reason}
      >
        <Icon className={classes.icon} />
        {tile.stateText}
      </Typography>
      <Typography variant="caption" color="textSecondary" component="div">
        {[deployments, ...tile.problems].join(' · ')}
      </Typography>
    </Box>
  );
});

function KeyChoice(props: {
  label: string;
  value: string | undefined;
  keys: string[];
  onChange: (key: string | undefined) => void;
}) {
  return (
    <Box display="inline-flex" alignItems="center" mr={2} style={{ gap: 4 }}>
      <Typography variant="body2" component="span">
        {props.label}
      </Typography>
      <NativeSelect
        value={props.value ?? ''}
        onChange={e => props.onChange(e.target.value || undefined)}
        inputProps={{ 'aria-label': props.label }}
      >
        <option value="">(none)</option>
        {props.keys.map(k => (
          <option key={k} value={k}>
            {k}
          </option>
        ))}
      </NativeSelect>
    </Box>
  );
}

/** The map's grid: a row per value of the rows' key, a cell per column, tiles in each. */
function MapGrid(props: {
  layout: FleetMapLayout;
  corner: string;
  hrefOf: (name: string) => string;
}) {
  const classes = useStyles();
  const { layout, corner, hrefOf } = props;
  const cellsByRow = useMemo(() => {
    const byRow = new Map<string, typeof layout.cells>();
    for (const cell of layout.cells) {
      const row = byRow.get(cell.row);
      if (row) row.push(cell);
      else byRow.set(cell.row, [cell]);
    }
    return byRow;
  }, [layout]);
  return (
    <Box className={classes.grid}>
      <table className={classes.table} aria-label="Fleet map">
        <thead>
          <tr>
            <th className={classes.head} scope="col">
              {corner}
            </th>
            {layout.columns.map(column => (
              <th key={column} className={classes.head} scope="col">
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {layout.rows.map(row => (
            <tr key={row}>
              <th className={classes.rowHead} scope="row">
                {row}
              </th>
              {(cellsByRow.get(row) ?? []).map(cell => (
                <td
                  key={cell.column}
                  className={classes.cell}
                  aria-label={`${row}, ${cell.column}`}
                >
                  <Box className={classes.tiles} role="list">
                    {cell.tiles.slice(0, TILES_PER_CELL).map(tile => (
                      <Tile
                        key={tile.name}
                        tile={tile}
                        href={hrefOf(tile.name)}
                      />
                    ))}
                  </Box>
                  {cell.tiles.length > TILES_PER_CELL && (
                    <Typography variant="caption">
                      and {cell.tiles.length - TILES_PER_CELL} more
                    </Typography>
                  )}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </Box>
  );
}

/**
 * The fleet as a map: its clusters grouped by two of their labels (rows and columns, `region`
 * × `env` where they have them), each a tile in its status colour with the status in words, its
 * deployments and those not DEPLOYED; a tile's name opens the cluster's page.
 */
export function FleetMap(props: {
  clusters: Cluster[] | undefined;
  counts: ClusterDeploymentCounts[] | undefined;
}) {
  // Clusters are the catalog's `Resource`s of their name, in `fleet.catalog.namespace`.
  const namespace =
    useApi(configApiRef).getOptionalString('fleet.catalog.namespace') ??
    'default';
  const entityRoute = useRouteRef(entityRouteRef);
  const hrefOf = (name: string) =>
    entityRoute({ kind: 'resource', namespace, name });
  const clusters = useMemo(() => props.clusters ?? [], [props.clusters]);
  const keys = useMemo(() => labelKeys(clusters), [clusters]);
  const [chosen, setChosen] = useState<{ rows?: string; columns?: string }>();
  const initial = useMemo(
    () => defaultGrouping(groupableKeys(clusters, keys)),
    [clusters, keys],
  );
  const grouping = chosen ?? initial;
  const corner =
    grouping.rows && grouping.columns
      ? `${grouping.rows} \\ ${grouping.columns}`
      : '';
  const layout = useMemo(
    () => layoutFleetMap(clusters, props.counts ?? [], grouping),
    [clusters, props.counts, grouping],
  );
  return (
    <Grid item xs={12}>
      <InfoCard
        title="Fleet map"
        subheader="Clusters by label, in their status"
      >
        <Box mb={1}>
          <KeyChoice
            label="Rows by"
            value={grouping.rows}
            keys={keys}
            onChange={rows => setChosen({ ...grouping, rows })}
          />
          <KeyChoice
            label="Columns by"
            value={grouping.columns}
            keys={keys}
            onChange={columns => setChosen({ ...grouping, columns })}
          />
        </Box>
        {clusters.length === 0 ? (
          <Typography color="textSecondary">No cluster to show.</Typography>
        ) : (
          <MapGrid layout={layout} corner={corner} hrefOf={hrefOf} />
        )}
      </InfoCard>
    </Grid>
  );
}
