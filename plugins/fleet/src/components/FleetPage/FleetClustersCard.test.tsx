import { entityRouteRef } from '@backstage/plugin-catalog-react';
import { renderInTestApp } from '@backstage/test-utils';
import type { ReactElement } from 'react';

/** Renders with the catalog's entity route mounted: cluster names link to their pages. */
const renderCard = (element: ReactElement) =>
  renderInTestApp(element, {
    mountedRoutes: { '/catalog/:namespace/:kind/:name': entityRouteRef },
  });
import type { Cluster } from '@cnp/plugin-fleet-common';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { manyClusters } from '../../testUtils/fixtures';
import {
  FleetClustersCard,
  type ClusterStatusFilter,
} from './FleetClustersCard';

const shownClusters = () =>
  within(screen.getByRole('table', { name: 'Clusters' }))
    .getAllByRole('row')
    .slice(1)
    .map(r => r.getAttribute('data-cluster'));

/** The card over `all`, holding the status filter as FleetPage does and answering at once. */
function WithStatus(props: {
  all: Cluster[];
  onStatusChange: (status: ClusterStatusFilter) => void;
}) {
  const [status, setStatus] = useState<ClusterStatusFilter>('ALL');
  return (
    <FleetClustersCard
      clusters={props.all.filter(c => status === 'ALL' || c.status === status)}
      fleetSize={props.all.length}
      status={status}
      onStatusChange={s => {
        props.onStatusChange(s);
        setStatus(s);
      }}
      loading={false}
    />
  );
}

describe('FleetClustersCard', () => {
  it('shows an endpoint as its host and its path, each kept on one line, the whole URL as its label', async () => {
    const [one] = manyClusters(1);
    await renderCard(
      <FleetClustersCard
        clusters={[
          { ...one, endpoint: 'https://127.0.0.1:6550/clusters/sim-2' },
        ]}
        fleetSize={1}
        status="ALL"
        onStatusChange={() => {}}
        loading={false}
      />,
    );
    const endpoint = screen.getByLabelText(
      'https://127.0.0.1:6550/clusters/sim-2',
    );
    const parts = within(endpoint).getAllByText(/./);
    expect(parts.map(p => [p.tagName, p.textContent])).toEqual([
      ['CODE', '127.0.0.1:6550'],
      ['CODE', '/clusters/sim-2'],
    ]);
    for (const part of parts) {
      expect(part).toHaveStyle({ whiteSpace: 'nowrap' });
    }
  });

  it('shows the error in place of the table, with the filters still there', async () => {
    await renderCard(
      <FleetClustersCard
        clusters={undefined}
        fleetSize={0}
        status="OFFLINE"
        onStatusChange={jest.fn()}
        error={new Error('backend unavailable')}
        loading={false}
      />,
    );
    expect(
      (await screen.findAllByText(/backend unavailable/)).length,
    ).toBeGreaterThan(0);
    expect(
      screen.queryByRole('table', { name: 'Clusters' }),
    ).not.toBeInTheDocument();
    expect(
      screen.getByRole('searchbox', { name: 'Name or label filter' }),
    ).toBeInTheDocument();
    expect(
      screen.getByRole('button', { name: 'Status filter' }),
    ).toHaveTextContent('OFFLINE');
  });

  it('shows a spinner while the first answer loads', async () => {
    await renderCard(
      <FleetClustersCard
        clusters={undefined}
        fleetSize={0}
        status="ALL"
        onStatusChange={jest.fn()}
        loading
      />,
    );
    expect(await screen.findByRole('progressbar')).toBeInTheDocument();
    expect(
      screen.queryByRole('status', { name: 'Clusters shown' }),
    ).not.toBeInTheDocument();
  });

  it('counts the clusters of a status out of the whole fleet, or out of what came if more did', async () => {
    const offline = manyClusters(9).filter(c => c.status === 'OFFLINE');
    const offlineCard = (clusters: Cluster[], fleetSize: number) => (
      <FleetClustersCard
        clusters={clusters}
        fleetSize={fleetSize}
        status="OFFLINE"
        onStatusChange={jest.fn()}
        loading={false}
      />
    );
    const shown = () => screen.getByRole('status', { name: 'Clusters shown' });
    const { rerender } = await renderCard(offlineCard(offline, 60));
    expect(shown()).toHaveTextContent('3 of 60 clusters');

    rerender(offlineCard(offline, 2));
    expect(shown()).toHaveTextContent('3 of 3 clusters');

    rerender(offlineCard([], 60));
    expect(screen.getByText('No OFFLINE clusters.')).toBeInTheDocument();
  });

  it('hands a new status to its caller and goes back to the first page', async () => {
    const onStatusChange = jest.fn();
    await renderCard(
      <WithStatus all={manyClusters(120)} onStatusChange={onStatusChange} />,
    );
    await userEvent.click(screen.getByRole('button', { name: 'Next page' }));
    expect(shownClusters()[0]).toBe('cluster-26');

    await userEvent.click(
      screen.getByRole('button', { name: 'Status filter' }),
    );
    await userEvent.click(
      await screen.findByRole('option', { name: 'OFFLINE' }),
    );
    expect(onStatusChange).toHaveBeenCalledTimes(1);
    expect(onStatusChange).toHaveBeenCalledWith('OFFLINE');
    expect(shownClusters()[0]).toBe('cluster-03');
    expect(screen.getByText('1-25 of 40')).toBeInTheDocument();
  });
});
