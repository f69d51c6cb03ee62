import { screen, waitFor, within } from '@testing-library/react';
import { deployment, mockFleetApi } from '../../testUtils/fixtures';
import { stages } from '../../testUtils/gateFixtures';
import { renderDeploymentsCard } from '../EntityFleetDeploymentsCard/__testUtils__/renderDeploymentsCard';
import { readinessText } from './stageText';

/** payments deployed on sim-1 and sim-2 (application app-1), with these stages. */
function withStages(listStages: jest.Mock) {
  return mockFleetApi({
    listDeployments: jest
      .fn()
      .mockResolvedValue([
        deployment('sim-1', 'DEPLOYED'),
        deployment('sim-2', 'DEPLOYED'),
      ]),
    listStages,
  });
}

describe('StageStrip', () => {
  it('shows each stage in order: what it runs, what it verified with the soak, and what keeps the next from taking it', async () => {
    const api = await renderDeploymentsCard(
      withStages(jest.fn().mockResolvedValue(stages())),
    );
    const strip = await screen.findByRole('region', { name: 'Stages' });
    const items = within(
      within(strip).getByRole('list', { name: 'Stages' }),
    ).getAllByRole('listitem', { name: /^Stage / });
    expect(items.map(i => i.getAttribute('aria-label'))).toEqual([
      'Stage staging',
      'Stage prod',
    ]);
    const [staging, prod] = items;
    expect(staging).toHaveTextContent('sim-1');
    expect(staging).toHaveTextContent('runs 1.5.0');
    expect(staging).toHaveTextContent(
      /verified 1\.5\.0 just now, soaked until /,
    );
    // The first stage requires none: nothing to be ready for.
    expect(within(staging).queryByTestId('stage-readiness')).toBeNull();
    expect(prod).toHaveTextContent('sim-2, sim-3');
    // sim-2 runs a version, sim-3 none: the stage's clusters differ.
    expect(prod).toHaveTextContent('runs mixed');
    expect(prod).toHaveTextContent('verified none yet');
    expect(within(prod).getByTestId('stage-readiness')).toHaveTextContent(
      'not ready to take 1.5.0',
    );
    expect(
      within(prod).getByRole('list', {
        name: "What keeps prod from taking staging's version",
      }),
    ).toHaveTextContent('staging soaks 1.5.0 for another 60 minutes');
    expect(api.listStages).toHaveBeenCalledWith('app-1');
  });

  it('says a stage is ready to take the verified version once nothing is missing', async () => {
    const [staging, prod] = stages();
    await renderDeploymentsCard(
      withStages(
        jest
          .fn()
          .mockResolvedValue([
            staging,
            { ...prod, version: 'ghcr.io/acme/payments:1.4.2', missing: [] },
          ]),
      ),
    );
    const prodItem = await screen.findByRole('listitem', {
      name: 'Stage prod',
    });
    expect(prodItem).toHaveTextContent('runs 1.4.2');
    expect(prodItem).toHaveTextContent('ready to take 1.5.0');
    expect(within(prodItem).queryByRole('list')).toBeNull();
  });

  it('shows nothing for an application without stages', async () => {
    const api = await renderDeploymentsCard(
      withStages(jest.fn().mockResolvedValue([])),
    );
    await screen.findByTestId('fleet-release');
    await waitFor(() => expect(api.listStages).toHaveBeenCalled());
    expect(screen.queryByRole('region', { name: 'Stages' })).toBeNull();
  });

  it('tells a stage that runs the verified version from one that may take it', () => {
    const [staging, prod] = stages();
    const verified = { ...prod, missing: [] };
    expect(readinessText(verified, staging)).toBe('ready to take 1.5.0');
    expect(
      readinessText(
        { ...verified, version: 'ghcr.io/acme/payments:1.5.0' },
        staging,
      ),
    ).toBe("runs staging's verified 1.5.0");
    expect(readinessText(verified, { ...staging, verified: null })).toBe(
      'staging verified no version yet',
    );
    expect(readinessText(staging)).toBeUndefined();
  });
});
