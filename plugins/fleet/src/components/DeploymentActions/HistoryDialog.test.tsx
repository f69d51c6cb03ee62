import {
  mockApis,
  registerMswTestHooks,
  renderInTestApp,
  TestApiProvider,
} from '@backstage/test-utils';
import { permissionApiRef } from '@backstage/plugin-permission-react';
import userEvent from '@testing-library/user-event';
import { entityRouteRef } from '@backstage/plugin-catalog-react';
import { screen, waitFor, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { fleetApiRef } from '../../api';
import {
  fleetBase,
  mswFleetClient,
  seenRequest,
  type SeenRequest,
} from '../../__testUtils__/mswFleet';
import { deployment, manifestSource, revision } from '../../testUtils/fixtures';
import { HistoryDialog } from './HistoryDialog';

const server = setupServer();
registerMswTestHooks(server);

describe('HistoryDialog', () => {
  it("shows a revision's manifest source (version, short commit, linked to its URL) and a generated one's image", async () => {
    server.use(
      http.get(`${fleetBase}/deployments/:id/revisions`, () =>
        HttpResponse.json({
          items: [
            revision('sim-1', 3, '2.1.0', {
              image: '',
              source: manifestSource(),
            }),
            revision('sim-1', 2, '2.0.0', {
              source: manifestSource({
                url: 'https://github.com/acme/ledger/tree/main/deploy',
                version: null,
                commit: '0a1b2c3d4e5f60718293a4b5c6d7e8f901234567',
              }),
            }),
            revision('sim-1', 1, '1.9.0'),
          ],
        }),
      ),
      http.get(`${fleetBase}/deployments/:id/events`, () =>
        HttpResponse.json({ items: [] }),
      ),
    );
    await renderInTestApp(
      <TestApiProvider
        apis={[
          [fleetApiRef, mswFleetClient()],
          [permissionApiRef, mockApis.permission()],
        ]}
      >
        <HistoryDialog
          deployment={deployment('sim-1', 'DEPLOYED', { revision: 3 })}
          componentName="ledger"
          onClose={jest.fn()}
        />
      </TestApiProvider>,
      { mountedRoutes: { '/catalog/:namespace/:kind/:name': entityRouteRef } },
    );
    const rows = within(await screen.findByRole('table', { name: 'Revisions' }))
      .getAllByRole('row')
      .slice(1);
    expect(rows[0]).toHaveTextContent(
      /^3 \(current\)v2\.1\.0 at 3f9c2a1\b[^·]*deploy/,
    );
    const link = within(rows[0]).getByRole('link', {
      name: /^Source v2\.1\.0 at 3f9c2a1/,
    });
    expect(link).toHaveAttribute(
      'href',
      'https://github.com/acme/ledger/tree/v2.1.0/deploy',
    );
    // The source's own ref, and the image the revision was given besides.
    expect(rows[1]).toHaveTextContent(
      /^2default ref at 0a1b2c3\b.* · ghcr\.io\/acme\/payments:2\.0\.0deploy/,
    );
    expect(
      within(rows[1]).getByRole('link', { name: /^Source/ }),
    ).toHaveAttribute(
      'href',
      'https://github.com/acme/ledger/tree/main/deploy',
    );
    expect(rows[2]).toHaveTextContent(
      /^1ghcr\.io\/acme\/payments:1\.9\.0deploy/,
    );
    expect(within(rows[2]).queryByRole('link', { name: /^Source/ })).toBeNull();
    // Who made it, by name, linked to their page.
    expect(
      within(rows[2]).getByRole('link', { name: 'alice' }),
    ).toHaveAttribute('href', '/catalog/default/user/alice');
  });

  it('rolls back to the revision of a row, confirmed, then closes the history', async () => {
    const seen: SeenRequest[] = [];
    server.use(
      http.get(`${fleetBase}/deployments/:id/revisions`, () =>
        HttpResponse.json({
          items: [
            revision('sim-1', 3, '1.6.0', {
              image:
                'ghcr.io/acme/payments:1.6.0-rc.1+build.20261206.abcdef0123',
            }),
            revision('sim-1', 2, '1.5.0'),
            revision('sim-1', 1, '1.4.0'),
          ],
        }),
      ),
      http.get(`${fleetBase}/deployments/:id/events`, () =>
        HttpResponse.json({ items: [] }),
      ),
      http.post(
        `${fleetBase}/deployments/:id/rollback`,
        async ({ request }) => {
          seen.push(await seenRequest(request));
          return HttpResponse.json(
            deployment('sim-1', 'PENDING', { revision: 4 }),
            {
              status: 201,
            },
          );
        },
      ),
    );
    const onClose = jest.fn();
    const onDone = jest.fn();
    await renderInTestApp(
      <TestApiProvider
        apis={[
          [fleetApiRef, mswFleetClient()],
          [permissionApiRef, mockApis.permission()],
        ]}
      >
        <HistoryDialog
          deployment={deployment('sim-1', 'DEPLOYED', { revision: 3 })}
          componentName="payments"
          onClose={onClose}
          onDone={onDone}
        />
      </TestApiProvider>,
      { mountedRoutes: { '/catalog/:namespace/:kind/:name': entityRouteRef } },
    );
    const table = await screen.findByRole('table', { name: 'Revisions' });
    // A long image stays whole on one line, all of it on hover.
    const image = within(table).getByText(
      'ghcr.io/acme/payments:1.6.0-rc.1+build.20261206.abcdef0123',
    );
    expect(image).toHaveAttribute('title', image.textContent);
    expect(image).toHaveStyle({
      whiteSpace: 'nowrap',
      textOverflow: 'ellipsis',
    });
    // The current revision cannot be rolled back to.
    expect(
      within(table).queryByRole('button', { name: 'Roll back to revision 3' }),
    ).toBeNull();
    const button = within(table).getByRole('button', {
      name: 'Roll back to revision 1',
    });
    await waitFor(() => expect(button).toBeEnabled());
    await userEvent.click(button);
    const confirm = await screen.findByRole('button', {
      name: 'Roll back to revision 1',
    });
    expect(screen.getByRole('radio', { name: /^Revision 1:/ })).toBeChecked();
    await userEvent.click(confirm);
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(onDone).toHaveBeenCalled();
    expect(seen).toEqual([
      {
        method: 'POST',
        path: '/api/fleet/deployments/dep-sim-1/rollback',
        body: { toRevision: 1 },
      },
    ]);
  });

  it('shows what changed between two revisions ticked, field by field', async () => {
    server.use(
      http.get(`${fleetBase}/deployments/:id/revisions`, () =>
        HttpResponse.json({
          items: [
            revision('sim-1', 3, '1.6.0', {
              replicas: 3,
              env: { LOG_LEVEL: 'debug', FEATURE_X: 'on' },
            }),
            revision('sim-1', 2, '1.5.0', {
              replicas: 2,
              env: { LOG_LEVEL: 'info', OLD_FLAG: null },
            }),
            revision('sim-1', 1, '1.5.0', {
              replicas: 2,
              env: { LOG_LEVEL: 'info', OLD_FLAG: null },
            }),
          ],
        }),
      ),
      http.get(`${fleetBase}/deployments/:id/events`, () =>
        HttpResponse.json({ items: [] }),
      ),
    );
    await renderInTestApp(
      <TestApiProvider
        apis={[
          [fleetApiRef, mswFleetClient()],
          [permissionApiRef, mockApis.permission()],
        ]}
      >
        <HistoryDialog
          deployment={deployment('sim-1', 'DEPLOYED', { revision: 3 })}
          componentName="payments"
          onClose={jest.fn()}
        />
      </TestApiProvider>,
      { mountedRoutes: { '/catalog/:namespace/:kind/:name': entityRouteRef } },
    );
    const diff = await screen.findByTestId('revision-diff');
    expect(diff).toHaveTextContent('Tick two revisions');
    await userEvent.click(
      screen.getByRole('checkbox', { name: 'Compare revision 3' }),
    );
    await userEvent.click(
      screen.getByRole('checkbox', { name: 'Compare revision 2' }),
    );
    const table = within(diff).getByRole('table', {
      name: 'Revision 2 → revision 3',
    });
    const rows = within(table)
      .getAllByRole('row')
      .slice(1)
      .map(r => r.textContent);
    expect(rows).toEqual([
      'Imageghcr.io/acme/payments:1.5.0ghcr.io/acme/payments:1.6.0',
      'Replicas23',
      'env FEATURE_X(not set)on',
      'env LOG_LEVELinfodebug',
      'env OLD_FLAG(set, value hidden)(not set)',
    ]);
    // Two identical revisions: said so.
    await userEvent.click(
      screen.getByRole('checkbox', { name: 'Compare revision 3' }),
    );
    await userEvent.click(
      screen.getByRole('checkbox', { name: 'Compare revision 1' }),
    );
    expect(diff).toHaveTextContent('Revision 1 → revision 2: no difference');
  });
});
