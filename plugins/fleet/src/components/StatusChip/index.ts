export {
  ClusterStatusChip,
  DeploymentStatusChip,
  SyncStatusChip,
} from './StatusChip';
