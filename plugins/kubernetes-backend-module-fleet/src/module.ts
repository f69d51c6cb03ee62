import {
  coreServices,
  createBackendModule,
} from '@backstage/backend-plugin-api';
import {
  kubernetesAuthStrategyExtensionPoint,
  kubernetesClusterSupplierExtensionPoint,
} from '@backstage/plugin-kubernetes-node';
import { fleetServiceRef } from '@cnp/plugin-fleet-node';
import { FleetAuthStrategy } from './FleetAuthStrategy';
import {
  FLEET_AUTH_PROVIDER,
  FleetClusterSupplier,
} from './FleetClusterSupplier';

/**
 * Makes Fleet's clusters the Kubernetes plugin's clusters: a cluster supplier that follows
 * Fleet's cluster list, and the `fleet` auth strategy that signs each request with the
 * credentials of that cluster's own kubeconfig.
 *
 * @public
 */
export const kubernetesModuleFleetClusters = createBackendModule({
  pluginId: 'kubernetes',
  moduleId: 'fleet-clusters',
  register(env) {
    env.registerInit({
      deps: {
        config: coreServices.rootConfig,
        logger: coreServices.logger,
        fleet: fleetServiceRef,
        clusterSupplier: kubernetesClusterSupplierExtensionPoint,
        authStrategy: kubernetesAuthStrategyExtensionPoint,
      },
      async init({ config, logger, fleet, clusterSupplier, authStrategy }) {
        const clusters = FleetClusterSupplier.fromConfig(config, {
          fleet,
          logger,
        });
        clusterSupplier.addClusterSupplier(clusters);
        authStrategy.addAuthStrategy(
          FLEET_AUTH_PROVIDER,
          new FleetAuthStrategy(clusters),
        );
      },
    });
  },
});
