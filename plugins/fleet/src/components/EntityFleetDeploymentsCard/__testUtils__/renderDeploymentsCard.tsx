import type { Entity } from '@backstage/catalog-model';
import { identityApiRef } from '@backstage/core-plugin-api';
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
import { fleetApiRef, type FleetApi } from '../../../api';
import { EntityFleetDeploymentsCard } from '../EntityFleetDeploymentsCard';
import { mockFleetApi, paymentsEntity } from '../../../testUtils/fixtures';

/**
 * The deployments card of the payments component (or `entity`), signed in as `user` (default
 * user:default/test) whose token claims membership of `groups` (none unless told); every
 * permission allowed unless told. Each render gets its own permission
 * cache (`usePermission` keeps answers in SWR's global one).
 */
export async function renderDeploymentsCard<
  Api extends FleetApi = ReturnType<typeof mockFleetApi>,
>(
  api: Api = mockFleetApi() as unknown as Api,
  options: {
    pollIntervalMs?: number;
    permissionApi?: PermissionApi;
    entity?: Entity;
    user?: string;
    groups?: string[];
  } = {},
) {
  const user = options.user ?? 'user:default/test';
  await renderInTestApp(
    <TestApiProvider
      apis={[
        [fleetApiRef, api],
        [permissionApiRef, options.permissionApi ?? mockApis.permission()],
        [
          identityApiRef,
          mockApis.identity({
            userEntityRef: user,
            ownershipEntityRefs: [user, ...(options.groups ?? [])],
          }),
        ],
      ]}
    >
      <SWRConfig value={{ provider: () => new Map() }}>
        <EntityProvider entity={options.entity ?? paymentsEntity}>
          <EntityFleetDeploymentsCard pollIntervalMs={options.pollIntervalMs} />
        </EntityProvider>
      </SWRConfig>
    </TestApiProvider>,
    // Cluster names link to their catalog pages.
    { mountedRoutes: { '/catalog/:namespace/:kind/:name': entityRouteRef } },
  );
  return api;
}
