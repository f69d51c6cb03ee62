import { configApiRef } from '@backstage/core-plugin-api';
import { entityRouteRef } from '@backstage/plugin-catalog-react';
import {
  mockApis,
  renderInTestApp,
  TestApiProvider,
} from '@backstage/test-utils';
import { screen } from '@testing-library/react';
import { ClusterLink } from './ClusterLink';

const mountedRoutes = { '/catalog/:namespace/:kind/:name': entityRouteRef };

describe('ClusterLink', () => {
  it("links a cluster's name to its Resource in the default namespace", async () => {
    await renderInTestApp(<ClusterLink name="sim-1" />, { mountedRoutes });
    expect(screen.getByRole('link', { name: 'sim-1' })).toHaveAttribute(
      'href',
      '/catalog/default/resource/sim-1',
    );
  });

  it('follows fleet.catalog.namespace, where the catalog module publishes clusters', async () => {
    await renderInTestApp(
      <TestApiProvider
        apis={[
          [
            configApiRef,
            mockApis.config({
              data: { fleet: { catalog: { namespace: 'infra' } } },
            }),
          ],
        ]}
      >
        <ClusterLink name="sim-1" />
      </TestApiProvider>,
      { mountedRoutes },
    );
    expect(screen.getByRole('link', { name: 'sim-1' })).toHaveAttribute(
      'href',
      '/catalog/infra/resource/sim-1',
    );
  });
});
