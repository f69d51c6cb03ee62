import type { BackendFeature } from '@backstage/backend-plugin-api';
import {
  mockServices,
  startTestBackend,
  TestBackend,
} from '@backstage/backend-test-utils';
// A test harness starts the real plugin: that is its job, not a mix of plugin code.
// eslint-disable-next-line @backstage/no-mixed-plugin-imports
import fleetPlugin from '@cnp/plugin-fleet-backend';
// The harness wires the plugin's own parts: it exists to build the backend plugin.
// eslint-disable-next-line @backstage/no-mixed-plugin-imports
import {
  DatabaseFleetStores,
  type FleetStores,
} from '@cnp/plugin-fleet-backend/testUtils';
import { Knex } from 'knex';

/**
 * Starts a test backend with the real fleet plugin on `knex`, discovering `kubeconfigDir`, and
 * whatever extra features (modules, mocked services) the test adds. The mock scheduler keeps the
 * health task from running by itself: tests run cycles with `POST /health/run`, back to back, so
 * neither minOutage nor manualMinInterval applies unless the test's config sets them.
 */
export async function startFleetTestBackend(options: {
  knex: Knex;
  kubeconfigDir: string;
  allowedKubeconfigDirs?: string[];
  features?: Array<BackendFeature>;
  config?: Record<string, unknown>;
}): Promise<{
  backend: TestBackend;
  server: TestBackend['server'];
  /** Stores over the database the plugin migrated, for seeding and for checking. */
  stores: FleetStores;
}> {
  const backend = await startTestBackend({
    features: [
      fleetPlugin,
      mockServices.database.factory({ knex: options.knex }),
      mockServices.rootConfig.factory({
        data: {
          fleet: {
            discovery: {
              kubeconfigDir: options.kubeconfigDir,
              allowedKubeconfigDirs: options.allowedKubeconfigDirs ?? [],
            },
            health: {
              probeTimeout: { seconds: 2 },
              minOutage: { seconds: 0 },
              manualMinInterval: { seconds: 0 },
            },
            deploy: { pollInterval: { milliseconds: 100 } },
          },
          ...options.config,
        },
      }),
      ...(options.features ?? []),
    ],
  });
  return {
    backend,
    server: backend.server,
    stores: DatabaseFleetStores.fromKnex(options.knex),
  };
}

/** Every row of every Fleet table, to prove that a refused request changed nothing. */
export async function snapshotFleetTables(knex: Knex): Promise<string> {
  const tables: Record<string, string> = {
    fleet_clusters: 'name',
    fleet_applications: 'id',
    fleet_deployments: 'id',
    fleet_revisions: 'id',
    fleet_application_removals: 'application_id',
    fleet_placement_exclusions: 'application_id',
    fleet_ingress_hosts: 'host',
    fleet_events: 'id',
    fleet_state: 'key',
    fleet_locks: 'name',
  };
  const snapshot: Record<string, unknown[]> = {};
  for (const [table, key] of Object.entries(tables)) {
    snapshot[table] = await knex(table).select().orderBy(key);
  }
  return JSON.stringify(snapshot);
}
