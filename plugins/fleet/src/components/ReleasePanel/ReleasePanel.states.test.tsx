import type { Release } from '@cnp/plugin-fleet-common';
import { registerMswTestHooks } from '@backstage/test-utils';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { fleetBase, mswFleetClient } from '../../__testUtils__/mswFleet';
import {
  application,
  cluster,
  deployment,
  progressiveRelease,
} from '../../testUtils/fixtures';
import { renderDeploymentsCard } from '../EntityFleetDeploymentsCard/__testUtils__/renderDeploymentsCard';

const server = setupServer();
registerMswTestHooks(server);

/** The Fleet API of payments on sim-1 and sim-2, with these releases of its application. */
function fleetWith(releases: Release[]) {
  server.use(
    http.get(`${fleetBase}/deployments`, () =>
      HttpResponse.json({
        items: [
          deployment('sim-1', 'DEPLOYED'),
          deployment('sim-2', 'DEPLOYED'),
        ],
      }),
    ),
    http.get(`${fleetBase}/clusters`, () =>
      HttpResponse.json({
        items: [cluster('sim-1', 'ONLINE'), cluster('sim-2', 'ONLINE')],
      }),
    ),
    http.get(`${fleetBase}/applications`, () =>
      HttpResponse.json({ items: [application()] }),
    ),
    http.get(`${fleetBase}/applications/:id/releases`, () =>
      HttpResponse.json({ items: releases }),
    ),
    http.get(`${fleetBase}/applications/:id/stages`, () =>
      HttpResponse.json({ items: [] }),
    ),
  );
}

/** The progressive release fixture, paused, sim-1 in a timed pause whose end has passed. */
function pausedRelease(): Release {
  const base = progressiveRelease();
  const [sim1, sim2] = base.progress!.clusters;
  return {
    ...base,
    status: 'PAUSED',
    progress: {
      ...base.progress!,
      pausedBy: 'user:default/guest',
      clusters: [
        {
          ...sim1,
          stepIndex: 3,
          weight: 60,
          awaitingPromote: false,
          pauseUntil: new Date(Date.now() - 60_000).toISOString(),
          message: 'timed pause of 30s',
        },
        { ...sim2, message: null },
      ],
    },
  };
}

describe('release panel states', () => {
  it('labels waves and pauses from the release status, in words, with what holds each cluster', async () => {
    fleetWith([pausedRelease()]);
    await renderDeploymentsCard(mswFleetClient());
    const panel = within(await screen.findByTestId('fleet-release'));
    const running = await panel.findByRole('region', {
      name: 'Running release',
    });
    // The status in words, its code on hover; who paused it by name.
    const status = within(running).getByTestId('fleet-release-status');
    expect(status).toHaveTextContent('Paused');
    expect(within(status).getByTitle('PAUSED')).toBeInTheDocument();
    expect(running).toHaveTextContent('paused by guest');
    expect(running).not.toHaveTextContent('user:default/');
    // A paused release's current wave is paused, never "running".
    expect(panel.getByRole('group', { name: 'Wave 1' })).toHaveTextContent(
      'Wave 1 (paused)',
    );
    expect(panel.getByRole('group', { name: 'Wave 2' })).toHaveTextContent(
      'Wave 2 (waiting)',
    );
    // A pause whose end has passed shows no "pause ends"/"paused until", nor its old message.
    const sim1 = panel.getByTestId('fleet-release-cluster-sim-1');
    expect(sim1).toHaveTextContent('Step 4 / 5 · Rollout');
    expect(sim1).not.toHaveTextContent(/pause ends|paused until|timed pause/);
    // A cluster whose wave has not started says what it waits for, not just "0 %".
    expect(
      within(panel.getByTestId('fleet-release-cluster-sim-2')).getByTestId(
        'blocking',
      ),
    ).toHaveTextContent('the release is paused');
  });

  it('shows a running pause as relative time and marks the deployment rows where a canary runs', async () => {
    const release = progressiveRelease();
    const [sim1, sim2] = release.progress!.clusters;
    release.progress!.clusters = [
      {
        ...sim1,
        awaitingPromote: false,
        stepIndex: 3,
        weight: 60,
        pauseUntil: new Date(Date.now() + 4 * 60_000 + 5_000).toISOString(),
        message: 'timed pause of 5m',
      },
      { ...sim2, message: 'waiting for sim-2 to be ONLINE (it is OFFLINE)' },
    ];
    fleetWith([release]);
    await renderDeploymentsCard(mswFleetClient());
    const panel = within(await screen.findByTestId('fleet-release'));
    const sim1Cell = await panel.findByTestId('fleet-release-cluster-sim-1');
    expect(sim1Cell).toHaveTextContent('pause ends in 4 minutes');
    expect(sim1Cell).not.toHaveTextContent(/\d{4}-\d\d-\d\dT/);
    expect(panel.getByRole('group', { name: 'Wave 1' })).toHaveTextContent(
      'Wave 1 (running)',
    );
    // The orchestrator's own words of what holds a cluster, shown while it waits.
    expect(panel.getByTestId('fleet-release-cluster-sim-2')).toHaveTextContent(
      'waiting for sim-2 to be ONLINE (it is OFFLINE)',
    );
    // The deployments table: sim-1 runs the canary, sim-2's wave has not started.
    const table = screen.getByRole('table', { name: 'Deployments' });
    const row = (name: string) =>
      within(table)
        .getAllByRole('row')
        .find(r => r.getAttribute('data-cluster') === name)!;
    expect(
      within(row('sim-1')).getByTestId('release-in-flight'),
    ).toHaveTextContent('canary running, 60 %');
    expect(
      within(row('sim-2')).queryByTestId('release-in-flight'),
    ).not.toBeInTheDocument();
  });

  it('opens a finished release from the history: how it ended, why, and where each cluster ended', async () => {
    const base = progressiveRelease();
    const [sim1, sim2] = base.progress!.clusters;
    const rolledBack: Release = {
      ...base,
      status: 'ROLLED_BACK',
      progress: {
        ...base.progress!,
        abort: {
          reason: 'ANALYSIS_FAILED',
          message:
            "http-success-rate on sim-1: 0.981 does not meet 'result[0] >= 0.995'",
          at: new Date().toISOString(),
        },
        clusters: [
          {
            ...sim1,
            state: 'ROLLED_BACK',
            awaitingPromote: false,
            message: 'back on revision 1 (as revision 3)',
          },
          { ...sim2, state: 'SKIPPED' },
        ],
      },
    };
    fleetWith([rolledBack]);
    await renderDeploymentsCard(mswFleetClient());
    const history = await screen.findByRole('table', {
      name: 'Release history',
    });
    await userEvent.click(
      within(history).getByRole('button', {
        name: 'Open the release of ghcr.io/acme/payments:1.5.0',
      }),
    );
    const dialog = await screen.findByRole('dialog', {
      name: 'Release of ghcr.io/acme/payments:1.5.0',
    });
    expect(within(dialog).getByTestId('release-summary')).toHaveTextContent(
      /^Rolled back.*started .* by alice$/,
    );
    expect(dialog).toHaveTextContent(
      "Analysis failed: http-success-rate on sim-1: 0.981 does not meet 'result[0] >= 0.995'",
    );
    // The waves of a rolled-back release say so; the cluster where it ended.
    expect(
      within(dialog).getByRole('group', { name: 'Wave 1' }),
    ).toHaveTextContent('Wave 1 (rolled back)');
    expect(
      within(dialog).getByRole('group', { name: 'Wave 2' }),
    ).toHaveTextContent('Wave 2 (not started)');
    expect(
      within(dialog).getByTestId('fleet-release-cluster-sim-1'),
    ).toHaveTextContent(/Rolled back.*back on revision 1 \(as revision 3\)/);
    await userEvent.click(
      within(dialog).getByRole('button', { name: 'Close' }),
    );
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });
});
