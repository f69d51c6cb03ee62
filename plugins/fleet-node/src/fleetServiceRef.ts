import {
  coreServices,
  createServiceFactory,
  createServiceRef,
} from '@backstage/backend-plugin-api';
import { FleetApiClient } from './FleetApiClient';
import type { FleetService } from './FleetService';

/**
 * The Fleet API for other backend plugins and modules. Its default implementation is a
 * {@link FleetApiClient} built from the depending plugin's own discovery and auth services, so
 * Fleet sees each call as coming from that plugin (or from the user it passes credentials for).
 *
 * @public
 */
export const fleetServiceRef = createServiceRef<FleetService>({
  id: 'fleet.client',
  defaultFactory: async service =>
    createServiceFactory({
      service,
      deps: {
        discovery: coreServices.discovery,
        auth: coreServices.auth,
      },
      factory({ discovery, auth }) {
        return FleetApiClient.create({ discovery, auth });
      },
    }),
});
