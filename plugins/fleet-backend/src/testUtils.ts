/**
 * Fleet's parts, for the harness that wires them without the backend's scheduler: tests, the
 * benchmarks and the chaos suite build Fleet from these, as `plugin.ts` does.
 *
 * @packageDocumentation
 */
export type { FleetConfig } from './config/FleetConfig';
export type { FleetProject } from './tenancy/projects';
export { DatabaseFleetStores } from './database/DatabaseFleetStores';
export type * from './database/types';
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
export { poolStats, type PoolStats } from './kubernetes/secureContexts';
export { KubeconfigAccessPolicy } from '@cnp/plugin-fleet-node';
