import {
  EntityProvider,
  entityRouteRef,
} from '@backstage/plugin-catalog-react';
import { renderInTestApp, TestApiProvider } from '@backstage/test-utils';
import { ResponseError } from '@backstage/errors';
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

/** The Fleet API's answer to a cluster it does not know, as the client throws it. */
async function notFound(name: string) {
  return ResponseError.fromResponse(
    new Response(
      JSON.stringify({
        error: {
          name: 'NotFoundError',
          message: `Cluster '${name}' not found`,
        },
        response: { statusCode: 404 },
      }),
      {
        status: 404,
        statusText: 'Not Found',
        headers: { 'Content-Type': 'application/json' },
      },
    ) as any,
  );
}

describe('EntityFleetClusterCard', () => {
  it('says a kubernetes-cluster Resource Fleet does not know is not managed by Fleet, rather than showing an error', async () => {
    const error = await notFound('sim-2');
    const api = mockFleetApi({
      getCluster: jest.fn().mockRejectedValue(error),
      listClusterEvents: jest.fn().mockRejectedValue(error),
    });
    await renderInTestApp(
      <TestApiProvider apis={[[fleetApiRef, api]]}>
        <EntityProvider entity={clusterEntity}>
          <EntityFleetClusterCard />
        </EntityProvider>
      </TestApiProvider>,
    );
    expect(
      await screen.findByText(/is not managed by Fleet/),
    ).toHaveTextContent(/^sim-2 is not managed by Fleet/);
    expect(screen.queryByText(/not found/i)).not.toBeInTheDocument();
  });

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
      { mountedRoutes: { '/catalog/:namespace/:kind/:name': entityRouteRef } },
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
    ).toHaveTextContent(/payments.*DEGRADED.*Cluster offline/);
    expect(screen.getByRole('list', { name: 'Events' })).toHaveTextContent(
      /ONLINE → OFFLINE — Outage confirmed/,
    );
    expect(api.getCluster).toHaveBeenCalledWith('sim-2');
  });

  it('is only for kubernetes-cluster resources', () => {
    expect(isFleetClusterEntity(clusterEntity)).toBe(true);
    expect(isFleetClusterEntity(paymentsEntity)).toBe(false);
  });
});
