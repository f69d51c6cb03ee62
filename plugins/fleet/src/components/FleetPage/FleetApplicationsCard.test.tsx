import { entityRouteRef } from '@backstage/plugin-catalog-react';
import { renderInTestApp, TestApiProvider } from '@backstage/test-utils';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { fleetApiRef } from '../../api';
import {
  application,
  applicationStatus,
  mockFleetApi,
} from '../../testUtils/fixtures';
import {
  APPLICATIONS_PAGE_SIZE,
  FleetApplicationsCard,
} from './FleetApplicationsCard';

async function renderCard(api = mockFleetApi()) {
  await renderInTestApp(
    <TestApiProvider apis={[[fleetApiRef, api]]}>
      <FleetApplicationsCard />
    </TestApiProvider>,
    {
      mountedRoutes: { '/catalog/:namespace/:kind/:name': entityRouteRef },
    },
  );
  return api;
}

describe('FleetApplicationsCard', () => {
  it('shows each application with its summary and the version and sync status on each cluster', async () => {
    const api = await renderCard(
      mockFleetApi({
        listApplications: jest
          .fn()
          .mockResolvedValue([
            application('app-2', 'component:default/search'),
            application('app-1', 'component:default/payments'),
          ]),
        getApplicationStatus: jest.fn(async (id: string) =>
          id === 'app-1'
            ? applicationStatus(
                'app-1',
                [
                  ['sim-1', '1.4.2', 'SYNCED'],
                  ['sim-2', '1.4.1', 'OUT_OF_SYNC'],
                ],
                '1 of 2 SYNCED; 1.4.2 on 1 cluster, 1.4.1 on 1',
              )
            : applicationStatus('app-2', [], '0 deployments'),
        ),
      }),
    );
    const table = await screen.findByRole('table', { name: 'Applications' });
    const rows = within(table).getAllByRole('row').slice(1);
    // Sorted by entity ref, each linked to its catalog page.
    expect(rows.map(r => r.getAttribute('data-application'))).toEqual([
      'app-1',
      'app-2',
    ]);
    expect(
      within(rows[0]).getByRole('link', { name: 'payments' }),
    ).toHaveAttribute('href', '/catalog/default/component/payments');
    expect(
      await within(rows[0]).findByText(
        '1 of 2 SYNCED; 1.4.2 on 1 cluster, 1.4.1 on 1',
      ),
    ).toBeInTheDocument();
    const versions = within(rows[0]).getByRole('list', {
      name: 'Versions of component:default/payments',
    });
    const items = within(versions).getAllByRole('listitem');
    expect(items[0]).toHaveTextContent(/^sim-1:1\.4\.2SYNCED$/);
    expect(items[1]).toHaveTextContent(/^sim-2:1\.4\.1OUT OF SYNC$/);
    expect(
      await within(rows[1]).findByText('Not deployed anywhere'),
    ).toBeInTheDocument();
    expect(api.getApplicationStatus).toHaveBeenCalledWith('app-1');
    expect(api.getApplicationStatus).toHaveBeenCalledWith('app-2');
  });

  it('shows the first page of applications, and more on demand', async () => {
    const many = Array.from({ length: APPLICATIONS_PAGE_SIZE + 5 }, (_, i) =>
      application(
        `app-${i}`,
        `component:default/svc-${String(i).padStart(2, '0')}`,
      ),
    );
    const api = await renderCard(
      mockFleetApi({
        listApplications: jest.fn().mockResolvedValue(many),
        getApplicationStatus: jest.fn(async (id: string) =>
          applicationStatus(id, [['sim-1', '1.0.0', 'SYNCED']], `${id} ok`),
        ),
      }),
    );
    const table = await screen.findByRole('table', { name: 'Applications' });
    expect(within(table).getAllByRole('row')).toHaveLength(
      APPLICATIONS_PAGE_SIZE + 1,
    );
    expect(api.getApplicationStatus).not.toHaveBeenCalledWith('app-29');
    await userEvent.click(
      screen.getByRole('button', { name: 'Show 5 more (5 not shown)' }),
    );
    expect(within(table).getAllByRole('row')).toHaveLength(
      APPLICATIONS_PAGE_SIZE + 6,
    );
    expect(await screen.findByText('app-29 ok')).toBeInTheDocument();
    expect(
      screen.queryByRole('button', { name: /more/ }),
    ).not.toBeInTheDocument();
  });

  it('shows a failed status in words, keeping the other applications', async () => {
    await renderCard(
      mockFleetApi({
        listApplications: jest.fn().mockResolvedValue([application('app-1')]),
        getApplicationStatus: jest
          .fn()
          .mockRejectedValue(new Error("Application 'app-1' not found")),
      }),
    );
    expect(
      await screen.findByText(
        "Could not load its status: Application 'app-1' not found",
      ),
    ).toBeInTheDocument();
  });

  it('says when there are no applications', async () => {
    await renderCard();
    expect(
      await screen.findByText('No applications in Fleet yet.'),
    ).toBeInTheDocument();
  });
});
