import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import {
  deployment,
  mockFleetApi,
  progressiveRelease,
} from '../../testUtils/fixtures';
import { judgedRelease } from '../../testUtils/judgmentFixtures';
import { renderDeploymentsCard } from '../EntityFleetDeploymentsCard/__testUtils__/renderDeploymentsCard';

/** The card of payments, deployed on sim-1, with this release running. */
async function renderWith(release = judgedRelease()) {
  await renderDeploymentsCard(
    mockFleetApi({
      listDeployments: jest
        .fn()
        .mockResolvedValue([deployment('sim-1', 'DEPLOYED')]),
      listReleases: jest.fn().mockResolvedValue([release]),
    }),
  );
  return within(await screen.findByTestId('fleet-release'));
}

/** The body rows of a table, keyed by the metric each names. */
function rowsOf(table: HTMLElement): Record<string, HTMLElement> {
  const rows = within(table).getAllByRole('row').slice(1);
  return Object.fromEntries(
    rows.map(r => [within(r).getByRole('rowheader').textContent!, r]),
  );
}

describe('the judgment of the canary against its baseline', () => {
  it("shows the newest judgment of a cluster: score, verdict, and each metric's medians, change, p and samples", async () => {
    const panel = await renderWith();
    const table = await panel.findByRole('table', {
      name: 'Judgment on sim-1',
    });
    expect(
      within(panel.getByTestId('fleet-judgment-sim-1')).getByTestId('verdict'),
    ).toHaveTextContent('Score 67 — Marginal: paused for a human');
    expect(
      within(table)
        .getAllByRole('columnheader')
        .map(h => h.textContent),
    ).toEqual([
      'Metric',
      'Result',
      'Canary median',
      'Baseline median',
      'Change',
      'p',
      'Samples',
      'Medians',
    ]);
    const rows = rowsOf(table);
    expect(Object.keys(rows)).toEqual([
      'latency-p99',
      'error-rate (weight 4)',
      'cpu',
    ]);
    const cells = (row: HTMLElement) =>
      within(row)
        .getAllByRole('cell')
        .map(c => c.textContent);
    expect(cells(rows['latency-p99'])).toEqual([
      'High',
      '130',
      '100',
      '+30 %',
      '< 0.001',
      '40 / 40',
      '',
    ]);
    expect(cells(rows['error-rate (weight 4)'])).toEqual([
      'Pass',
      '0.0102',
      '0.0101',
      '+1 %',
      '0.412',
      '40 / 40',
      '',
    ]);
    expect(
      within(rows['latency-p99']).getByLabelText('Result: High'),
    ).toBeInTheDocument();
    // p's cell says what it was held against; a judgment kept before that was recorded, nothing.
    expect(within(rows['latency-p99']).getByText('< 0.001')).toHaveAttribute(
      'title',
      'p held against a level of 0.0304 at this look, counting a serial correlation of 0.42',
    );
    expect(
      within(rows['error-rate (weight 4)']).getByText('0.412'),
    ).not.toHaveAttribute('title');
  });

  it('shows dashes, a grey chip and no marks for a metric without data', async () => {
    const panel = await renderWith();
    const table = await panel.findByRole('table', {
      name: 'Judgment on sim-1',
    });
    const cpu = rowsOf(table).cpu;
    expect(
      within(cpu)
        .getAllByRole('cell')
        .map(c => c.textContent),
    ).toEqual(['NoData', '—', '—', '—', '—', '12 / 40', '']);
    expect(within(cpu).getByLabelText('Result: NoData')).toBeInTheDocument();
    expect(within(cpu).queryByRole('img')).toBeNull();
  });

  it("marks the canary's median against the baseline's on one scale, labelled", async () => {
    const panel = await renderWith();
    const table = await panel.findByRole('table', {
      name: 'Judgment on sim-1',
    });
    const marks = within(rowsOf(table)['latency-p99']).getByRole('img', {
      name: 'Canary median 130 against baseline median 100',
    });
    const canary = Number(
      marks.querySelector('[data-mark="canary"]')!.getAttribute('cx'),
    );
    const baseline = Number(
      marks.querySelector('[data-mark="baseline"]')!.getAttribute('x'),
    );
    // 130 is the top of the scale (0 to 130), 100 about three quarters of the way.
    expect(canary).toBeGreaterThan(baseline + 10);
  });

  it('shows an earlier judgment once chosen', async () => {
    const panel = await renderWith();
    const choice = await panel.findByRole('combobox', {
      name: 'Judgment shown on sim-1',
    });
    expect(
      within(choice)
        .getAllByRole('option')
        .map(o => o.textContent),
    ).toEqual(['Step 2, 1 minute ago (newest)', 'Step 1, 2 minutes ago']);
    await userEvent.selectOptions(choice, 'Step 1, 2 minutes ago');
    const judgment = panel.getByTestId('fleet-judgment-sim-1');
    expect(within(judgment).getByTestId('verdict')).toHaveTextContent(
      'Score 100 — Pass: goes on',
    );
    const latency = rowsOf(
      panel.getByRole('table', { name: 'Judgment on sim-1' }),
    )['latency-p99'];
    expect(latency).toHaveTextContent(/Pass.*95.*100.*-5 %.*0\.200.*40 \/ 40/);
  });

  it('shows no judgment where no step was judged', async () => {
    const panel = await renderWith(progressiveRelease());
    await panel.findByTestId('fleet-release-cluster-sim-1');
    expect(
      panel.queryByRole('region', { name: 'Canary judgments' }),
    ).toBeNull();
    expect(panel.queryByRole('table', { name: /^Judgment on/ })).toBeNull();
  });
});
