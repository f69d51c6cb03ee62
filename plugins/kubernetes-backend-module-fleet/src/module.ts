import {
  coreServices,
  createBackendModule,
} from '@backstage/backend-plugin-api';
import {
  kubernetesAuthStrategyExtensionPoint,
  kubernetesClusterSupplierExtensionPoint,
  kubernetesFetcherExtensionPoint,
} from '@backstage/plugin-kubernetes-node';
import { fleetServiceRef } from '@cnp/plugin-fleet-node';
import { FleetAuthStrategy } from './FleetAuthStrategy';
import { readRequestTimeoutMs } from './config';
import { FleetEnvRedactingFetcher } from './FleetEnvRedactingFetcher';
import { FleetKubernetesFetcher } from './FleetKubernetesFetcher';
import {
  FLEET_AUTH_PROVIDER,
  FleetClusterSupplier,
} from './FleetClusterSupplier';

/**
 * Makes Fleet's clusters the Kubernetes plugin's clusters: a cluster supplier that follows
 * Fleet's cluster list, and the `fleet` auth strategy that signs each request with the
 * credentials of that cluster's own kubeconfig. What Fleet deployed reaches the tab without its
 * environment values (Fleet shows those only to who may deploy the component). Each cluster has
 * `kubernetes.fleet.requestTimeout` (10 s) to answer the tab, and one whose latest Fleet health
 * probe failed is not asked: either shows as that cluster's error while the others render.
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
        fetcher: kubernetesFetcherExtensionPoint,
      },
      async init({
        config,
        logger,
        fleet,
        clusterSupplier,
        authStrategy,
        fetcher,
      }) {
        // Read first: a bad value stops the backend at startup, naming its key.
        const requestTimeoutMs = readRequestTimeoutMs(config);
        const clusters = FleetClusterSupplier.fromConfig(config, {
          fleet,
          logger,
        });
        clusterSupplier.addClusterSupplier(clusters);
        authStrategy.addAuthStrategy(
          FLEET_AUTH_PROVIDER,
          new FleetAuthStrategy(clusters),
        );
        fetcher.addFetcher(
          new FleetEnvRedactingFetcher(
            new FleetKubernetesFetcher({
              logger,
              health: clusters,
              requestTimeoutMs,
            }),
          ),
        );
      },
    });
  },
});
