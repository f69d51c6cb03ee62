export {
  DeploymentActions,
  DeploymentActionDialog,
  PermittedButton,
} from './DeploymentActions';
export type { DeploymentAction, PermissionState } from './DeploymentActions';
