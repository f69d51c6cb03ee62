/**
 * Scaffolder module of Fleet: the actions `fleet:application:register` and `fleet:deploy`.
 *
 * @packageDocumentation
 */
export { scaffolderModuleFleetActions as default } from './scaffolderModuleFleetActions';
export { scaffolderModuleFleetActions } from './scaffolderModuleFleetActions';
export { createFleetDeployAction } from './createFleetDeployAction';
export { createFleetRegisterApplicationAction } from './createFleetRegisterApplicationAction';
