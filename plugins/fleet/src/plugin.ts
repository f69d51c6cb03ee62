import {
  createApiFactory,
  createComponentExtension,
  createPlugin,
  createRoutableExtension,
  discoveryApiRef,
  fetchApiRef,
} from '@backstage/core-plugin-api';
import { FleetClient, fleetApiRef } from './api';
import { rootRouteRef } from './routes';

/**
 * The Fleet frontend plugin (legacy frontend system).
 *
 * @public
 */
export const fleetPlugin = createPlugin({
  id: 'fleet',
  apis: [
    createApiFactory({
      api: fleetApiRef,
      deps: { discoveryApi: discoveryApiRef, fetchApi: fetchApiRef },
      factory: ({ discoveryApi, fetchApi }) =>
        new FleetClient({ discoveryApi, fetchApi }),
    }),
  ],
  routes: { root: rootRouteRef },
});

/**
 * The fleet page: summary, clusters with a status filter, recent events.
 *
 * @public
 */
export const FleetPage: (props: { pollIntervalMs?: number }) => JSX.Element =
  fleetPlugin.provide(
    createRoutableExtension({
      name: 'FleetPage',
      component: () => import('./components/FleetPage').then(m => m.FleetPage),
      mountPoint: rootRouteRef,
    }),
  );

/**
 * For component pages: cluster states, deployments and the Deploy button.
 *
 * @public
 */
export const EntityFleetDeploymentsCard: (props: {
  pollIntervalMs?: number;
}) => JSX.Element = fleetPlugin.provide(
  createComponentExtension({
    name: 'EntityFleetDeploymentsCard',
    component: {
      lazy: () =>
        import('./components/EntityFleetDeploymentsCard').then(
          m => m.EntityFleetDeploymentsCard,
        ),
    },
  }),
);

/**
 * For cluster pages (`Resource` of type `kubernetes-cluster`).
 *
 * @public
 */
export const EntityFleetClusterCard: (props: {
  pollIntervalMs?: number;
}) => JSX.Element = fleetPlugin.provide(
  createComponentExtension({
    name: 'EntityFleetClusterCard',
    component: {
      lazy: () =>
        import('./components/EntityFleetClusterCard').then(
          m => m.EntityFleetClusterCard,
        ),
    },
  }),
);
