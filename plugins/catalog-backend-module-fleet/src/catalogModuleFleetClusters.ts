import {
  coreServices,
  createBackendModule,
} from '@backstage/backend-plugin-api';
import { catalogProcessingExtensionPoint } from '@backstage/plugin-catalog-node';
import { fleetServiceRef } from '@cnp/plugin-fleet-node';
import { FleetClusterEntityProvider } from './FleetClusterEntityProvider';
import { isFleetDeployable } from './permissions/rules';

/**
 * Catalog module: publishes every Fleet cluster as a `Resource` entity of type
 * `kubernetes-cluster` (read from the Fleet API on a schedule), and registers Fleet's catalog
 * permission rule `IS_FLEET_DEPLOYABLE` for conditional decisions on `fleet.deployment.create`.
 *
 * @public
 */
export const catalogModuleFleetClusters = createBackendModule({
  pluginId: 'catalog',
  moduleId: 'fleet-clusters',
  register(reg) {
    reg.registerInit({
      deps: {
        catalog: catalogProcessingExtensionPoint,
        config: coreServices.rootConfig,
        logger: coreServices.logger,
        scheduler: coreServices.scheduler,
        fleet: fleetServiceRef,
        permissionsRegistry: coreServices.permissionsRegistry,
      },
      async init({
        catalog,
        config,
        logger,
        scheduler,
        fleet,
        permissionsRegistry,
      }) {
        permissionsRegistry.addPermissionRules([isFleetDeployable]);
        catalog.addEntityProvider(
          FleetClusterEntityProvider.fromConfig(config, {
            client: fleet,
            logger,
            scheduler,
          }),
        );
      },
    });
  },
});
