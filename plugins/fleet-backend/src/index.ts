/**
 * The Fleet backend plugin, its catalog and scaffolder modules, and the permission helpers for
 * policy authors.
 *
 * @packageDocumentation
 */
export { fleetPlugin as default } from './plugin';
export { catalogModuleFleetClusters } from './catalog/catalogModuleFleetClusters';
export {
  FleetClusterEntityProvider,
  FLEET_CLUSTER_ANNOTATIONS,
  clusterToEntity,
} from './catalog/FleetClusterEntityProvider';
export { scaffolderModuleFleetActions } from './scaffolder/scaffolderModuleFleetActions';
export { createFleetDeployAction } from './scaffolder/createFleetDeployAction';
export { createFleetRegisterApplicationAction } from './scaffolder/createFleetRegisterApplicationAction';
export {
  FleetApiClient,
  type FleetApiRequestOptions,
  type FleetDeployRequest,
  type FleetRegisterApplicationRequest,
} from './client/FleetApiClient';
export {
  createFleetDeploymentConditionalDecision,
  fleetDeploymentConditions,
  fleetDeploymentPermissionRules,
} from './permissions/conditionExports';
export { isFleetDeployable } from './permissions/rules';
