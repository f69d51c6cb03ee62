import { entityRouteRef } from '@backstage/plugin-catalog-react';
import { permissionApiRef } from '@backstage/plugin-permission-react';
import {
  mockApis,
  renderInTestApp,
  TestApiProvider,
} from '@backstage/test-utils';
import { screen, within } from '@testing-library/react';
import { fleetApiRef } from '../../api';
import { mockFleetApi, progressiveRelease } from '../../testUtils/fixtures';
import { freezeWindow, waitingRelease } from '../../testUtils/gateFixtures';
import { FleetPage } from './FleetPage';

const renderPage = (api = mockFleetApi()) =>
  renderInTestApp(
    <TestApiProvider
      apis={[
        [permissionApiRef, mockApis.permission()],
        [fleetApiRef, api],
      ]}
    >
      <FleetPage />
    </TestApiProvider>,
    { mountedRoutes: { '/catalog/:namespace/:kind/:name': entityRouteRef } },
  );

describe('FleetPage: releases waiting and freeze windows', () => {
  it('lists the waiting releases with what they wait for, and the open and next freeze windows', async () => {
    const frozen = waitingRelease({
      id: 'rel-10',
      entityRef: 'component:default/ledger',
      status: 'WAITING_FOR_WINDOW',
      gate: {
        approvals: null,
        decisions: [],
        window: {
          name: 'friday-freeze',
          clusters: ['sim-2'],
          closesAt: new Date(Date.now() + 3600_000).toISOString(),
        },
        openedAt: null,
        openedBy: null,
      },
    });
    const windows = [
      freezeWindow('friday-freeze', true),
      freezeWindow('year-end', false),
    ];
    const api = mockFleetApi({
      listWaitingReleases: jest
        .fn()
        .mockResolvedValue([waitingRelease(), frozen]),
      listFreezeWindows: jest.fn().mockResolvedValue(windows),
    });
    await renderPage(api);
    const waiting = await screen.findByRole('table', {
      name: 'Releases waiting',
    });
    const rows = within(waiting).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toHaveTextContent(
      /payments.*prod.*Waiting for approval.*(just now|\d+ seconds ago).*1 approval from release-managers \(0 given\)/,
    );
    expect(
      within(rows[0]).getByRole('link', { name: 'payments' }),
    ).toBeInTheDocument();
    expect(rows[1]).toHaveTextContent(
      /ledger.*Waiting for freeze window friday-freeze until .*freeze window friday-freeze on sim-2/,
    );

    const open = screen.getByRole('table', { name: 'Open freeze windows' });
    const openRows = within(open).getAllByRole('row').slice(1);
    expect(openRows).toHaveLength(1);
    expect(openRows[0]).toHaveTextContent(/friday-freeze.*sim-2/);
    // When it closes; when the next one opens.
    expect(within(openRows[0]).getByRole('time')).toHaveAttribute(
      'datetime',
      windows[0].closesAt,
    );
    const next = screen.getByRole('table', { name: 'Next freeze windows' });
    const nextRows = within(next).getAllByRole('row').slice(1);
    expect(nextRows).toHaveLength(1);
    expect(nextRows[0]).toHaveTextContent(/year-end.*sim-2.*2h/);
    expect(within(nextRows[0]).getByRole('time')).toHaveAttribute(
      'datetime',
      windows[1].nextOpensAt,
    );
  });

  it('says so when nothing waits and no window is open or scheduled', async () => {
    await renderPage();
    expect(
      await screen.findByText(
        'No release is waiting for an approval or a freeze window.',
      ),
    ).toBeInTheDocument();
    expect(
      await screen.findByText(
        'No freeze window is open: releases start when they are ready.',
      ),
    ).toBeInTheDocument();
    expect(
      screen.getByText('No freeze window is scheduled to open.'),
    ).toBeInTheDocument();
    expect(
      screen.queryByRole('table', { name: 'Releases waiting' }),
    ).toBeNull();
  });

  it('lists the releases under way across the fleet, in words, with how far each is', async () => {
    const paused = progressiveRelease({
      id: 'rel-3',
      entityRef: 'component:default/ledger',
      status: 'PAUSED',
      createdBy: 'user:default/bob',
    });
    const aborting = progressiveRelease({
      id: 'rel-4',
      status: 'ABORTING',
    });
    aborting.progress!.clusters[0].state = 'DONE';
    const api = mockFleetApi({
      listReleasesUnderWay: jest
        .fn()
        .mockResolvedValue([progressiveRelease(), paused, aborting]),
    });
    await renderPage(api);
    const table = await screen.findByRole('table', {
      name: 'Releases under way',
    });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(3);
    expect(rows[0]).toHaveTextContent(
      /payments.*ghcr\.io\/acme\/payments:1\.5\.0.*progressing.*wave 1 of 2, 0 of 2 clusters done.*by alice/,
    );
    expect(rows[1]).toHaveTextContent(/ledger.*paused.*by bob/);
    expect(rows[2]).toHaveTextContent(
      /rolling back.*wave 1 of 2, 1 of 2 clusters done/,
    );
    expect(
      within(rows[1]).getByRole('link', { name: 'ledger' }),
    ).toBeInTheDocument();
    expect(screen.queryByText('No release is under way.')).toBeNull();
  });

  it('says when no release is under way', async () => {
    await renderPage();
    expect(
      await screen.findByText('No release is under way.'),
    ).toBeInTheDocument();
  });
});
