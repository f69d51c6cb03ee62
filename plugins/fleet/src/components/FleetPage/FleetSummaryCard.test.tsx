import { renderInTestApp } from '@backstage/test-utils';
import { screen, within } from '@testing-library/react';
import { summary } from '../../testUtils/fixtures';
import { FleetSummaryCard } from './FleetSummaryCard';

describe('FleetSummaryCard', () => {
  it('counts clusters by status, and deployments by status and sync status', async () => {
    await renderInTestApp(
      <FleetSummaryCard
        summary={{
          ...summary,
          clusters: { total: 9, ONLINE: 5, OFFLINE: 3, UNKNOWN: 1 },
        }}
      />,
    );
    const clusters = screen.getByLabelText('Cluster counts');
    for (const [status, count] of [
      ['ONLINE', '5'],
      ['OFFLINE', '3'],
      ['UNKNOWN', '1'],
    ]) {
      expect(
        within(clusters).getByLabelText(`Cluster status: ${status}`)
          .parentElement,
      ).toHaveTextContent(`${status}${count}`);
    }
    // The deployments use the same chips and counts as the clusters.
    expect(screen.getByText('Deployments (1)')).toBeInTheDocument();
    const deployments = screen.getByLabelText('Deployment counts');
    for (const [status, count] of [
      ['PENDING', '0'],
      ['PROGRESSING', '0'],
      ['DEPLOYED', '1'],
      ['DEGRADED', '0'],
      ['FAILED', '0'],
    ]) {
      expect(
        within(deployments).getByLabelText(`Deployment status: ${status}`)
          .parentElement,
      ).toHaveTextContent(`${status}${count}`);
    }
    expect(
      within(deployments).queryByLabelText('Deployment status: REMOVING'),
    ).not.toBeInTheDocument();
    const sync = screen.getByLabelText('Sync counts');
    for (const [status, count] of [
      ['SYNCED', '1'],
      ['OUT OF SYNC', '0'],
      ['UNKNOWN', '0'],
    ]) {
      expect(
        within(sync).getByLabelText(`Sync status: ${status}`).parentElement,
      ).toHaveTextContent(`${status}${count}`);
    }
    expect(screen.queryByText(/Mass outage suspected/)).not.toBeInTheDocument();
  });

  it('counts deployments being removed only while there are some', async () => {
    await renderInTestApp(
      <FleetSummaryCard
        summary={{
          ...summary,
          deployments: {
            ...summary.deployments,
            total: 2,
            byStatus: { ...summary.deployments.byStatus, REMOVING: 1 },
          },
        }}
      />,
    );
    expect(screen.getByText('Deployments (2)')).toBeInTheDocument();
    expect(
      within(screen.getByLabelText('Deployment counts')).getByLabelText(
        'Deployment status: REMOVING',
      ).parentElement,
    ).toHaveTextContent('REMOVING1');
  });
});
