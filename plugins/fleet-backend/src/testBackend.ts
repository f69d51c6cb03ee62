import type { BackendFeature } from '@backstage/backend-plugin-api';
import {
  mockServices,
  startTestBackend,
  TestBackend,
} from '@backstage/backend-test-utils';
import { Knex } from 'knex';
import { DatabaseFleetStores } from './database/DatabaseFleetStores';
import type { FleetStores } from './database/types';
import { fleetPlugin } from './plugin';

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
  /** Settings of the `fleet` block, each over the default one of that key. */
  fleet?: Record<string, unknown>;
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
            ...options.fleet,
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
