import { promises as fs } from 'node:fs';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import request from 'supertest';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from './testing/databases';
import { seedDeployment } from './testing/fleet';
import { DatabaseFleetStores } from './database/DatabaseFleetStores';
import { fleetPlugin } from './plugin';

/*
 * The grace period through the API: manual runs (`POST /health/run`) cannot confirm a short
 * outage, are shared and limited, the first failure's time survives a restart, and a DELETE of a
 * discovered cluster does not read the kubeconfig sources each.
 */

jest.setTimeout(60_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east', 'west', 'north'] });
const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

describe.each(databases.eachSupportedId())(
  'fleet plugin health runs (%s)',
  databaseId => {
    async function start(
      health: Record<string, unknown>,
      knex?: Awaited<ReturnType<typeof databases.init>>,
    ) {
      const db = knex ?? (await databases.init(databaseId));
      const backend = await startTestBackend({
        features: [
          fleetPlugin,
          mockServices.database.factory({ knex: db }),
          mockServices.rootConfig.factory({
            data: {
              fleet: {
                discovery: { kubeconfigDir: sim.kubeconfigDir },
                health: { probeTimeout: { seconds: 2 }, ...health },
              },
            },
          }),
          mockServices.scheduler.factory(),
          catalogServiceMock.factory({ entities: [] }),
        ],
      });
      return {
        knex: db,
        backend,
        server: backend.server,
        stores: DatabaseFleetStores.fromKnex(db),
      };
    }
    const run = async (server: any) =>
      (await request(server).post('/api/fleet/health/run').expect(200)).body;
    const cluster = async (server: any, name: string) =>
      (await request(server).get(`/api/fleet/clusters/${name}`).expect(200))
        .body;

    it('a blip shorter than minOutage with failureThreshold reached does not make the cluster OFFLINE nor degrade deployments; reaching both does', async () => {
      // minOutage long enough for three runs on a loaded machine to stay within it.
      const { server, stores } = await start({
        minOutage: { seconds: 8 },
        manualMinInterval: { seconds: 0 },
      });
      await run(server);
      const onWest = await seedDeployment(stores, 'west', 'web', 'DEPLOYED');

      // A blip: the failure threshold is reached by manual runs in a row, well within minOutage.
      sim.setFault('west', { mode: 'down' });
      const first = await run(server);
      await run(server);
      await run(server);
      expect(await cluster(server, 'west')).toMatchObject({
        status: 'ONLINE',
        consecutiveFailures: 3,
      });
      expect(
        (await request(server).get(`/api/fleet/deployments/${onWest.id}`)).body,
      ).toMatchObject({ status: 'DEPLOYED' });
      expect(
        (await request(server).get('/api/fleet/summary')).body.clusters,
      ).toMatchObject({ ONLINE: 3, OFFLINE: 0 });

      // The same outage, still there minOutage after its first failure: confirmed.
      await sleep(8_000 - (Date.now() - Date.parse(first.startedAt)));
      const confirming = await run(server);
      expect(confirming.transitions).toEqual([
        { cluster: 'west', from: 'ONLINE', to: 'OFFLINE' },
      ]);
      expect(await cluster(server, 'west')).toMatchObject({
        status: 'OFFLINE',
        consecutiveFailures: 4,
      });
      expect(
        (await request(server).get(`/api/fleet/deployments/${onWest.id}`)).body,
      ).toMatchObject({ status: 'DEGRADED', statusReason: 'CLUSTER_OFFLINE' });
    });

    it('keeps the first failure time across a backend restart: the outage is confirmed minOutage after its first failure, not after the restart', async () => {
      // minOutage long enough for a restart on a loaded machine to come well within it.
      const health = {
        minOutage: { seconds: 15 },
        manualMinInterval: { seconds: 0 },
      };
      const first = await start(health);
      await run(first.server);
      sim.setFault('north', { mode: 'down' });
      const failed = await run(first.server);
      await first.backend.stop();

      const second = await start(health, first.knex);
      // Right after the restart: the threshold is reached, the time is not.
      await run(second.server);
      expect(await cluster(second.server, 'north')).toMatchObject({
        status: 'ONLINE',
        consecutiveFailures: 2,
      });
      // minOutage after the first failure (before the restart), not after the restart.
      await sleep(15_000 - (Date.now() - Date.parse(failed.startedAt)));
      await run(second.server);
      expect(await cluster(second.server, 'north')).toMatchObject({
        status: 'OFFLINE',
        consecutiveFailures: 3,
      });
    });

    it('POST /health/run: concurrent calls share one cycle, and one within manualMinInterval answers the last cycle marked reused', async () => {
      const { server } = await start({ manualMinInterval: { seconds: 60 } });
      const requestsBefore = sim.requestCount('east');
      const answers = await Promise.all(
        Array.from({ length: 4 }, () =>
          request(server).post('/api/fleet/health/run').expect(200),
        ),
      );
      expect(new Set(answers.map(a => a.body.startedAt)).size).toBe(1);
      expect(answers.every(a => a.body.online === 3)).toBe(true);
      const probesOfOneCycle = sim.requestCount('east') - requestsBefore;

      const again = await run(server);
      expect(sim.requestCount('east') - requestsBefore).toBe(probesOfOneCycle);
      expect(again).toMatchObject({
        startedAt: answers[0].body.startedAt,
        reused: {
          nextRunAt: new Date(
            Date.parse(answers[0].body.finishedAt) + 60_000,
          ).toISOString(),
        },
      });
    });

    it('DELETE of a discovered cluster does not run a discovery per request', async () => {
      const { server } = await start({ manualMinInterval: { seconds: 60 } });
      const readdir = jest.spyOn(fs, 'readdir');
      try {
        const discoveries = () =>
          readdir.mock.calls.filter(([dir]) => dir === sim.kubeconfigDir)
            .length;
        const before = discoveries();
        const concurrent = await Promise.all(
          Array.from({ length: 10 }, () =>
            request(server).delete('/api/fleet/clusters/east'),
          ),
        );
        for (let i = 0; i < 10; i++) {
          await request(server).delete('/api/fleet/clusters/east').expect(409);
        }
        expect(concurrent.map(r => r.status)).toEqual(Array(10).fill(409));
        expect(concurrent[0].body.error.message).toContain(
          "Cluster 'east' is discovered",
        );
        // The discovery at startup answers them all (at most one more, had it been too old).
        expect(discoveries() - before).toBeLessThanOrEqual(1);
      } finally {
        readdir.mockRestore();
      }
    });
  },
);

describe('fleet plugin startup (health settings)', () => {
  it.each([
    ['minOutage', 'soon'],
    ['minOutage', { seconds: -5 }],
    ['manualMinInterval', { fortnights: 1 }],
  ])('stops when fleet.health.%s is %j, naming the key', async (key, value) => {
    await expect(
      startTestBackend({
        features: [
          fleetPlugin,
          mockServices.rootConfig.factory({
            data: { fleet: { health: { [key]: value } } },
          }),
          mockServices.scheduler.factory(),
          catalogServiceMock.factory({ entities: [] }),
        ],
      }),
    ).rejects.toThrow(`Invalid config value fleet.health.${key}: `);
  });
});
