import { entityRouteRef } from '@backstage/plugin-catalog-react';
import { renderInTestApp } from '@backstage/test-utils';
import type { ClusterDeploymentCounts } from '@cnp/plugin-fleet-common';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { cluster } from '../../testUtils/fixtures';
import { FleetMap } from './FleetMap';
import {
  defaultGrouping,
  groupableKeys,
  labelKeys,
  layoutFleetMap,
  MAX_GROUPS,
} from './fleetMap';

const clusters = [
  cluster('eu-prod-1', 'ONLINE', { labels: { region: 'eu', env: 'prod' } }),
  cluster('eu-prod-2', 'OFFLINE', { labels: { region: 'eu', env: 'prod' } }),
  cluster('eu-staging', 'ONLINE', {
    labels: { region: 'eu', env: 'staging' },
    consecutiveFailures: 1,
    statusReason: 'PROBE_FAILED: connect ECONNREFUSED',
  }),
  cluster('us-prod', 'UNKNOWN', { labels: { region: 'us', env: 'prod' } }),
  cluster('lab', 'ONLINE', { labels: { env: 'dev' } }),
];

const zero = {
  PENDING: 0,
  PROGRESSING: 0,
  DEPLOYED: 0,
  DEGRADED: 0,
  FAILED: 0,
  REMOVING: 0,
};
const counts: ClusterDeploymentCounts[] = [
  {
    cluster: 'eu-prod-1',
    total: 4,
    byStatus: { ...zero, DEPLOYED: 2, DEGRADED: 1, FAILED: 1 },
  },
  { cluster: 'eu-prod-2', total: 1, byStatus: { ...zero, DEPLOYED: 1 } },
];

describe('fleet map layout', () => {
  it('groups by region × env where the clusters have them, "no <key>" last', () => {
    const keys = labelKeys(clusters);
    expect(keys).toEqual(['env', 'region']);
    const grouping = defaultGrouping(keys);
    expect(grouping).toEqual({ rows: 'region', columns: 'env' });
    const layout = layoutFleetMap(clusters, counts, grouping);
    expect(layout.rows).toEqual(['eu', 'us', 'no region']);
    expect(layout.columns).toEqual(['dev', 'prod', 'staging']);
    const cell = (row: string, column: string) =>
      layout.cells
        .find(c => c.row === row && c.column === column)!
        .tiles.map(t => t.name);
    expect(cell('eu', 'prod')).toEqual(['eu-prod-1', 'eu-prod-2']);
    expect(cell('no region', 'dev')).toEqual(['lab']);
    expect(cell('us', 'staging')).toEqual([]);
  });

  it('never groups by default by a key unique to each cluster, and caps rows with an "other values" group', () => {
    const many = Array.from({ length: 60 }, (_, i) =>
      cluster(`c-${String(i).padStart(2, '0')}`, 'ONLINE', {
        labels: { id: `id-${i}`, env: i % 2 ? 'prod' : 'dev' },
      }),
    );
    const keys = labelKeys(many);
    expect(groupableKeys(many, keys)).toEqual(['env']);
    expect(defaultGrouping(groupableKeys(many, keys))).toEqual({
      rows: 'env',
      columns: undefined,
    });
    // Chosen by hand, the unique key makes at most MAX_GROUPS rows, every cluster in one.
    const layout = layoutFleetMap(many, [], { rows: 'id' });
    expect(layout.rows).toHaveLength(MAX_GROUPS);
    expect(layout.rows.at(-1)).toBe(`${60 - (MAX_GROUPS - 1)} other values`);
    expect(layout.cells.flatMap(c => c.tiles)).toHaveLength(60);
  });

  it('says each state in words, a failing probe on an ONLINE cluster included, and counts what is not DEPLOYED', () => {
    const tiles = layoutFleetMap(clusters, counts, {}).cells[0].tiles;
    expect(
      Object.fromEntries(
        tiles.map(t => [t.name, [t.stateText, t.deployments, t.problems]]),
      ),
    ).toEqual({
      'eu-prod-1': ['Online', 4, ['1 failed', '1 degraded']],
      'eu-prod-2': ['Offline', 1, []],
      'eu-staging': ['Online, probe failing', 0, []],
      lab: ['Online', 0, []],
      'us-prod': ['Unknown', 0, []],
    });
    expect(tiles.find(t => t.name === 'eu-staging')!.reason).toBe(
      'PROBE_FAILED: connect ECONNREFUSED',
    );
  });
});

describe('FleetMap', () => {
  const render = () =>
    renderInTestApp(<FleetMap clusters={clusters} counts={counts} />, {
      mountedRoutes: { '/catalog/:namespace/:kind/:name': entityRouteRef },
    });

  it('shows a tile per cluster in its cell, linked to its page, and regroups on demand', async () => {
    await render();
    const map = screen.getByRole('table', { name: 'Fleet map' });
    const euProd = within(map).getByRole('cell', { name: 'eu, prod' });
    const tile = within(euProd).getByRole('listitem', {
      name: 'eu-prod-1: Online, 4 deployments',
    });
    expect(tile).toHaveTextContent('4 deployments · 1 failed · 1 degraded');
    expect(
      within(tile).getByRole('link', { name: 'eu-prod-1' }),
    ).toHaveAttribute('href', '/catalog/default/resource/eu-prod-1');
    expect(
      within(map).getByRole('listitem', {
        name: 'eu-staging: Online, probe failing, 0 deployments',
      }),
    ).toHaveAttribute('data-state', 'failing');

    // Rows by env, no columns: one column of every cluster per env.
    await userEvent.selectOptions(
      screen.getByRole('combobox', { name: 'Rows by' }),
      'env',
    );
    await userEvent.selectOptions(
      screen.getByRole('combobox', { name: 'Columns by' }),
      '',
    );
    const prod = screen.getByRole('cell', { name: 'prod, All clusters' });
    expect(
      within(prod)
        .getAllByRole('listitem')
        .map(t => t.getAttribute('data-cluster')),
    ).toEqual(['eu-prod-1', 'eu-prod-2', 'us-prod']);
  });

  it('says so when there is no cluster', async () => {
    await renderInTestApp(<FleetMap clusters={[]} counts={[]} />, {
      mountedRoutes: { '/catalog/:namespace/:kind/:name': entityRouteRef },
    });
    expect(screen.getByText('No cluster to show.')).toBeInTheDocument();
  });
});
