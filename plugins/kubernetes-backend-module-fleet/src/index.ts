/**
 * Kubernetes backend module of Fleet: the clusters Fleet manages, each with the endpoint, CA and
 * credentials of its own kubeconfig, for Backstage's Kubernetes plugin.
 *
 * @packageDocumentation
 */
export { kubernetesModuleFleetClusters as default } from './module';
export {
  FleetClusterSupplier,
  FLEET_AUTH_PROVIDER,
} from './FleetClusterSupplier';
export type {
  FleetClusterSupplierOptions,
  ProbeFailure,
} from './FleetClusterSupplier';
export { FleetAuthStrategy } from './FleetAuthStrategy';
