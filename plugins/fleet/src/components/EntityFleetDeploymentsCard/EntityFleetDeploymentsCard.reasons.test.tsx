import type { Deployment } from '@cnp/plugin-fleet-common';
import { registerMswTestHooks } from '@backstage/test-utils';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { application, cluster, deployment } from '../../testUtils/fixtures';
import { fleetBase, mswFleetClient } from '../../__testUtils__/mswFleet';
import { renderDeploymentsCard } from './__testUtils__/renderDeploymentsCard';

/*
 * A button of the card that is disabled says why, whatever the reason: Release before a first
 * deploy, Rollback with nothing to roll back to, an OFFLINE cluster in a release's picker.
 */

const server = setupServer();
registerMswTestHooks(server);

/** payments' Fleet API: its deployments, its application once it has one, sim-1..sim-3. */
function serve(deployments: Deployment[]) {
  const clusters = [
    cluster('sim-1', 'ONLINE'),
    cluster('sim-2', 'ONLINE'),
    cluster('sim-3', 'OFFLINE'),
  ];
  server.use(
    http.get(`${fleetBase}/deployments`, () =>
      HttpResponse.json({ items: deployments, nextCursor: null }),
    ),
    http.get(`${fleetBase}/clusters`, () =>
      HttpResponse.json({ items: clusters, nextCursor: null }),
    ),
    http.get(`${fleetBase}/applications`, () =>
      HttpResponse.json({
        items: deployments.length > 0 ? [application()] : [],
        nextCursor: null,
      }),
    ),
    http.get(`${fleetBase}/applications/:id/releases`, () =>
      HttpResponse.json({ items: [], nextCursor: null }),
    ),
    http.get(`${fleetBase}/applications/:id/stages`, () =>
      HttpResponse.json({ items: [] }),
    ),
    http.get(`${fleetBase}/analysis-providers`, () =>
      HttpResponse.json({ items: [{ type: 'prometheus', addresses: [] }] }),
    ),
  );
}

/** The tooltip of a disabled button (carried by the span around it). */
async function tooltipOf(button: HTMLElement) {
  expect(button).toBeDisabled();
  await userEvent.hover(button.parentElement as HTMLElement);
  return screen.findByRole('tooltip');
}

describe('EntityFleetDeploymentsCard: why a button is disabled', () => {
  it('disables Release before a first deploy, saying to deploy first', async () => {
    serve([]);
    await renderDeploymentsCard(mswFleetClient());
    expect(
      await screen.findByText(
        'Not deployed to any cluster yet. Use Deploy to start.',
      ),
    ).toBeInTheDocument();
    const release = screen.getByRole('button', { name: 'Release' });
    expect(await tooltipOf(release)).toHaveTextContent(
      'payments has no Fleet application yet: deploy it to a cluster first, then release it',
    );
    await waitFor(() =>
      expect(screen.getByRole('button', { name: 'Deploy' })).toBeEnabled(),
    );
  });

  it('disables Rollback with nothing to roll back to, and enables it from revision 2', async () => {
    serve([
      deployment('sim-1', 'DEPLOYED'),
      deployment('sim-2', 'DEPLOYED', { revision: 2 }),
    ]);
    await renderDeploymentsCard(mswFleetClient());
    const table = await screen.findByRole('table', { name: 'Deployments' });
    const first = within(table).getByRole('button', {
      name: 'Rollback on sim-1',
    });
    expect(await tooltipOf(first)).toHaveTextContent(
      'Nothing to roll back to: revision 1 is the only revision on sim-1',
    );
    expect(
      within(table).getByRole('button', { name: 'Rollback on sim-2' }),
    ).toBeEnabled();
  });

  it('says why an OFFLINE cluster cannot be picked for a release', async () => {
    serve([deployment('sim-1', 'DEPLOYED')]);
    await renderDeploymentsCard(mswFleetClient());
    const release = await screen.findByRole('button', { name: 'Release' });
    await waitFor(() => expect(release).toBeEnabled());
    await userEvent.click(release);
    const dialog = await screen.findByRole('dialog', {
      name: 'Release payments',
    });
    const offline = await within(dialog).findByRole('checkbox', {
      name: 'sim-3 — OFFLINE',
    });
    expect(offline).toBeDisabled();
    expect(
      within(dialog).getByText(
        'sim-3 is OFFLINE (Outage confirmed): a release skips it until it is back ONLINE',
      ),
    ).toBeInTheDocument();
    await userEvent.click(
      within(dialog).getByRole('checkbox', { name: 'sim-2 — ONLINE' }),
    );
    expect(
      within(dialog).getByText('Releasing to sim-2 only'),
    ).toBeInTheDocument();
    expect(within(dialog).queryByText(/None picked/)).toBeNull();
  });
});

describe('EntityFleetDeploymentsCard: a rollout under way', () => {
  it('shows what a PROGRESSING rollout waits for and when it fails if not complete', async () => {
    const deadline = new Date(Date.now() + 9 * 60_000 + 5_000).toISOString();
    serve([
      deployment('sim-1', 'PROGRESSING', {
        message: '2 of 4 updated replicas available',
        progressDeadlineAt: deadline,
      }),
      deployment('sim-2', 'DEPLOYED', {
        message: 'Rollout complete: all replicas updated and available',
      }),
    ]);
    await renderDeploymentsCard(mswFleetClient());
    const progress = await screen.findByTestId('rollout-progress');
    expect(progress).toHaveTextContent(
      '2 of 4 updated replicas available; fails in 9 minutes if not complete',
    );
    expect(within(progress).getByText('in 9 minutes')).toHaveAttribute(
      'dateTime',
      deadline,
    );
    expect(progress.closest('tr')?.getAttribute('data-cluster')).toBe('sim-1');
    // A finished rollout shows no such line.
    expect(screen.getAllByTestId('rollout-progress')).toHaveLength(1);
  });
});
