import { renderInTestApp, TestApiProvider } from '@backstage/test-utils';
import type { StageStatus } from '@cnp/plugin-fleet-common';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { fleetApiRef } from '../../api';
import {
  cluster,
  mockFleetApi,
  progressiveRelease,
} from '../../testUtils/fixtures';
import { stages } from '../../testUtils/gateFixtures';
import { ReleaseDialog } from './ReleaseDialog';

async function renderDialog(api = mockFleetApi(), withStages?: StageStatus[]) {
  await renderInTestApp(
    <TestApiProvider apis={[[fleetApiRef, api]]}>
      <ReleaseDialog
        open
        componentName="payments"
        applicationId="app-1"
        clusters={[cluster('sim-1', 'ONLINE'), cluster('sim-2', 'ONLINE')]}
        placedClusters={['sim-1', 'sim-2']}
        defaultImage="ghcr.io/acme/payments:1.5.0"
        stages={withStages}
        onClose={jest.fn()}
        onReleased={jest.fn()}
      />
    </TestApiProvider>,
  );
  return api;
}

describe('ReleaseDialog with stages', () => {
  it('offers the stages, says what keeps one from its required version, and sends the stage picked', async () => {
    const api = await renderDialog(
      mockFleetApi({
        createRelease: jest.fn().mockResolvedValue(progressiveRelease()),
      }),
      stages(),
    );
    const stage = screen.getByRole('combobox', { name: 'Stage' });
    expect(stage).toHaveValue('');
    // No stage is no way around prod's rules: the helper says so.
    expect(
      screen.getByText(
        'None: the release goes to the clusters below; to a cluster of stage prod, it is a release to that stage all the same',
      ),
    ).toBeInTheDocument();
    expect(screen.getAllByRole('option').map(o => o.textContent)).toEqual([
      'None',
      'staging',
      'prod',
    ]);

    await userEvent.selectOptions(stage, 'prod');
    expect(
      screen.getByText('Not ready: staging soaks 1.5.0 for another 60 minutes'),
    ).toBeInTheDocument();
    expect(
      screen.getByText('None picked: every cluster of the stage'),
    ).toBeInTheDocument();

    await userEvent.selectOptions(stage, 'staging');
    expect(screen.getByText('Clusters: sim-1')).toBeInTheDocument();
    await userEvent.click(
      screen.getByRole('button', { name: 'Start release' }),
    );
    await waitFor(() =>
      expect(api.createRelease).toHaveBeenCalledWith('app-1', {
        image: 'ghcr.io/acme/payments:1.5.0',
        stage: 'staging',
      }),
    );
  });

  it("previews the stage's clusters when none is picked", async () => {
    const api = await renderDialog(
      mockFleetApi({
        previewApplication: jest.fn().mockResolvedValue({
          source: null,
          clusters: [],
        }),
      }),
      stages(),
    );
    await userEvent.selectOptions(
      screen.getByRole('combobox', { name: 'Stage' }),
      'prod',
    );
    await userEvent.click(screen.getByRole('button', { name: 'Preview' }));
    await waitFor(() =>
      expect(api.previewApplication).toHaveBeenCalledWith('app-1', {
        image: 'ghcr.io/acme/payments:1.5.0',
        clusters: ['sim-2', 'sim-3'],
      }),
    );
  });

  it('has no Stage field for an application without stages', async () => {
    await renderDialog(mockFleetApi(), []);
    expect(screen.getByRole('button', { name: 'Start release' })).toBeEnabled();
    expect(screen.queryByRole('combobox', { name: 'Stage' })).toBeNull();
  });
});
