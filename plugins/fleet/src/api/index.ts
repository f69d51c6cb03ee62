export { fleetApiRef } from './FleetApi';
export type {
  FleetApi,
  CreateDeploymentRequest,
  CreateReleaseRequest,
} from './FleetApi';
export { FleetClient, apiErrorMessage } from './FleetClient';
