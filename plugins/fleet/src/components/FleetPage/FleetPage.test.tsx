import { entityRouteRef } from '@backstage/plugin-catalog-react';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { permissionApiRef } from '@backstage/plugin-permission-react';
import {
  mockApis,
  renderInTestApp,
  TestApiProvider,
} from '@backstage/test-utils';
import type { Cluster, ClusterStatus } from '@cnp/plugin-fleet-common';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { SWRConfig } from 'swr';
import { fleetApiRef } from '../../api';
import {
  cluster,
  manyClusters,
  mockFleetApi,
  summary,
} from '../../testUtils/fixtures';
import { FleetPage } from './FleetPage';
import type { ReactElement } from 'react';

/**
 * The page in the test app, with the catalog's entity pages mounted (events link to them), for a
 * user allowed everything unless the test's own providers say otherwise; with a fresh permission
 * cache: `usePermission` keeps answers in SWR's global cache, so an earlier test's ALLOW would
 * otherwise answer a later test's DENY.
 */
const renderPage = (ui: ReactElement) =>
  renderInTestApp(
    <TestApiProvider apis={[[permissionApiRef, mockApis.permission()]]}>
      <SWRConfig value={{ provider: () => new Map() }}>{ui}</SWRConfig>
    </TestApiProvider>,
    {
      mountedRoutes: { '/catalog/:namespace/:kind/:name': entityRouteRef },
    },
  );

/** A FleetApi over `all`, filtering by status as the backend does. */
function fleetOf(all: Cluster[]) {
  return mockFleetApi({
    listClusters: jest.fn(async (opts?: { status?: ClusterStatus }) =>
      all.filter(c => !opts?.status || c.status === opts.status),
    ),
    getSummary: jest.fn().mockResolvedValue({
      ...summary,
      clusters: { ...summary.clusters, total: all.length },
    }),
  });
}

/** The rows' clusters; `hidden: true` spares jsdom a style walk over the whole page per query. */
const shownClusters = () =>
  within(screen.getByRole('table', { name: 'Clusters', hidden: true }))
    .getAllByRole('row', { hidden: true })
    .slice(1)
    .map(r => r.getAttribute('data-cluster'));

describe('FleetPage', () => {
  it('shows counts, the clusters table with a status filter, and recent events', async () => {
    const api = mockFleetApi();
    await renderPage(
      <TestApiProvider apis={[[fleetApiRef, api]]}>
        <FleetPage />
      </TestApiProvider>,
    );
    const clusters = await screen.findByRole('table', { name: 'Clusters' });
    expect(within(clusters).getAllByRole('row')).toHaveLength(4);
    expect(screen.getByRole('list', { name: 'Events' })).toHaveTextContent(
      'cluster sim-2',
    );

    api.listClusters.mockResolvedValue([cluster('sim-2', 'OFFLINE')]);
    await userEvent.click(
      screen.getByRole('button', { name: 'Status filter' }),
    );
    await userEvent.click(
      await screen.findByRole('option', { name: 'OFFLINE' }),
    );
    expect(api.listClusters).toHaveBeenCalledWith({ status: 'OFFLINE' });
    // The reason in words (its code on hover), then the details.
    const table = await screen.findByRole('table', { name: 'Clusters' });
    await waitFor(() =>
      expect(within(table).getAllByRole('row')).toHaveLength(2),
    );
    const reason = within(table).getByText('Outage confirmed');
    expect(reason).toHaveAttribute('title', 'FAILURE_THRESHOLD_REACHED');
    expect(reason.parentElement).toHaveTextContent(
      'Outage confirmed: 2/2 consecutive probes failed: socket hang up',
    );
  });

  it('raises the mass-outage warning and runs a health cycle on demand', async () => {
    const api = mockFleetApi({
      getSummary: jest.fn().mockResolvedValue({
        ...summary,
        massOutage: {
          active: true,
          clusters: ['sim-1', 'sim-2', 'sim-3'],
          message:
            'Mass outage suspected: 3 of 3 probeable clusters went OFFLINE in one cycle.',
        },
      }),
      runHealthCycle: jest.fn().mockResolvedValue({
        durationMs: 12,
        online: 3,
        offline: 0,
        unknown: 0,
      }),
    });
    await renderPage(
      <TestApiProvider apis={[[fleetApiRef, api]]}>
        <FleetPage />
      </TestApiProvider>,
    );
    expect(
      (
        await screen.findAllByText(
          /Mass outage suspected: deployment cascades are held/,
        )
      ).length,
    ).toBeGreaterThan(0);
    expect(
      screen.getByText(/3 of 3 probeable clusters went OFFLINE/),
    ).toBeInTheDocument();
    await userEvent.click(
      screen.getByRole('button', { name: 'Run health check' }),
    );
    expect(
      await screen.findByText(/Health cycle done in 12 ms: 3 ONLINE/),
    ).toBeInTheDocument();

    // A run asked within manualMinInterval of the last cycle answers that cycle, marked reused.
    (api.runHealthCycle as jest.Mock).mockResolvedValue({
      durationMs: 12,
      online: 3,
      offline: 0,
      unknown: 0,
      reused: { nextRunAt: '2026-12-01T10:00:10.000Z', message: 'reused' },
    });
    await userEvent.click(
      screen.getByRole('button', { name: 'Run health check' }),
    );
    expect(
      await screen.findByText(
        /The last health cycle finished moments ago, so nothing was probed again: 3 ONLINE/,
      ),
    ).toBeInTheDocument();
  });

  it('disables the health check for a user who may not run it, and says why', async () => {
    const api = mockFleetApi();
    const authorize = jest.fn(
      (): AuthorizeResult.ALLOW | AuthorizeResult.DENY => AuthorizeResult.DENY,
    );
    await renderPage(
      <TestApiProvider
        apis={[
          [fleetApiRef, api],
          [permissionApiRef, mockApis.permission({ authorize })],
        ]}
      >
        <FleetPage />
      </TestApiProvider>,
    );
    // The permission's answer is asynchronous: the button is enabled-looking until it arrives.
    const refused = () =>
      screen.getByRole('button', { name: 'Run health check' });
    await waitFor(() => expect(refused()).toBeDisabled(), { timeout: 10_000 });
    const button = refused();
    expect(authorize).toHaveBeenCalledWith(
      expect.objectContaining({
        permission: expect.objectContaining({ name: 'fleet.health.run' }),
      }),
    );
    await userEvent.hover(button.parentElement!);
    expect(
      await screen.findByText(
        'Only cluster admins may run a health check (fleet.health.run)',
      ),
    ).toBeInTheDocument();
    expect(api.runHealthCycle).not.toHaveBeenCalled();
  });

  it('shows an empty state', async () => {
    await renderPage(
      <TestApiProvider
        apis={[
          [
            fleetApiRef,
            mockFleetApi({ listClusters: jest.fn().mockResolvedValue([]) }),
          ],
        ]}
      >
        <FleetPage />
      </TestApiProvider>,
    );
    expect(await screen.findByText(/No clusters yet/)).toBeInTheDocument();
  });

  it('shows 25 clusters a page and pages through them', async () => {
    await renderPage(
      <TestApiProvider apis={[[fleetApiRef, fleetOf(manyClusters(60))]]}>
        <FleetPage />
      </TestApiProvider>,
    );
    await screen.findByRole('table', { name: 'Clusters' });
    expect(shownClusters()).toHaveLength(25);
    expect(shownClusters()[0]).toBe('cluster-01');
    expect(
      screen.getByRole('status', { name: 'Clusters shown' }),
    ).toHaveTextContent('60 of 60 clusters');
    expect(screen.getByText('1-25 of 60')).toBeInTheDocument();

    await userEvent.click(screen.getByRole('button', { name: 'Next page' }));
    expect(shownClusters()).toHaveLength(25);
    expect(shownClusters()[0]).toBe('cluster-26');
    expect(shownClusters()[24]).toBe('cluster-50');

    await userEvent.click(screen.getByRole('button', { name: 'Next page' }));
    expect(shownClusters()).toEqual(
      Array.from({ length: 10 }, (_, i) => `cluster-${51 + i}`),
    );
    expect(screen.getByRole('button', { name: 'Next page' })).toBeDisabled();
  });

  it('filters by name or label, and counts what it shows', async () => {
    await renderPage(
      <TestApiProvider apis={[[fleetApiRef, fleetOf(manyClusters(60))]]}>
        <FleetPage />
      </TestApiProvider>,
    );
    await screen.findByRole('table', { name: 'Clusters' });
    await userEvent.click(screen.getByRole('button', { name: 'Next page' }));

    const filter = screen.getByRole('searchbox', {
      name: 'Name or label filter',
    });
    await userEvent.type(filter, 'cluster-1');
    expect(shownClusters()).toEqual([
      'cluster-10',
      'cluster-11',
      'cluster-12',
      'cluster-13',
      'cluster-14',
      'cluster-15',
      'cluster-16',
      'cluster-17',
      'cluster-18',
      'cluster-19',
    ]);
    expect(
      screen.getByRole('status', { name: 'Clusters shown' }),
    ).toHaveTextContent('10 of 60 clusters');

    await userEvent.clear(filter);
    await userEvent.type(filter, 'ENV=prod cluster-1');
    expect(shownClusters()).toEqual([
      'cluster-10',
      'cluster-12',
      'cluster-14',
      'cluster-16',
      'cluster-18',
    ]);
    expect(
      screen.getByRole('status', { name: 'Clusters shown' }),
    ).toHaveTextContent('5 of 60 clusters');

    await userEvent.clear(filter);
    await userEvent.type(filter, 'nope');
    expect(
      screen.queryByRole('table', { name: 'Clusters' }),
    ).not.toBeInTheDocument();
    expect(screen.getByText('No clusters match “nope”.')).toBeInTheDocument();
    expect(
      screen.getByRole('status', { name: 'Clusters shown' }),
    ).toHaveTextContent('0 of 60 clusters');
  });

  it('keeps the filters usable when a filtered fetch fails, so the filter can be changed back', async () => {
    const all = manyClusters(6);
    const api = fleetOf(all);
    api.listClusters.mockImplementation(
      async (opts?: { status?: ClusterStatus }) => {
        if (opts?.status === 'OFFLINE') throw new Error('backend unavailable');
        return all.filter(c => !opts?.status || c.status === opts.status);
      },
    );
    await renderPage(
      <TestApiProvider apis={[[fleetApiRef, api]]}>
        <FleetPage />
      </TestApiProvider>,
    );
    await screen.findByRole('table', { name: 'Clusters' });
    await userEvent.type(
      screen.getByRole('searchbox', { name: 'Name or label filter' }),
      'cluster',
    );
    await userEvent.click(
      screen.getByRole('button', { name: 'Status filter' }),
    );
    await userEvent.click(
      await screen.findByRole('option', { name: 'OFFLINE' }),
    );
    expect(
      (await screen.findAllByText(/backend unavailable/)).length,
    ).toBeGreaterThan(0);
    expect(
      screen.getByRole('searchbox', { name: 'Name or label filter' }),
    ).toHaveValue('cluster');

    await userEvent.click(
      screen.getByRole('button', { name: 'Status filter' }),
    );
    await userEvent.click(await screen.findByRole('option', { name: 'All' }));
    await screen.findByRole('table', { name: 'Clusters' });
    expect(shownClusters()).toHaveLength(6);
  });

  it('combines the status filter with the name filter', async () => {
    const api = fleetOf(manyClusters(60));
    await renderPage(
      <TestApiProvider apis={[[fleetApiRef, api]]}>
        <FleetPage />
      </TestApiProvider>,
    );
    await screen.findByRole('table', { name: 'Clusters' });
    await userEvent.type(
      screen.getByRole('searchbox', { name: 'Name or label filter' }),
      'cluster-1',
    );
    await userEvent.click(
      screen.getByRole('button', { name: 'Status filter' }),
    );
    await userEvent.click(
      await screen.findByRole('option', { name: 'OFFLINE' }),
    );
    expect(api.listClusters).toHaveBeenCalledWith({ status: 'OFFLINE' });

    await screen.findByRole('table', { name: 'Clusters' });
    expect(shownClusters()).toEqual(['cluster-12', 'cluster-15', 'cluster-18']);
    expect(
      screen.getByRole('searchbox', { name: 'Name or label filter' }),
    ).toHaveValue('cluster-1');
    expect(
      screen.getByRole('status', { name: 'Clusters shown' }),
    ).toHaveTextContent('3 of 60 clusters');
    for (const row of within(screen.getByRole('table', { name: 'Clusters' }))
      .getAllByRole('row')
      .slice(1)) {
      expect(
        within(row).getByLabelText('Cluster status: OFFLINE'),
      ).toBeInTheDocument();
    }
  });

  it('stays on its page across polls, and moves back when the fleet shrinks', async () => {
    const all = manyClusters(60);
    const api = fleetOf(all);
    // A poll a second: often enough for a short test, rare enough that a loaded 2-core machine
    // is not re-rendering the page without pause while the test clicks and queries it.
    await renderPage(
      <TestApiProvider apis={[[fleetApiRef, api]]}>
        <FleetPage pollIntervalMs={1_000} />
      </TestApiProvider>,
    );
    await screen.findByRole('table', { name: 'Clusters' });
    // `hidden: true` skips jsdom's style walk over the whole page: same button, far cheaper.
    const next = () =>
      screen.getByRole('button', { name: 'Next page', hidden: true });
    await userEvent.click(next());
    await userEvent.click(next());
    expect(shownClusters()[0]).toBe('cluster-51');

    // The same answer again, as fresh objects from the network.
    api.listClusters.mockImplementation(async () =>
      all.map(c => ({ ...c, labels: { ...c.labels } })),
    );
    const calls = api.listClusters.mock.calls.length;
    await waitFor(
      () =>
        expect(api.listClusters.mock.calls.length).toBeGreaterThan(calls + 1),
      { timeout: 30_000 },
    );
    expect(shownClusters()[0]).toBe('cluster-51');
    expect(screen.getByText('51-60 of 60')).toBeInTheDocument();

    api.listClusters.mockResolvedValue(all.slice(0, 40));
    await waitFor(
      () => expect(screen.getByText('26-40 of 40')).toBeInTheDocument(),
      { timeout: 30_000 },
    );
    expect(shownClusters()[0]).toBe('cluster-26');
  }, 120_000); // 60 clusters and several polls: slow on a loaded 2-core machine
});
