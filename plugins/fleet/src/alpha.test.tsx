import {
  createExtensionTester,
  renderInTestApp,
} from '@backstage/frontend-test-utils';
import {
  EntityProvider,
  entityRouteRef,
} from '@backstage/plugin-catalog-react';
import { screen, within } from '@testing-library/react';
import { fleetApiRef } from './api';
import fleetPlugin, { fleetDeploymentsEntityCard } from './alpha';
import { deployment, mockFleetApi, paymentsEntity } from './testUtils/fixtures';

describe('fleet plugin (new frontend system)', () => {
  it('renders the deployments entity card through the new frontend system', async () => {
    const api = mockFleetApi({
      listDeployments: jest
        .fn()
        .mockResolvedValue([deployment('sim-1', 'DEPLOYED')]),
    });
    const tester = createExtensionTester(fleetDeploymentsEntityCard, {
      apis: [[fleetApiRef, api]],
    });
    renderInTestApp(
      <EntityProvider entity={paymentsEntity}>
        {tester.reactElement()}
      </EntityProvider>,
      {
        apis: [[fleetApiRef, api]],
        // Cluster names link to their catalog pages.
        mountedRoutes: { '/catalog/:namespace/:kind/:name': entityRouteRef },
      },
    );
    // the card is lazy-loaded through the extension: allow a loaded machine some time
    const table = await screen.findByRole(
      'table',
      { name: 'Deployments' },
      { timeout: 15_000 },
    );
    expect(within(table).getByText('DEPLOYED')).toBeInTheDocument();
    expect(screen.getByRole('list', { name: 'Clusters' })).toHaveTextContent(
      /sim-2.*OFFLINE/,
    );
    expect(api.listDeployments).toHaveBeenCalledWith({
      entityRef: 'component:default/payments',
    });
  });

  it('is a plugin with id fleet', () => {
    expect(fleetPlugin.pluginId).toBe('fleet');
  });
});
