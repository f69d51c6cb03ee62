/**
 * Node library of the Fleet plugin: the Fleet API client and its service ref, the rules for
 * reading a cluster's kubeconfig, and the extension points backend modules add to Fleet with
 * (manifest sources, traffic and analysis providers), for other backend plugins and modules.
 *
 * @packageDocumentation
 */
export { FleetApiClient } from './FleetApiClient';
export type * from './FleetService';
export { fleetServiceRef } from './fleetServiceRef';
export { fleetClockServiceRef, type FleetClock } from './fleetClockServiceRef';
export {
  fleetManifestSourcesExtensionPoint,
  type FleetManifestRenderRequest,
  type FleetManifestRevision,
  type FleetManifestSource,
  type FleetManifestSourcesExtensionPoint,
} from './extensions/manifestSources';
export {
  KubeconfigAccessPolicy,
  type KubeconfigResolution,
} from './kubeconfig/KubeconfigAccessPolicy';
export {
  MAX_KUBECONFIG_BYTES,
  parseErrorSummary,
  readKubeconfigFile,
  type KubeconfigFileRead,
} from './kubeconfig/readKubeconfigFile';
export { sameKubernetesServer } from './kubeconfig/sameKubernetesServer';
export {
  createFleetClusterConditionalDecision,
  fleetClusterConditions,
  fleetClusterPermissionResourceRef,
  fleetClusterPermissionRules,
} from './permissions/clusterRules';
export {
  fleetAnalysisProvidersExtensionPoint,
  type FleetAnalysisContext,
  type FleetAnalysisProvider,
  type FleetAnalysisProvidersExtensionPoint,
} from './extensions/analysisProviders';
export {
  fleetTrafficProvidersExtensionPoint,
  type FleetClusterConnection,
  type FleetRevisionObjects,
  type FleetTrafficCluster,
  type FleetTrafficProvider,
  type FleetTrafficProvidersExtensionPoint,
  type FleetTrafficStepOutcome,
  type FleetTrafficTarget,
} from './extensions/trafficProviders';
