import type { BackendFeature } from '@backstage/backend-plugin-api';
import {
  mockServices,
  startTestBackend,
  TestBackend,
} from '@backstage/backend-test-utils';
import { Knex } from 'knex';
import { DatabaseFleetStore } from '../database/DatabaseFleetStore';
import { fleetPlugin } from '../plugin';

/**
 * Starts a test backend with the real fleet plugin on `knex`, discovering `kubeconfigDir`, and
 * whatever extra features (modules, mocked services) the test adds. The mock scheduler keeps the
 * health task from running by itself: tests run cycles with `POST /health/run`.
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
  store: DatabaseFleetStore;
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
            health: { probeTimeout: { seconds: 2 } },
            deploy: { pollInterval: { milliseconds: 100 } },
          },
          ...options.config,
        },
      }),
      ...(options.features ?? []),
    ],
  });
  // The plugin migrated the database: the same store, for seeding and for checking.
  const store = DatabaseFleetStore.fromKnex(options.knex);
  return { backend, server: backend.server, store };
}

/** Every row of every Fleet table, to prove that a refused request changed nothing. */
export async function snapshotFleetTables(knex: Knex): Promise<string> {
  const tables: Record<string, string> = {
    fleet_clusters: 'name',
    fleet_applications: 'id',
    fleet_deployments: 'id',
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
