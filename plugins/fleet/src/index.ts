/**
 * Fleet frontend: deployments and cluster health on entity pages, the fleet page.
 *
 * @packageDocumentation
 */
export {
  fleetPlugin,
  FleetPage,
  EntityFleetDeploymentsCard,
  EntityFleetClusterCard,
} from './plugin';
export { fleetApiRef, FleetClient, apiErrorMessage } from './api';
export type {
  FleetApi,
  CreateDeploymentRequest,
  CreateReleaseRequest,
} from './api';
export { isFleetClusterEntity } from './components/EntityFleetClusterCard';
export { isFleetComponentEntity } from './conditions';
export {
  ClusterStatusChip,
  DeploymentStatusChip,
  SyncStatusChip,
  ReasonText,
  reasonParts,
  deploymentReasonText,
} from './components/StatusChip';
