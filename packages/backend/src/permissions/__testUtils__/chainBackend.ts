import {
  coreServices,
  createServiceFactory,
  type BackendFeature,
} from '@backstage/backend-plugin-api';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import catalogPlugin from '@backstage/plugin-catalog-backend';
import permissionPlugin from '@backstage/plugin-permission-backend';
import type { JsonObject } from '@backstage/types';
import type { Server } from 'node:http';
import { createTestDatabases } from '@cnp/fleet-harness';
import fleetPlugin from '@cnp/plugin-fleet-backend';
import { permissionModuleFleetPolicy } from '../FleetPermissionPolicy';
import { httpAuthWithActors } from './testServices';

type TestDatabases = ReturnType<typeof createTestDatabases>;

/**
 * A test backend with the whole permission chain and nothing mocked in it: Fleet, the
 * permission backend with this app's policy, and the catalog reading `entitiesFile`. Each plugin
 * has its own database, as in a real backend (plugins' migration tables must not meet); Fleet's
 * is returned.
 */
export async function startChainBackend(options: {
  databases: TestDatabases;
  databaseId: Parameters<TestDatabases['init']>[0];
  entitiesFile: string;
  allowKinds: string[];
  fleet: JsonObject;
  features?: BackendFeature[];
}): Promise<{
  server: Server;
  knex: Awaited<ReturnType<TestDatabases['init']>>;
}> {
  const { databases, databaseId } = options;
  const knex = await databases.init(databaseId);
  const { server } = await startTestBackend({
    features: [
      fleetPlugin,
      permissionPlugin,
      catalogPlugin,
      permissionModuleFleetPolicy,
      httpAuthWithActors,
      ...(options.features ?? []),
      createServiceFactory({
        service: coreServices.database,
        deps: { plugin: coreServices.pluginMetadata },
        async factory({ plugin }) {
          const client =
            plugin.getId() === 'fleet'
              ? knex
              : await databases.init(databaseId);
          return { getClient: async () => client };
        },
      }),
      mockServices.rootConfig.factory({
        data: {
          // Where links in notifications point (the notifications backend needs it).
          app: { baseUrl: 'http://localhost:3000' },
          permission: { enabled: true },
          catalog: {
            rules: [{ allow: options.allowKinds }],
            locations: [{ type: 'file', target: options.entitiesFile }],
            processingInterval: { seconds: 1 },
          },
          fleet: options.fleet,
        },
      }),
    ],
  });
  return { server, knex };
}
