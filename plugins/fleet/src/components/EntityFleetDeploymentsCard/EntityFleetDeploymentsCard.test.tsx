import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import {
  application,
  cluster,
  deployment,
  ledgerEntity,
  manifestsPreview,
  mockFleetApi,
} from '../../testUtils/fixtures';
import { renderDeploymentsCard } from './__testUtils__/renderDeploymentsCard';

function renderCard(api = mockFleetApi(), pollIntervalMs?: number) {
  return renderDeploymentsCard(api, { pollIntervalMs });
}

describe('EntityFleetDeploymentsCard', () => {
  it('shows a progress bar while loading', async () => {
    await renderCard(
      mockFleetApi({ listDeployments: jest.fn(() => new Promise(() => {})) }),
    );
    expect(screen.getByTestId('progress')).toBeInTheDocument();
  });

  it('shows every target cluster with its state as text, and an empty state', async () => {
    const api = await renderCard();
    const clusters = await screen.findByRole('list', { name: 'Clusters' });
    expect(within(clusters).getByText('sim-1').closest('li')).toHaveTextContent(
      'ONLINE',
    );
    expect(within(clusters).getByText('sim-2').closest('li')).toHaveTextContent(
      'OFFLINE',
    );
    expect(within(clusters).getByText('sim-3').closest('li')).toHaveTextContent(
      'UNKNOWN',
    );
    // A known cluster's name opens its catalog page.
    expect(
      within(clusters).getByRole('link', { name: 'sim-1' }),
    ).toHaveAttribute('href', '/catalog/default/resource/sim-1');
    expect(
      screen.getByText('Not deployed to any cluster yet. Use Deploy to start.'),
    ).toBeInTheDocument();
    expect(api.listDeployments).toHaveBeenCalledWith({
      entityRef: 'component:default/payments',
    });
  });

  it('lists deployments with cluster state, status, reason, sync status and image', async () => {
    await renderCard(
      mockFleetApi({
        listDeployments: jest.fn().mockResolvedValue([
          deployment('sim-1', 'DEPLOYED'),
          deployment('sim-2', 'DEGRADED', {
            statusReason: 'CLUSTER_OFFLINE',
            syncStatus: 'UNKNOWN',
          }),
        ]),
      }),
    );
    const table = await screen.findByRole('table', { name: 'Deployments' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toHaveTextContent(
      /sim-1.*ONLINE.*DEPLOYED.*SYNCED.*ghcr.io\/acme\/payments:1.4.2/,
    );
    expect(rows[1]).toHaveTextContent(
      /sim-2.*OFFLINE.*DEGRADED.*Cluster offline.*UNKNOWN/,
    );
    // Each cluster name links to the cluster's catalog page.
    expect(
      within(rows[0]).getByRole('link', { name: 'sim-1' }),
    ).toHaveAttribute('href', '/catalog/default/resource/sim-1');
    // Relative to the fixture's time, built as the test started (seconds on a loaded machine).
    expect(
      within(rows[0]).getByText(/^(just now|\d+ seconds ago)$/),
    ).toHaveAttribute('title');
  });

  it('says which clusters the placement selects but may not use, and why', async () => {
    await renderCard(
      mockFleetApi({
        listDeployments: jest
          .fn()
          .mockResolvedValue([deployment('sim-1', 'DEPLOYED')]),
        listApplications: jest.fn().mockResolvedValue([
          {
            ...application(),
            placementRefused: [
              {
                cluster: 'sim-3',
                reason:
                  'Not allowed: fleet.cluster.deploy for user:default/ann',
              },
            ],
          },
        ]),
      }),
    );
    expect(
      await screen.findByText(
        'Not placed on sim-3: Not allowed: fleet.cluster.deploy for user:default/ann',
      ),
    ).toBeInTheDocument();
  });

  it('shows what differs on an OUT_OF_SYNC deployment', async () => {
    await renderCard(
      mockFleetApi({
        listDeployments: jest.fn().mockResolvedValue([
          deployment('sim-1', 'DEPLOYED', {
            syncStatus: 'OUT_OF_SYNC',
            syncDifferences: [
              {
                kind: 'Deployment',
                name: 'payments',
                path: '/spec/template/spec/containers/0/image',
              },
              { kind: 'Service', name: 'payments', path: '/' },
            ],
          }),
        ]),
      }),
    );
    const list = await screen.findByRole('list', {
      name: 'Differences on sim-1',
    });
    expect(list).toHaveTextContent(
      'Deployment payments: /spec/template/spec/containers/0/image',
    );
    expect(list).toHaveTextContent('Service payments: missing');
    expect(
      screen.getByLabelText('Sync status: OUT OF SYNC'),
    ).toBeInTheDocument();
  });

  it('asks for the clusters it shows by name, not the fleet, which it reads only when a dialog opens', async () => {
    const listClusters = jest.fn(async () => [cluster('sim-1', 'ONLINE')]);
    await renderCard(
      mockFleetApi({
        listClusters,
        listDeployments: jest
          .fn()
          .mockResolvedValue([deployment('sim-4', 'DEPLOYED')]),
      }),
    );
    await screen.findByRole('table', { name: 'Deployments' });
    // The annotation's clusters, then the one it is deployed to.
    expect(listClusters.mock.calls).toEqual([
      [{ names: ['sim-1', 'sim-2', 'sim-3', 'sim-4'] }],
    ]);
    await userEvent.click(
      await screen.findByRole('button', { name: 'Deploy' }),
    );
    await screen.findByRole('dialog');
    expect(listClusters).toHaveBeenCalledTimes(2);
    expect(listClusters).toHaveBeenLastCalledWith();
  });

  it('shows the API error when loading fails', async () => {
    await renderCard(
      mockFleetApi({
        listClusters: jest
          .fn()
          .mockRejectedValue(new Error('fleet backend unreachable')),
      }),
    );
    expect(
      (await screen.findAllByText(/fleet backend unreachable/)).length,
    ).toBeGreaterThan(0);
  });

  it('picks up status changes without a reload', async () => {
    let status: 'ONLINE' | 'OFFLINE' = 'ONLINE';
    const listClusters = jest.fn(async () => [cluster('sim-1', status)]);
    await renderCard(mockFleetApi({ listClusters }), 50);
    const clusters = await screen.findByRole('list', { name: 'Clusters' });
    expect(within(clusters).getByText('sim-1').closest('li')).toHaveTextContent(
      'ONLINE',
    );
    status = 'OFFLINE';
    await waitFor(() =>
      expect(
        within(clusters).getByText('sim-1').closest('li'),
      ).toHaveTextContent('OFFLINE'),
    );
  });

  it('keeps the last state and says so when a refresh fails', async () => {
    let fail = false;
    const listClusters = jest.fn(async () => {
      if (fail) throw new Error('backend restarting');
      return [cluster('sim-1', 'ONLINE')];
    });
    await renderCard(mockFleetApi({ listClusters }), 50);
    await screen.findByRole('list', { name: 'Clusters' });
    fail = true;
    expect(
      await screen.findByText(
        /Could not refresh \(backend restarting\); showing the last known state/,
      ),
    ).toBeInTheDocument();
    expect(screen.getByRole('list', { name: 'Clusters' })).toHaveTextContent(
      'ONLINE',
    );
  });

  it('deploys from the dialog and shows the new deployment', async () => {
    const created = deployment('sim-1', 'PROGRESSING');
    const listDeployments = jest
      .fn()
      .mockResolvedValueOnce([])
      .mockResolvedValue([created]);
    const api = await renderCard(
      mockFleetApi({
        listDeployments,
        createDeployment: jest.fn().mockResolvedValue(created),
      }),
    );
    await userEvent.click(
      await screen.findByRole('button', { name: 'Deploy' }),
    );
    const dialog = await screen.findByRole('dialog');
    await userEvent.click(
      within(dialog).getByRole('button', { name: 'Deploy' }),
    );
    expect(api.createDeployment).toHaveBeenCalledWith(
      expect.objectContaining({
        entityRef: 'component:default/payments',
        cluster: 'sim-1',
        image: 'ghcr.io/acme/payments:1.4.2',
      }),
    );
    const table = await screen.findByRole('table', { name: 'Deployments' });
    expect(within(table).getByText('PROGRESSING')).toBeInTheDocument();
  });

  it('asks for a version in the Deploy dialog of a component with its own manifests, and previews it', async () => {
    const ledger = application('app-9', 'component:default/ledger');
    const api = await renderDeploymentsCard(
      mockFleetApi({
        listApplications: jest.fn().mockResolvedValue([ledger]),
        previewApplication: jest.fn().mockResolvedValue(manifestsPreview()),
      }),
      { entity: ledgerEntity },
    );
    await userEvent.click(
      await screen.findByRole('button', { name: 'Deploy' }),
    );
    const dialog = await screen.findByRole('dialog');
    expect(
      within(dialog).getByRole('textbox', { name: 'Version' }),
    ).toBeInTheDocument();
    expect(dialog).toHaveTextContent(/manifests in dir:\.\/deploy/);
    // The manifests' own images are deployed unless one is typed: no cnp.io/image filled in.
    expect(within(dialog).getByRole('textbox', { name: 'Image' })).toHaveValue(
      '',
    );
    expect(
      within(dialog).getByRole('button', { name: 'Deploy' }),
    ).toBeDisabled();
    await userEvent.click(
      await within(dialog).findByRole('button', { name: 'Preview' }),
    );
    await within(dialog).findByRole('table', { name: 'Preview of sim-1' });
    expect(api.previewApplication).toHaveBeenCalledWith('app-9', {
      clusters: ['sim-1'],
    });
    expect(
      within(dialog).getByRole('button', { name: 'Deploy' }),
    ).toBeEnabled();
  });
});
