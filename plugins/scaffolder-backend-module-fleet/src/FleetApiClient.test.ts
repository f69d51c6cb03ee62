import { createTestDatabases } from '@cnp/fleet-harness';
import { FleetApiClient } from '@cnp/plugin-fleet-node';
import request from 'supertest';
import { startFleetForActions } from './__testUtils__/fleetForActions';

// 1,001 clusters inserted one by one: some 30 s on PostgreSQL on a busy machine.
jest.setTimeout(180_000);

const databases = createTestDatabases();
let fleet: Awaited<ReturnType<typeof startFleetForActions>>['fleet'];
let client: FleetApiClient;

describe.each(databases.eachSupportedId())(
  'FleetApiClient (%s)',
  databaseId => {
    beforeAll(async () => {
      ({ fleet, client } = await startFleetForActions(databases, databaseId));
    });

    it('returns every cluster of a fleet larger than one page, following nextCursor', async () => {
      // Inserted before the client's first call: a pooled connection left idle while a slow
      // machine inserts could be closed by the server under the client's feet.
      const before = (await fleet.stores.clusters.listClusters()).length;
      for (let i = 0; i < 1001; i++) {
        await fleet.stores.clusters.insertCluster({
          name: `paged-${String(i).padStart(4, '0')}`,
          // One API server is one cluster: each its own.
          endpoint: `https://paged-${i}.example:6443`,
          kubeconfigRef: `vault:paged-${i}`,
          source: 'manual',
        });
      }
      const all = await client.listClusters();
      expect(all).toHaveLength(before + 1001);
      expect(new Set(all.map(c => c.name)).size).toBe(all.length);
      // The API itself answers at most 1,000 at a time.
      const page = await request(fleet.server)
        .get('/api/fleet/clusters?limit=1000')
        .expect(200);
      expect(page.body.items).toHaveLength(1000);
      expect(page.body.nextCursor).toEqual(expect.any(String));
      for (const c of all.filter(x => x.name.startsWith('paged-')))
        await fleet.stores.clusters.deleteCluster(c.name);
    });
  },
);
