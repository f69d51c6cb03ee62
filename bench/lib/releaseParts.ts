/*
 * The progressive-release parts of the backend plugin, for bench/release.ts and the seeding
 * helpers, taken from the plugin's public `testUtils` entry point (what the harness builds
 * Fleet from), the way `plugin.ts` wires them. Nothing here changes them.
 */
export {
  builtInTrafficProviders,
  DeploymentService,
  ManifestApplier,
  ManifestRemover,
  readFleetConfig,
  ReleaseOrchestrator,
  ReleaseService,
  TrafficProviders,
} from '@cnp/plugin-fleet-backend/testUtils';
