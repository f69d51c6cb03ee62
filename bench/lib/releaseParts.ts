/*
 * The progressive-release parts of the backend plugin, for bench/release.ts. The plugin's
 * `testUtils` entry point (what the harness builds Fleet from) does not export them yet, and its
 * package `exports` close every other subpath, so they are imported here by path, the way
 * `plugin.ts` wires them. Nothing here changes them.
 */
export { DeploymentService } from '../../plugins/fleet-backend/src/deploy/DeploymentService';
export { ManifestApplier } from '../../plugins/fleet-backend/src/deploy/ManifestApplier';
export { ManifestRemover } from '../../plugins/fleet-backend/src/deploy/ManifestRemover';
export { CanaryWorkloads } from '../../plugins/fleet-backend/src/progressive/CanaryWorkloads';
export { ReleaseOrchestrator } from '../../plugins/fleet-backend/src/progressive/ReleaseOrchestrator';
export { ReleaseService } from '../../plugins/fleet-backend/src/progressive/ReleaseService';
export { readFleetConfig } from '../../plugins/fleet-backend/src/config/FleetConfig';
