/**
 * Shared types, statuses and permissions of the Fleet plugins.
 *
 * @packageDocumentation
 */
export * from './annotations';
export * from './constants';
export * from './schema/openapi/generated/enums';
export * from './types';
export * from './progressive';
export * from './permissions';
export * from './versions';
export * from './signals';
export * from './client/fleetApiRequest';
export * from './client/listAllPages';
export type {
  paths as FleetApiPaths,
  components as FleetApiComponents,
  operations as FleetApiOperations,
} from './schema/openapi/generated/types';
export * from './kubernetesRules';
export * from './labelSelector';
export * from './placement';
export * from './reasonWords';
