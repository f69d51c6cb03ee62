/**
 * Catalog module of Fleet: the clusters as catalog entities, and Fleet's catalog permission rule
 * with the conditions policies use for `fleet.deployment.create`.
 *
 * @packageDocumentation
 */
export { catalogModuleFleetClusters as default } from './catalogModuleFleetClusters';
export { catalogModuleFleetClusters } from './catalogModuleFleetClusters';
export {
  FleetClusterEntityProvider,
  FLEET_CLUSTER_ANNOTATIONS,
  clusterToEntity,
  type ClusterEntityOptions,
} from './FleetClusterEntityProvider';
export {
  createFleetDeploymentConditionalDecision,
  fleetDeploymentConditions,
  fleetDeploymentPermissionRules,
} from './permissions/conditionExports';
export { isFleetDeployable } from './permissions/rules';
