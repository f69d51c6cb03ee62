/**
 * Node library of the Fleet plugin: the Fleet API client and its service ref, for other backend
 * plugins and modules.
 *
 * @packageDocumentation
 */
export { FleetApiClient } from './FleetApiClient';
export type {
  FleetApiRequestOptions,
  FleetDeployRequest,
  FleetReleaseRequest,
  FleetRegisterApplicationRequest,
  FleetService,
} from './FleetService';
export { fleetServiceRef } from './fleetServiceRef';
export {
  createFleetClusterConditionalDecision,
  fleetClusterConditions,
  fleetClusterPermissionResourceRef,
  fleetClusterPermissionRules,
} from './permissions/clusterRules';
