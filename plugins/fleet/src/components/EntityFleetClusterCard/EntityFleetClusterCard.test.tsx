import { EntityProvider } from '@backstage/plugin-catalog-react';
import { renderInTestApp, TestApiProvider } from '@backstage/test-utils';
import { screen } from '@testing-library/react';
import { fleetApiRef } from '../../api';
import {
  cluster,
  clusterEntity,
  deployment,
  mockFleetApi,
  paymentsEntity,
} from '../../testUtils/fixtures';
import {
  EntityFleetClusterCard,
  isFleetClusterEntity,
} from './EntityFleetClusterCard';

describe('EntityFleetClusterCard', () => {
  it('shows status, endpoint, failures, labels, applications and events', async () => {
    const api = mockFleetApi({
      getCluster: jest.fn().mockResolvedValue(
        cluster('sim-2', 'OFFLINE', {
          labels: { env: 'prod' },
          consecutiveFailures: 7,
        }),
      ),
      listDeployments: jest
        .fn()
        .mockResolvedValue([
          deployment('sim-2', 'DEGRADED', { statusReason: 'CLUSTER_OFFLINE' }),
        ]),
    });
    await renderInTestApp(
      <TestApiProvider apis={[[fleetApiRef, api]]}>
        <EntityProvider entity={clusterEntity}>
          <EntityFleetClusterCard />
        </EntityProvider>
      </TestApiProvider>,
    );
    expect(await screen.findByText('Fleet cluster sim-2')).toBeInTheDocument();
    expect(
      screen.getByLabelText('Cluster status: OFFLINE'),
    ).toBeInTheDocument();
    expect(
      screen.getByText('https://127.0.0.1:6550/clusters/sim-2'),
    ).toBeInTheDocument();
    expect(
      screen.getByText('Consecutive failures').nextElementSibling,
    ).toHaveTextContent(/^7$/);
    expect(screen.getByText('env=prod')).toBeInTheDocument();
    expect(
      screen.getByRole('list', { name: 'Applications on this cluster' }),
    ).toHaveTextContent(
      /component:default\/payments.*DEGRADED.*CLUSTER_OFFLINE/,
    );
    expect(screen.getByRole('list', { name: 'Events' })).toHaveTextContent(
      /ONLINE → OFFLINE — Outage confirmed FAILURE_THRESHOLD_REACHED/,
    );
    expect(api.getCluster).toHaveBeenCalledWith('sim-2');
  });

  it('is only for kubernetes-cluster resources', () => {
    expect(isFleetClusterEntity(clusterEntity)).toBe(true);
    expect(isFleetClusterEntity(paymentsEntity)).toBe(false);
  });
});
