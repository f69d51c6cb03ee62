import {
  registerMswTestHooks,
  renderInTestApp,
  TestApiProvider,
} from '@backstage/test-utils';
import type { Application } from '@cnp/plugin-fleet-common';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { fleetApiRef } from '../../api';
import { application, cluster } from '../../testUtils/fixtures';
import { fleetBase, mswFleetClient } from '../../__testUtils__/mswFleet';
import { DeployDialog } from './DeployDialog';

/*
 * The Deploy dialog says where the placement takes the component besides the cluster picked
 * (the reconcile deploys it there too, unasked), and what becomes of a deploy to a cluster
 * outside the placement; its cluster picker says why a cluster cannot be picked, in a few words
 * with the whole reason on hover, in a menu no wider than the picker.
 */

const server = setupServer();
registerMswTestHooks(server);

const PAYMENTS = 'component:default/payments';

const clusters = [
  cluster('sim-1', 'ONLINE'),
  cluster('sim-2', 'ONLINE'),
  cluster('sim-3', 'ONLINE', { labels: { env: 'prod' } }),
  cluster('sim-4', 'OFFLINE'),
];

/** payments' applications: none (a first deploy), or the ones given. */
function serve(applications: Application[] = []) {
  server.use(
    http.get(`${fleetBase}/applications`, () =>
      HttpResponse.json({ items: applications }),
    ),
  );
}

async function renderDialog(
  props: Partial<Parameters<typeof DeployDialog>[0]> = {},
) {
  await renderInTestApp(
    <TestApiProvider apis={[[fleetApiRef, mswFleetClient()]]}>
      <DeployDialog
        open
        entityRef={PAYMENTS}
        clusters={clusters}
        preferredClusters={['sim-1', 'sim-2']}
        defaultImage="ghcr.io/acme/payments:1.4.2"
        onClose={jest.fn()}
        onDeployed={jest.fn()}
        {...props}
      />
    </TestApiProvider>,
  );
}

async function pick(name: string) {
  await userEvent.click(screen.getByRole('button', { name: 'Cluster' }));
  const listbox = await screen.findByRole('listbox');
  await userEvent.click(within(listbox).getByText(`${name} — ONLINE`));
}

describe('DeployDialog: placement', () => {
  it("says the component's cnp.io/clusters also places it on the other cluster", async () => {
    serve();
    await renderDialog();
    await pick('sim-2');
    expect(
      await screen.findByRole('status', { name: 'Placement' }),
    ).toHaveTextContent(
      "payments is also placed on sim-1 (from the component's cnp.io/clusters): Fleet deploys it there too at its next reconcile, unless it runs there already.",
    );
  });

  it('names the clusters a selector annotation adds', async () => {
    serve();
    await renderDialog({ clusterSelector: 'env=prod' });
    await pick('sim-2');
    // sim-3 joins by the selector annotation.
    expect(
      await screen.findByRole('status', { name: 'Placement' }),
    ).toHaveTextContent(
      "payments is also placed on sim-1 (from the component's cnp.io/clusters) and sim-3 (from the component's cnp.io/cluster-selector env=prod)",
    );
  });

  it('warns that a cluster outside the placement is marked no longer placed, and names the placement', async () => {
    serve();
    await renderDialog({ preferredClusters: ['sim-1'] });
    await pick('sim-2');
    const warning = await screen.findByRole('status', { name: 'Placement' });
    expect(warning).toHaveTextContent(
      'sim-2 is outside payments\'s placement (sim-1 (from the component\'s cnp.io/clusters)): Fleet deploys it, then its next reconcile marks the deployment "no longer placed": it stays, but Fleet never heals it again.',
    );
    expect(warning).toHaveTextContent('payments is also placed on sim-1');
  });

  it("reads the application's own placement once known, and says when it prunes", async () => {
    serve([
      {
        ...application('app-1', PAYMENTS),
        placement: { clusters: ['sim-3'], prune: true },
      },
    ]);
    await renderDialog();
    await pick('sim-1');
    await waitFor(() =>
      expect(
        screen.getByRole('status', { name: 'Placement' }),
      ).toHaveTextContent(
        "sim-1 is outside payments's placement (sim-3 (from the application's placement)): Fleet deploys it, then its next reconcile undeploys it again (the placement prunes what it does not select).",
      ),
    );
    await pick('sim-3');
    await waitFor(() =>
      expect(screen.queryByRole('status', { name: 'Placement' })).toBeNull(),
    );
  });

  it('says nothing of a placement when nothing places the component', async () => {
    serve();
    await renderDialog({ preferredClusters: [] });
    await pick('sim-2');
    await new Promise(r => setTimeout(r, 50));
    expect(screen.queryByRole('status', { name: 'Placement' })).toBeNull();
  });
});

describe('DeployDialog: the cluster picker', () => {
  it('keeps the menu within the picker, an OFFLINE reason short, the whole on hover', async () => {
    serve();
    const width = jest
      .spyOn(HTMLElement.prototype, 'clientWidth', 'get')
      .mockReturnValue(480);
    try {
      await renderDialog();
      await userEvent.click(screen.getByRole('button', { name: 'Cluster' }));
      const listbox = await screen.findByRole('listbox');
      const paper = listbox.closest('.MuiPaper-root') as HTMLElement;
      expect(paper.style.maxWidth).toBe('480px');
      const offline = within(listbox)
        .getByText('sim-4 — OFFLINE')
        .closest('li')!;
      expect(offline).toHaveAttribute('aria-disabled', 'true');
      const short = within(offline).getByText('Unavailable: Outage confirmed');
      expect(offline).not.toHaveTextContent('socket hang up');
      await userEvent.hover(short);
      expect(await screen.findByRole('tooltip')).toHaveTextContent(
        'Outage confirmed (FAILURE_THRESHOLD_REACHED): 2/2 consecutive probes failed: socket hang up',
      );
      // A click on the reason picks nothing.
      await userEvent.click(short);
      await waitFor(() => expect(screen.queryByRole('listbox')).toBeNull());
      expect(screen.getByRole('button', { name: 'Cluster' })).toHaveTextContent(
        'sim-1 — ONLINE',
      );
    } finally {
      width.mockRestore();
    }
  });

  it("says an ONLINE cluster's failed probe is not an outage yet, rather than contradict its status", async () => {
    serve();
    await renderDialog({
      clusters: [
        cluster('sim-1', 'ONLINE', {
          statusReason:
            'PROBE_FAILED: 1/2 consecutive probes failed: connect ECONNREFUSED',
        }),
      ],
    });
    expect(
      screen.getByText(
        'ONLINE: its last probe failed, not yet confirmed as an outage',
      ),
    ).toBeInTheDocument();
    expect(screen.queryByText(/ECONNREFUSED/)).toBeNull();
  });

  it('says why nothing can be picked when every cluster is OFFLINE', async () => {
    serve();
    await renderDialog({ clusters: [cluster('sim-4', 'OFFLINE')] });
    expect(
      screen.getByText('Every cluster is OFFLINE: none can be deployed to now'),
    ).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Deploy' })).toBeDisabled();
  });
});
