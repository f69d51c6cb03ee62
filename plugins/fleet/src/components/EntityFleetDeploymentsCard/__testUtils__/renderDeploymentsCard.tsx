import {
  EntityProvider,
  entityRouteRef,
} from '@backstage/plugin-catalog-react';
import {
  permissionApiRef,
  type PermissionApi,
} from '@backstage/plugin-permission-react';
import {
  mockApis,
  renderInTestApp,
  TestApiProvider,
} from '@backstage/test-utils';
import { SWRConfig } from 'swr';
import { fleetApiRef } from '../../../api';
import { EntityFleetDeploymentsCard } from '../EntityFleetDeploymentsCard';
import { mockFleetApi, paymentsEntity } from '../../../testUtils/fixtures';

/**
 * The deployments card of the payments component; every permission allowed unless told. Each
 * render gets its own permission cache (`usePermission` keeps answers in SWR's global one).
 */
export async function renderDeploymentsCard(
  api = mockFleetApi(),
  options: { pollIntervalMs?: number; permissionApi?: PermissionApi } = {},
) {
  await renderInTestApp(
    <TestApiProvider
      apis={[
        [fleetApiRef, api],
        [permissionApiRef, options.permissionApi ?? mockApis.permission()],
      ]}
    >
      <SWRConfig value={{ provider: () => new Map() }}>
        <EntityProvider entity={paymentsEntity}>
          <EntityFleetDeploymentsCard pollIntervalMs={options.pollIntervalMs} />
        </EntityProvider>
      </SWRConfig>
    </TestApiProvider>,
    // Cluster names link to their catalog pages.
    { mountedRoutes: { '/catalog/:namespace/:kind/:name': entityRouteRef } },
  );
  return api;
}
