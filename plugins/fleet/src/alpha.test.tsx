import { coreExtensionData } from '@backstage/frontend-plugin-api';
import {
  createExtensionTester,
  renderInTestApp,
} from '@backstage/frontend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { permissionApiRef } from '@backstage/plugin-permission-react';
import { EntityCardBlueprint } from '@backstage/plugin-catalog-react/alpha';
import {
  EntityProvider,
  entityRouteRef,
} from '@backstage/plugin-catalog-react';
import { screen, within } from '@testing-library/react';
import { fleetApiRef } from './api';
import fleetPlugin, { fleetDeploymentsEntityCard, fleetPage } from './alpha';
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

  it('shows the deployments card on components, by an entity predicate', () => {
    // A string filter ('kind:component') still works but the app warns that it is deprecated.
    const tester = createExtensionTester(fleetDeploymentsEntityCard);
    expect(
      tester
        .query(fleetDeploymentsEntityCard)
        .get(EntityCardBlueprint.dataRefs.filterExpression),
    ).toBeUndefined();
    const filter = tester.get(EntityCardBlueprint.dataRefs.filterFunction);
    expect(filter?.(paymentsEntity)).toBe(true);
    expect(filter?.({ ...paymentsEntity, kind: 'Resource' })).toBe(false);
  });

  it('gives the page a title and an icon, so the app navigation lists it', () => {
    // The app's navigation leaves out pages without an icon.
    const tester = createExtensionTester(fleetPage);
    expect(tester.get(coreExtensionData.title)).toBe('Fleet');
    expect(tester.get(coreExtensionData.icon)).toBeTruthy();
    expect(tester.get(coreExtensionData.routePath)).toBe('/fleet');
  });

  it('renders the page with its own header only', async () => {
    const api = mockFleetApi();
    const permission = {
      authorize: jest.fn().mockResolvedValue({ result: AuthorizeResult.ALLOW }),
    };
    const apis = [
      [fleetApiRef, api],
      [permissionApiRef, permission],
    ] as const;
    const tester = createExtensionTester(fleetPage, { apis: [...apis] });
    renderInTestApp(tester.reactElement(), {
      apis: [...apis],
      mountedRoutes: { '/catalog/:namespace/:kind/:name': entityRouteRef },
    });
    await screen.findByRole('table', { name: 'Clusters' }, { timeout: 15_000 });
    // FleetPage draws its header; the app's default page header would repeat the title.
    expect(screen.getAllByRole('heading', { name: 'Fleet' })).toHaveLength(1);
  });

  it('is a plugin with id fleet', () => {
    expect(fleetPlugin.pluginId).toBe('fleet');
  });
});
