export {
  ClusterStatusChip,
  DeploymentStatusChip,
  SyncStatusChip,
} from './StatusChip';
export { deploymentReasonText } from './deploymentReasonText';
