/**
 * Scaffolder module of Fleet: the actions `fleet:application:register`, `fleet:deploy` and
 * `fleet:release`.
 *
 * @packageDocumentation
 */
export { scaffolderModuleFleetActions as default } from './scaffolderModuleFleetActions';
export { scaffolderModuleFleetActions } from './scaffolderModuleFleetActions';
export { createFleetDeployAction } from './createFleetDeployAction';
export { createFleetRegisterApplicationAction } from './createFleetRegisterApplicationAction';
export { createFleetReleaseAction } from './createFleetReleaseAction';
