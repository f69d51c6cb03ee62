/**
 * Fleet's parts, for the harness that wires them without the backend's scheduler: tests, the
 * benchmarks and the chaos suite build Fleet from these, as `plugin.ts` does. With them, the
 * builders of the plugin's own tests (Fleet wired on a test database, the test backend with the
 * real plugin), which `@cnp/fleet-harness` passes on, so the plugin needs nothing of the harness.
 *
 * @packageDocumentation
 */
export { readFleetConfig, type FleetConfig } from './config/FleetConfig';
export type { FleetProject } from './tenancy/projects';
export type { FreezeWindowSpec } from './stages/freezeWindows';
export type { PodSecurityLevel } from './tenancy/podSecurity';
export { DatabaseFleetStores } from './database/DatabaseFleetStores';
export type * from './database/types';
export {
  DeploymentService,
  type ApplicationUpdate,
  type DeploymentServiceOptions,
  type DeploymentServiceStores,
  type DeployRequest,
  type DesiredState,
  type DesiredStateRequest,
  type RegisterApplicationRequest,
  type RevisionSettings,
  type RollbackRequest,
  type UndeployOptions,
} from './deploy/DeploymentService';
export type { DeploySettings, RevisionRefusal } from './deploy/deploymentTypes';
export { ManifestApplier } from './deploy/ManifestApplier';
export {
  ManifestRemover,
  type RemoveRequest,
  type RemoveResult,
} from './deploy/ManifestRemover';
export { ClusterDiscovery } from './discovery/ClusterDiscovery';
export {
  discoverKubeconfigClusters,
  type DiscoveryResult,
  type DiscoverySources,
} from './discovery/discoverKubeconfigClusters';
export { decideClusterHealth } from './health/clusterHealthRules';
export {
  HealthWorker,
  healthUpdateOf,
  type HealthStores,
} from './health/HealthWorker';
export { shardOf } from './sharding/shardOf';
export type { ShardOwnership } from './sharding/types';
export {
  ClusterClients,
  type ProbeOutcome,
  type SecretRules,
  type SharedConnection,
} from './kubernetes/ClusterClients';
export type { Http2Watches } from './kubernetes/Http2Watches';
export { poolStats, type PoolStats } from './kubernetes/secureContexts';
export {
  builtInTrafficProviders,
  TrafficProviders,
} from './progressive/traffic/TrafficProviders';
export {
  ReleaseOrchestrator,
  type ReleaseOrchestratorOptions,
} from './progressive/ReleaseOrchestrator';
export {
  ReleaseService,
  type ReleaseServiceOptions,
} from './progressive/ReleaseService';
export { KubeconfigAccessPolicy } from '@cnp/plugin-fleet-node';
export { startFleetTestBackend } from './testBackend';
export {
  createTestDatabases,
  createTestStores,
  snapshotFleetTables,
} from './testing/databases';
export {
  classifyStatement,
  createFleet,
  formatLogRecord,
  harnessHealthConfig,
  recordingLogger,
  seedDeployment,
  seedDeployments,
  statementCounter,
  type LogRecord,
  type ProbeFn,
} from './testing/fleet';
