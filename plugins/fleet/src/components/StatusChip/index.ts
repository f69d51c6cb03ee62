export {
  ClusterStatusChip,
  DeploymentStatusChip,
  SyncStatusChip,
} from './StatusChip';
export { deploymentReasonText, reasonParts, ReasonText } from './reasonText';
