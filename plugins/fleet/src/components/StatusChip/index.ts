export {
  ClusterStatusChip,
  DeploymentStatusChip,
  SyncStatusChip,
  ToneChip,
  type Tone,
} from './StatusChip';
export {
  CodeWords,
  deploymentReasonText,
  reasonParts,
  ReasonText,
  reasonWords,
} from './reasonText';
