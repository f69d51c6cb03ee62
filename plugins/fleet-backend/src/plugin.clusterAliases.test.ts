/*
 * One API server is one cluster, however its URL is written: a registration whose endpoint is a
 * known server under another spelling is a 409 naming the cluster that holds it.
 */
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import request from 'supertest';
import { createTestDatabases } from './testing/databases';
import { fleetPlugin } from './plugin';

jest.setTimeout(60_000);

const databases = createTestDatabases();

describe.each(databases.eachSupportedId())(
  'cluster registration by endpoint aliases (%s)',
  databaseId => {
    it('answers 409 naming the cluster when the endpoint is a known API server written another way', async () => {
      const knex = await databases.init(databaseId);
      const { server } = await startTestBackend({
        features: [
          fleetPlugin,
          mockServices.database.factory({ knex }),
          mockServices.rootConfig.factory({ data: { fleet: {} } }),
          mockServices.scheduler.factory(),
          catalogServiceMock.factory({ entities: [] }),
        ],
      });
      const register = (name: string, endpoint: string) =>
        request(server)
          .post('/api/fleet/clusters')
          .send({ name, endpoint, kubeconfigRef: `vault:${name}` });
      await register('sim-1', 'https://127.0.0.1:6550/clusters/sim-1').expect(
        201,
      );
      for (const alias of [
        'https://localhost:6550/clusters/sim-1',
        'https://[::ffff:127.0.0.1]:6550/clusters/sim-1',
        'https://127.0.0.1:6550//clusters/sim-1',
        'https://127.0.0.1:6550/clusters/sim-1/',
      ]) {
        const res = await register('sim-1-twin', alias);
        expect({ alias, status: res.status }).toEqual({ alias, status: 409 });
        expect(res.body.error.message).toContain(
          "is already registered as cluster 'sim-1'",
        );
      }
      await register('sim-1-default-port', 'https://prod.example:443').expect(
        201,
      );
      const twin = await register('prod-twin', 'https://PROD.example./');
      expect(twin.status).toBe(409);
      expect(twin.body.error.message).toContain("'sim-1-default-port'");
    });
  },
);
