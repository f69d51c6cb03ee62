import {
  registerMswTestHooks,
  renderInTestApp,
  TestApiProvider,
} from '@backstage/test-utils';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { fleetApiRef } from '../../api';
import {
  fleetBase,
  mswFleetClient,
  seenRequest,
  type SeenRequest,
} from '../../__testUtils__/mswFleet';
import { cluster, release } from '../../testUtils/fixtures';
import { ReleaseDialog } from './ReleaseDialog';

/*
 * The example strategy's analysis queries the Prometheus the backend allows
 * (GET /analysis-providers), and is left out when it allows none: a newcomer's first
 * progressive release is not rolled back for querying a server nobody runs.
 */

const server = setupServer();
registerMswTestHooks(server);

function serve(addresses: string[]) {
  const seen: SeenRequest[] = [];
  server.use(
    http.get(`${fleetBase}/analysis-providers`, () =>
      HttpResponse.json({
        items: [
          { type: 'prometheus', addresses },
          { type: 'datadog', addresses: null },
        ],
      }),
    ),
    http.post(`${fleetBase}/applications/:id/releases`, async ({ request }) => {
      seen.push(await seenRequest(request));
      return HttpResponse.json(release(['sim-1'], []), { status: 201 });
    }),
  );
  return seen;
}

async function startProgressive() {
  const onClose = jest.fn();
  await renderInTestApp(
    <TestApiProvider apis={[[fleetApiRef, mswFleetClient()]]}>
      <ReleaseDialog
        open
        componentName="payments"
        applicationId="app-1"
        clusters={[cluster('sim-1', 'ONLINE'), cluster('sim-2', 'ONLINE')]}
        placedClusters={['sim-1', 'sim-2']}
        defaultImage="ghcr.io/acme/payments:1.6.0"
        onClose={onClose}
        onReleased={jest.fn()}
      />
    </TestApiProvider>,
  );
  await userEvent.click(
    screen.getByRole('checkbox', { name: 'Progressive (strategy)' }),
  );
  await userEvent.click(screen.getByRole('button', { name: 'Start release' }));
  await waitFor(() => expect(onClose).toHaveBeenCalled());
}

describe('ReleaseDialog: the example strategy and the analysis the backend allows', () => {
  it("queries the backend's allowed Prometheus, and says so", async () => {
    const seen = serve(['http://127.0.0.1:9091', 'http://other:9090']);
    const onClose = jest.fn();
    await renderInTestApp(
      <TestApiProvider apis={[[fleetApiRef, mswFleetClient()]]}>
        <ReleaseDialog
          open
          componentName="payments"
          applicationId="app-1"
          clusters={[cluster('sim-1', 'ONLINE'), cluster('sim-2', 'ONLINE')]}
          placedClusters={['sim-1', 'sim-2']}
          defaultImage="ghcr.io/acme/payments:1.6.0"
          onClose={onClose}
          onReleased={jest.fn()}
        />
      </TestApiProvider>,
    );
    await userEvent.click(
      screen.getByRole('checkbox', { name: 'Progressive (strategy)' }),
    );
    const yaml = screen.getByRole('textbox', { name: 'Strategy (YAML)' });
    await waitFor(() =>
      expect((yaml as HTMLTextAreaElement).value).toContain(
        'address: http://127.0.0.1:9091',
      ),
    );
    expect((yaml as HTMLTextAreaElement).value).not.toContain('9090');
    expect(
      screen.getByText(
        /The example's analysis queries http:\/\/127\.0\.0\.1:9091, the Prometheus the backend allows \(fleet\.analysis\.prometheus\.allowedAddresses\)/,
      ),
    ).toBeInTheDocument();
    await userEvent.click(
      screen.getByRole('button', { name: 'Start release' }),
    );
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    const body = seen[0].body as any;
    expect(body.strategy.analysis.templates[0].provider).toEqual({
      prometheus: expect.objectContaining({
        address: 'http://127.0.0.1:9091',
      }),
    });
    expect(body.strategy.waves).toEqual([
      { clusters: ['sim-1'] },
      { percent: 100 },
    ]);
  });

  it('leaves the analysis out when the backend allows no Prometheus', async () => {
    const seen = serve([]);
    await startProgressive();
    const body = seen[0].body as any;
    expect(body.strategy.analysis).toBeUndefined();
    expect(body.strategy.canary.steps[0]).toEqual({ setWeight: 20 });
    expect(body.strategy.rollback).toEqual({ enabled: true, timeout: '15m' });
  });

  it('says why the example has no analysis', async () => {
    serve([]);
    await renderInTestApp(
      <TestApiProvider apis={[[fleetApiRef, mswFleetClient()]]}>
        <ReleaseDialog
          open
          componentName="payments"
          applicationId="app-1"
          clusters={[cluster('sim-1', 'ONLINE')]}
          placedClusters={['sim-1']}
          defaultImage="ghcr.io/acme/payments:1.6.0"
          onClose={jest.fn()}
          onReleased={jest.fn()}
        />
      </TestApiProvider>,
    );
    await userEvent.click(
      screen.getByRole('checkbox', { name: 'Progressive (strategy)' }),
    );
    expect(
      await screen.findByText(
        /The example has no analysis: the backend allows no Prometheus server/,
      ),
    ).toBeInTheDocument();
    expect(
      (
        screen.getByRole('textbox', {
          name: 'Strategy (YAML)',
        }) as HTMLTextAreaElement
      ).value,
    ).not.toMatch(/^analysis:/m);
  });
});
