import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { ResponseError } from '@backstage/errors';
import { mockApis } from '@backstage/test-utils';
import { cleanup, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import {
  deployment,
  mockFleetApi,
  progressiveRelease,
  release,
} from '../../testUtils/fixtures';
import { renderDeploymentsCard } from '../EntityFleetDeploymentsCard/__testUtils__/renderDeploymentsCard';

/** The card of payments, deployed on sim-1 (application app-1), with these releases. */
function withReleases(releases: jest.Mock, extra = {}) {
  return mockFleetApi({
    listDeployments: jest
      .fn()
      .mockResolvedValue([deployment('sim-1', 'DEPLOYED')]),
    listReleases: releases,
    ...extra,
  });
}

async function section() {
  return within(await screen.findByTestId('fleet-release'));
}

describe('ReleasePanel', () => {
  it('shows the running release as waves × clusters: state, step, weight, mode, pause and analysis', async () => {
    const api = withReleases(
      jest.fn().mockResolvedValue([progressiveRelease()]),
    );
    await renderDeploymentsCard(api);
    const releases = await section();
    const sim1 = await releases.findByTestId('fleet-release-cluster-sim-1');
    expect(sim1).toHaveTextContent('20%');
    expect(within(sim1).getByTestId('state')).toHaveTextContent('Running');
    expect(within(sim1).getByText('Running')).toHaveAttribute(
      'title',
      'RUNNING',
    );
    expect(sim1).toHaveTextContent(
      'Step 2 / 5 · Rollout · waiting for promote',
    );
    // The latest measurement only, its phase in words.
    expect(sim1).toHaveTextContent(
      'http-success-rate: 0.9812 ✗ result[0] >= 0.995 Failed',
    );
    expect(sim1).not.toHaveTextContent('0.999');
    expect(
      within(sim1).getByRole('progressbar', {
        name: 'Canary weight on sim-1',
      }),
    ).toHaveAttribute('aria-valuenow', '20');
    const wave2 = releases.getByRole('group', { name: 'Wave 2' });
    expect(wave2).toHaveTextContent('Wave 2 (waiting)');
    expect(
      within(wave2).getByTestId('fleet-release-cluster-sim-2'),
    ).toHaveTextContent(
      /Waiting.*0%.*Step 1 \/ 5 · Replicas.*starts once wave 1 is done/,
    );
    expect(
      within(wave2).getByTestId('fleet-release-cluster-sim-3'),
    ).toHaveTextContent('not started');
    expect(api.listReleases).toHaveBeenCalledWith('app-1');
  });

  it('promotes, then refreshes the card', async () => {
    const listReleases = jest.fn().mockResolvedValue([progressiveRelease()]);
    const api = withReleases(listReleases, {
      promoteRelease: jest.fn().mockResolvedValue(progressiveRelease()),
    });
    await renderDeploymentsCard(api);
    const releases = await section();
    const promote = await releases.findByRole('button', { name: 'Promote' });
    await waitFor(() => expect(promote).toBeEnabled());
    const before = listReleases.mock.calls.length;
    await userEvent.click(promote);
    expect(api.promoteRelease).toHaveBeenCalledWith('rel-2');
    await waitFor(() =>
      expect(listReleases.mock.calls.length).toBeGreaterThan(before),
    );
  });

  it('disables Promote while the release is paused or no cluster of its wave is in a pause, and shows the API words when an action is refused', async () => {
    const refused = await ResponseError.fromResponse(
      new Response(
        JSON.stringify({
          error: {
            name: 'ConflictError',
            message: 'The release is ABORTING: there is nothing to resume',
          },
        }),
        { status: 409, headers: { 'Content-Type': 'application/json' } },
      ) as any,
    );
    const paused = progressiveRelease({ status: 'PAUSED' });
    const api = withReleases(jest.fn().mockResolvedValue([paused]), {
      resumeRelease: jest.fn().mockRejectedValue(refused),
    });
    await renderDeploymentsCard(api);
    const releases = await section();
    expect(releases.queryByRole('button', { name: 'Pause' })).toBeNull();
    const resume = await releases.findByRole('button', { name: 'Resume' });
    await waitFor(() => expect(resume).toBeEnabled());
    expect(releases.getByRole('button', { name: 'Promote' })).toBeDisabled();
    await userEvent.click(resume);
    expect(api.resumeRelease).toHaveBeenCalledWith('rel-2');
    expect(await releases.findByRole('alert')).toHaveTextContent(
      'The release is ABORTING: there is nothing to resume',
    );
    cleanup();

    // Running, but its wave's cluster is moving to a weight, not waiting in a pause.
    const moving = progressiveRelease();
    moving.progress!.clusters = moving.progress!.clusters.map(c =>
      c.wave === moving.progress!.currentWave
        ? { ...c, stepIndex: 0, awaitingPromote: false }
        : c,
    );
    await renderDeploymentsCard(
      withReleases(jest.fn().mockResolvedValue([moving])),
    );
    const running = await section();
    await waitFor(() =>
      expect(running.getByRole('button', { name: 'Pause' })).toBeEnabled(),
    );
    expect(running.getByRole('button', { name: 'Promote' })).toBeDisabled();
  });

  it('aborts only once confirmed', async () => {
    const api = withReleases(
      jest.fn().mockResolvedValue([progressiveRelease()]),
      { abortRelease: jest.fn().mockResolvedValue(progressiveRelease()) },
    );
    await renderDeploymentsCard(api);
    const releases = await section();
    const abort = await releases.findByRole('button', {
      name: 'Abort release',
    });
    await waitFor(() => expect(abort).toBeEnabled());
    await userEvent.click(abort);
    const dialog = await screen.findByRole('dialog', {
      name: 'Abort the release of payments?',
    });
    expect(api.abortRelease).not.toHaveBeenCalled();
    await userEvent.click(
      within(dialog).getByRole('button', { name: 'Abort' }),
    );
    await waitFor(() => expect(api.abortRelease).toHaveBeenCalledWith('rel-2'));
  });

  it('disables the controls and Release without fleet.release.manage', async () => {
    await renderDeploymentsCard(
      withReleases(jest.fn().mockResolvedValue([progressiveRelease()])),
      {
        permissionApi: mockApis.permission({
          authorize: r =>
            r.permission.name === 'fleet.release.manage'
              ? AuthorizeResult.DENY
              : AuthorizeResult.ALLOW,
        }),
      },
    );
    const releases = await section();
    const promote = await releases.findByRole('button', { name: 'Promote' });
    await waitFor(() => expect(promote).toBeDisabled());
    for (const name of ['Pause', 'Abort release'])
      expect(releases.getByRole('button', { name })).toBeDisabled();
    expect(screen.getByRole('button', { name: 'Release' })).toBeDisabled();
    expect(screen.getByRole('button', { name: 'Deploy' })).toBeEnabled();
  });

  it('lists finished releases with outcome, image, author and, when rolled back, why', async () => {
    const abort = {
      reason: 'ANALYSIS_FAILED' as const,
      message:
        "http-success-rate on sim-1: 0.981 does not meet 'result[0] >= 0.995' (2 failed, limit 1)",
      cluster: 'sim-1',
      at: new Date().toISOString(),
    };
    const base = progressiveRelease();
    await renderDeploymentsCard(
      withReleases(
        jest.fn().mockResolvedValue([
          {
            ...base,
            id: 'rel-3',
            status: 'ROLLED_BACK',
            createdBy: 'user:default/bob',
            progress: { ...base.progress!, phase: 'ROLLED_BACK', abort },
          },
          { ...release(['sim-1']), id: 'rel-1', status: 'COMPLETED' },
        ]),
      ),
    );
    const history = await screen.findByRole('table', {
      name: 'Release history',
    });
    const rows = within(history).getAllByRole('row').slice(1);
    expect(rows[0]).toHaveTextContent(
      /Rolled back.*payments:1\.5\.0.*bob.*http-success-rate on sim-1: 0\.981 does not meet 'result\[0\] >= 0\.995'/,
    );
    expect(rows[1]).toHaveTextContent(/Completed.*payments:1\.5\.0/);
    expect(
      (await section()).getByText('No release under way.'),
    ).toBeInTheDocument();
  });

  it("names the version of a release of the component's own manifests, whole on one line, running and finished", async () => {
    const running = {
      ...release(['sim-1']),
      id: 'rel-2',
      image: null,
      version: 'v2',
    };
    await renderDeploymentsCard(
      withReleases(
        jest
          .fn()
          .mockResolvedValue([
            running,
            { ...running, id: 'rel-1', version: 'v1', status: 'COMPLETED' },
          ]),
      ),
    );
    const panel = await section();
    const under = panel.getByRole('region', { name: 'Running release' });
    expect(under).toHaveTextContent(
      'Progressing — version v2, started just now by alice',
    );
    expect(under).not.toHaveTextContent('current image');
    expect(within(under).getByText('version v2')).toHaveStyle({
      whiteSpace: 'nowrap',
    });
    const history = panel.getByRole('table', { name: 'Release history' });
    const row = within(history).getAllByRole('row')[1];
    expect(row).toHaveTextContent(/Completed.*version v1.*alice/);
    expect(within(row).getByText('version v1')).toHaveStyle({
      whiteSpace: 'nowrap',
    });
  });

  it('opens the Release dialog from the card, the image from the annotation, and refreshes after a release', async () => {
    const listReleases = jest.fn().mockResolvedValue([]);
    const api = withReleases(listReleases, {
      createRelease: jest.fn().mockResolvedValue(progressiveRelease()),
    });
    await renderDeploymentsCard(api);
    const button = await screen.findByRole('button', { name: 'Release' });
    await waitFor(() => expect(button).toBeEnabled());
    await userEvent.click(button);
    const dialog = await screen.findByRole('dialog', {
      name: 'Release payments',
    });
    expect(within(dialog).getByRole('textbox', { name: 'Image' })).toHaveValue(
      'ghcr.io/acme/payments:1.4.2',
    );
    const before = listReleases.mock.calls.length;
    await userEvent.click(
      within(dialog).getByRole('button', { name: 'Start release' }),
    );
    await waitFor(() =>
      expect(api.createRelease).toHaveBeenCalledWith('app-1', {
        image: 'ghcr.io/acme/payments:1.4.2',
      }),
    );
    await waitFor(() =>
      expect(listReleases.mock.calls.length).toBeGreaterThan(before),
    );
  });

  it('keeps the deployments when the releases cannot be read', async () => {
    await renderDeploymentsCard(
      withReleases(jest.fn().mockRejectedValue(new Error('backend down'))),
    );
    expect(
      await screen.findByRole('table', { name: 'Deployments' }),
    ).toBeInTheDocument();
    expect(await screen.findByTestId('fleet-release')).toHaveTextContent(
      'Could not read the releases (backend down).',
    );
  });
});
