import {
  coreServices,
  createBackendModule,
} from '@backstage/backend-plugin-api';
import { scaffolderActionsExtensionPoint } from '@backstage/plugin-scaffolder-node';
import { FleetApiClient } from '../client/FleetApiClient';
import { createFleetDeployAction } from './createFleetDeployAction';
import { createFleetRegisterApplicationAction } from './createFleetRegisterApplicationAction';

/**
 * Scaffolder module: the actions `fleet:application:register` and `fleet:deploy`. They call the
 * Fleet API on behalf of the user running the template, so Fleet's permission checks apply.
 *
 * @public
 */
export const scaffolderModuleFleetActions = createBackendModule({
  pluginId: 'scaffolder',
  moduleId: 'fleet-actions',
  register(reg) {
    reg.registerInit({
      deps: {
        scaffolder: scaffolderActionsExtensionPoint,
        discovery: coreServices.discovery,
        auth: coreServices.auth,
      },
      async init({ scaffolder, discovery, auth }) {
        const client = FleetApiClient.create({ discovery, auth });
        scaffolder.addActions(
          createFleetRegisterApplicationAction({ client }),
          createFleetDeployAction({ client }),
        );
      },
    });
  },
});
