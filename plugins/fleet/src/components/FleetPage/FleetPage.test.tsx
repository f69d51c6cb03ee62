import { renderInTestApp, TestApiProvider } from '@backstage/test-utils';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { fleetApiRef } from '../../api';
import { cluster, mockFleetApi, summary } from '../../testUtils/fixtures';
import { FleetPage } from './FleetPage';

describe('FleetPage', () => {
  it('shows counts, the clusters table with a status filter, and recent events', async () => {
    const api = mockFleetApi();
    await renderInTestApp(
      <TestApiProvider apis={[[fleetApiRef, api]]}>
        <FleetPage />
      </TestApiProvider>,
    );
    const table = await screen.findByRole('table', { name: 'Clusters' });
    expect(within(table).getAllByRole('row')).toHaveLength(4);
    expect(screen.getByRole('list', { name: 'Events' })).toHaveTextContent('cluster sim-2');

    api.listClusters.mockResolvedValue([cluster('sim-2', 'OFFLINE')]);
    await userEvent.click(screen.getByRole('button', { name: 'Status filter' }));
    await userEvent.click(await screen.findByRole('option', { name: 'OFFLINE' }));
    expect(api.listClusters).toHaveBeenLastCalledWith({ status: 'OFFLINE' });
    expect(await screen.findByText('FAILURE_THRESHOLD_REACHED: 2/2 consecutive probes failed: socket hang up')).toBeInTheDocument();
  });

  it('raises the mass-outage warning and runs a health cycle on demand', async () => {
    const api = mockFleetApi({
      getSummary: jest.fn().mockResolvedValue({
        ...summary,
        massOutage: { active: true, clusters: ['sim-1', 'sim-2', 'sim-3'], message: 'Mass outage suspected: 3 of 3 probeable clusters went OFFLINE in one cycle.' },
      }),
      runHealthCycle: jest.fn().mockResolvedValue({ durationMs: 12, online: 3, offline: 0, unknown: 0 }),
    });
    await renderInTestApp(
      <TestApiProvider apis={[[fleetApiRef, api]]}>
        <FleetPage />
      </TestApiProvider>,
    );
    expect((await screen.findAllByText(/Mass outage suspected: deployment cascades are held/)).length).toBeGreaterThan(0);
    expect(screen.getByText(/3 of 3 probeable clusters went OFFLINE/)).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Run health check' }));
    expect(await screen.findByText(/Health cycle done in 12 ms: 3 ONLINE/)).toBeInTheDocument();
  });

  it('shows an empty state', async () => {
    await renderInTestApp(
      <TestApiProvider apis={[[fleetApiRef, mockFleetApi({ listClusters: jest.fn().mockResolvedValue([]) })]]}>
        <FleetPage />
      </TestApiProvider>,
    );
    expect(await screen.findByText(/No clusters yet/)).toBeInTheDocument();
  });
});
