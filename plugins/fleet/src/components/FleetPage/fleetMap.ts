import type {
  Cluster,
  ClusterDeploymentCounts,
  DeploymentStatus,
} from '@cnp/plugin-fleet-common';

/** What a tile of the map says of a cluster: its state in words and its deployments. */
export interface MapTile {
  name: string;
  state: 'online' | 'failing' | 'offline' | 'unknown';
  /** "Online", "Online, probe failing", "Offline", "Unknown". */
  stateText: string;
  /** Why, when the cluster is not plainly online (its status reason). */
  reason?: string;
  deployments: number;
  /** The deployments not DEPLOYED, by status, the worst first: "1 failed", "2 degraded". */
  problems: string[];
}

/** One cell of the map: the clusters whose labels have the row's and the column's values. */
export interface MapCell {
  row: string;
  column: string;
  tiles: MapTile[];
}

export interface FleetMapLayout {
  rows: string[];
  columns: string[];
  cells: MapCell[];
}

/** At most this many rows or columns: the values past them share one "other values" group. */
export const MAX_GROUPS = 24;

/** The label keys of the clusters, the most common first, then by name. */
export function labelKeys(clusters: Cluster[]): string[] {
  const counts = new Map<string, number>();
  for (const c of clusters)
    for (const key of Object.keys(c.labels ?? {}))
      counts.set(key, (counts.get(key) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([key]) => key);
}

/**
 * The keys the map may group by at first: those with at most MAX_GROUPS values (a key unique to
 * each cluster, such as an id, would make a row per cluster).
 */
export function groupableKeys(clusters: Cluster[], keys: string[]): string[] {
  return keys.filter(
    key =>
      new Set(clusters.map(c => c.labels?.[key]).filter(v => v !== undefined))
        .size <= MAX_GROUPS,
  );
}

/**
 * The keys the map groups by at first: `region` and `env` where the clusters have them (the
 * usual pair), else the two most common keys; none when the clusters have no labels.
 */
export function defaultGrouping(keys: string[]): {
  rows?: string;
  columns?: string;
} {
  const pick = (preferred: string[], except?: string) =>
    preferred.find(k => keys.includes(k) && k !== except) ??
    keys.find(k => k !== except);
  const rows = pick(['region', 'zone', 'location']);
  const columns = pick(['env', 'environment', 'stage', 'tier'], rows);
  return { rows, columns };
}

/** The value a grouping key gives a cluster, or the words for having none. */
function groupOf(cluster: Cluster, key: string | undefined): string {
  if (!key) return 'All clusters';
  return cluster.labels?.[key] ?? `no ${key}`;
}

const PROBLEM_ORDER: Array<[DeploymentStatus, string]> = [
  ['FAILED', 'failed'],
  ['DEGRADED', 'degraded'],
  ['PROGRESSING', 'progressing'],
  ['PENDING', 'pending'],
  ['REMOVING', 'being removed'],
];

/** A cluster's tile: its state in words (a failing probe shows on an ONLINE one) and counts. */
export function tileOf(
  cluster: Cluster,
  counts: ClusterDeploymentCounts | undefined,
): MapTile {
  const failing =
    cluster.status === 'ONLINE' && (cluster.consecutiveFailures ?? 0) > 0;
  const byStatus: Record<string, MapTile['state']> = {
    ONLINE: 'online',
    OFFLINE: 'offline',
  };
  const state: MapTile['state'] = failing
    ? 'failing'
    : byStatus[cluster.status] ?? 'unknown';
  const stateText = {
    online: 'Online',
    failing: 'Online, probe failing',
    offline: 'Offline',
    unknown: 'Unknown',
  }[state];
  const problems = PROBLEM_ORDER.filter(
    ([status]) => (counts?.byStatus[status] ?? 0) > 0,
  ).map(([status, words]) => `${counts!.byStatus[status]} ${words}`);
  return {
    name: cluster.name,
    state,
    stateText,
    reason: state === 'online' ? undefined : cluster.statusReason ?? undefined,
    deployments: counts?.total ?? 0,
    problems,
  };
}

/** Sorts group values by name, the "no <key>" group last. */
function groupOrder(values: Iterable<string>, key: string | undefined) {
  const none = key ? `no ${key}` : undefined;
  return [...new Set(values)].sort(
    (a, b) => Number(a === none) - Number(b === none) || a.localeCompare(b),
  );
}

/** The first MAX_GROUPS values as they are; the rest in one group that says how many. */
function capGroups(order: string[]): {
  shown: string[];
  groupOf: (value: string) => string;
} {
  if (order.length <= MAX_GROUPS) return { shown: order, groupOf: v => v };
  const kept = new Set(order.slice(0, MAX_GROUPS - 1));
  const other = `${order.length - kept.size} other values`;
  return {
    shown: [...kept, other],
    groupOf: v => (kept.has(v) ? v : other),
  };
}

/**
 * The clusters laid out in a grid: a row per value of `rows`, a column per value of `columns`
 * (a single row or column without a key), each cell's tiles by cluster name.
 */
export function layoutFleetMap(
  clusters: Cluster[],
  counts: ClusterDeploymentCounts[],
  keys: { rows?: string; columns?: string },
): FleetMapLayout {
  const countsOf = new Map(counts.map(c => [c.cluster, c]));
  const rowGroups = capGroups(
    groupOrder(
      clusters.map(c => groupOf(c, keys.rows)),
      keys.rows,
    ),
  );
  const columnGroups = capGroups(
    groupOrder(
      clusters.map(c => groupOf(c, keys.columns)),
      keys.columns,
    ),
  );
  const rows = rowGroups.shown;
  const columns = columnGroups.shown;
  const byCell = new Map<string, Cluster[]>();
  const cellKey = (row: string, column: string) => `${row}\u0000${column}`;
  for (const c of clusters) {
    const key = cellKey(
      rowGroups.groupOf(groupOf(c, keys.rows)),
      columnGroups.groupOf(groupOf(c, keys.columns)),
    );
    const cell = byCell.get(key);
    if (cell) cell.push(c);
    else byCell.set(key, [c]);
  }
  const cells: MapCell[] = rows.flatMap(row =>
    columns.map(column => ({
      row,
      column,
      tiles: (byCell.get(cellKey(row, column)) ?? [])
        .sort((a, b) => a.name.localeCompare(b.name))
        .map(c => tileOf(c, countsOf.get(c.name))),
    })),
  );
  return { rows, columns, cells };
}
