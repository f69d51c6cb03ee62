import { createBackendModule } from '@backstage/backend-plugin-api';
import { scaffolderActionsExtensionPoint } from '@backstage/plugin-scaffolder-node';
import { fleetServiceRef } from '@cnp/plugin-fleet-node';
import { createFleetDeployAction } from './createFleetDeployAction';
import { createFleetRegisterApplicationAction } from './createFleetRegisterApplicationAction';
import { createFleetReleaseAction } from './createFleetReleaseAction';

/**
 * Scaffolder module: the actions `fleet:application:register`, `fleet:deploy` and `fleet:release`. They call the
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
        fleet: fleetServiceRef,
      },
      async init({ scaffolder, fleet }) {
        scaffolder.addActions(
          createFleetRegisterApplicationAction({ client: fleet }),
          createFleetDeployAction({ client: fleet }),
          createFleetReleaseAction({ client: fleet }),
        );
      },
    });
  },
});
