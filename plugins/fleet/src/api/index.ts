export { fleetApiRef } from './FleetApi';
export type { FleetApi, CreateDeploymentRequest } from './FleetApi';
export { FleetClient, apiErrorMessage } from './FleetClient';
