export { DeployDialog } from './DeployDialog';
export type { DeployDialogProps } from './DeployDialog';
