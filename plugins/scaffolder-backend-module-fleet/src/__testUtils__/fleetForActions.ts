import type { DiscoveryService } from '@backstage/backend-plugin-api';
import {
  mockServices,
  type TestDatabaseId,
  type TestDatabases,
} from '@backstage/backend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import type { KubeSimulator } from '@cnp/kube-simulator';
import { startFleetTestBackend, startSimulator } from '@cnp/fleet-harness';
import { FleetApiClient } from '@cnp/plugin-fleet-node';
import request from 'supertest';

/** What the Fleet API was asked to authorize, and for whom. */
export type Authorization = {
  permission: string;
  resourceRef?: string;
  user?: string;
};

/**
 * The real Fleet backend the actions talk to, on a fresh `databaseId` database of `databases`, over a simulator with
 * the clusters alpha and bravo (one health cycle run, so both are ONLINE), and the client the
 * scaffolder uses. The permission service allows everyone but user:default/mallory and records
 * every check in `authorized`.
 */
export async function startFleetForActions(
  databases: TestDatabases,
  databaseId: TestDatabaseId,
): Promise<{
  sim: KubeSimulator;
  fleet: Awaited<ReturnType<typeof startFleetTestBackend>>;
  client: FleetApiClient;
  authorized: Authorization[];
}> {
  const authorized: Authorization[] = [];
  const sim = await startSimulator({
    clusters: ['alpha', 'bravo'],
    readyDelayMs: 50,
  });
  const permissions = mockServices.permissions.mock({
    // The caller's decision on fleet.cluster.deploy in general, kept with what it places.
    authorizeConditional: async (requests, options) =>
      requests.map(() => ({
        result:
          (options?.credentials.principal as { userEntityRef?: string })
            .userEntityRef === 'user:default/mallory'
            ? AuthorizeResult.DENY
            : AuthorizeResult.ALLOW,
      })),
    authorize: async (requests, options) => {
      const user = (
        options?.credentials.principal as { userEntityRef?: string }
      ).userEntityRef;
      return requests.map(r => {
        authorized.push({
          permission: r.permission.name,
          resourceRef: (r as { resourceRef?: string }).resourceRef,
          user,
        });
        return {
          result:
            user === 'user:default/mallory'
              ? AuthorizeResult.DENY
              : AuthorizeResult.ALLOW,
        };
      });
    },
  });
  const fleet = await startFleetTestBackend({
    knex: await databases.init(databaseId),
    kubeconfigDir: sim.kubeconfigDir,
    features: [permissions.factory],
  });
  const port = fleet.server.port();
  const discovery: DiscoveryService = {
    getBaseUrl: async pluginId => `http://localhost:${port}/api/${pluginId}`,
    getExternalBaseUrl: async pluginId =>
      `http://localhost:${port}/api/${pluginId}`,
  };
  // The scaffolder's own auth: it asks for a token to Fleet on behalf of the task's initiator.
  const client = FleetApiClient.create({
    discovery,
    auth: mockServices.auth({ pluginId: 'scaffolder' }),
  });
  await request(fleet.server).post('/api/fleet/health/run').expect(200);
  return { sim, fleet, client, authorized };
}
