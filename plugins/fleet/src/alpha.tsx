import {
  compatWrapper,
  convertLegacyRouteRef,
} from '@backstage/core-compat-api';
import {
  ApiBlueprint,
  createFrontendPlugin,
  discoveryApiRef,
  fetchApiRef,
  PageBlueprint,
} from '@backstage/frontend-plugin-api';
import { EntityCardBlueprint } from '@backstage/plugin-catalog-react/alpha';
import CloudQueueIcon from '@material-ui/icons/CloudQueue';
import { FleetClient, fleetApiRef } from './api';
import { isFleetClusterEntity } from './components/EntityFleetClusterCard/EntityFleetClusterCard';
import { rootRouteRef } from './routes';

/** @alpha */
export const fleetApi = ApiBlueprint.make({
  params: defineParams =>
    defineParams({
      api: fleetApiRef,
      deps: { discoveryApi: discoveryApiRef, fetchApi: fetchApiRef },
      factory: ({ discoveryApi, fetchApi }) =>
        new FleetClient({ discoveryApi, fetchApi }),
    }),
});

/** @alpha */
export const fleetDeploymentsEntityCard = EntityCardBlueprint.make({
  name: 'deployments',
  params: {
    filter: { kind: 'component' },
    loader: () =>
      import('./components/EntityFleetDeploymentsCard').then(m =>
        compatWrapper(<m.EntityFleetDeploymentsCard />),
      ),
  },
});

/** @alpha */
export const fleetClusterEntityCard = EntityCardBlueprint.make({
  name: 'cluster',
  params: {
    filter: isFleetClusterEntity,
    loader: () =>
      import('./components/EntityFleetClusterCard').then(m =>
        compatWrapper(<m.EntityFleetClusterCard />),
      ),
  },
});

/**
 * The page at `/fleet`. Its title and icon make the app's navigation show a Fleet entry; the page
 * draws its own header (`FleetPage`), so the app's default page header is left out.
 *
 * @alpha
 */
export const fleetPage = PageBlueprint.make({
  params: {
    path: '/fleet',
    title: 'Fleet',
    icon: <CloudQueueIcon fontSize="inherit" />,
    noHeader: true,
    routeRef: convertLegacyRouteRef(rootRouteRef),
    loader: () =>
      import('./components/FleetPage').then(m =>
        compatWrapper(<m.FleetPage />),
      ),
  },
});

/**
 * The Fleet plugin for the new frontend system.
 *
 * @alpha
 */
export default createFrontendPlugin({
  pluginId: 'fleet',
  extensions: [
    fleetApi,
    fleetDeploymentsEntityCard,
    fleetClusterEntityCard,
    fleetPage,
  ],
  routes: { root: convertLegacyRouteRef(rootRouteRef) },
});
