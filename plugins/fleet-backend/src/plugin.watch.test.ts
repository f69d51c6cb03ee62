import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import type {
  SchedulerService,
  ServiceFactory,
} from '@backstage/backend-plugin-api';
import type { JsonObject } from '@backstage/types';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import request from 'supertest';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from './testing/databases';
import { fleetPlugin } from './plugin';
import { RECONCILE_TASK_ID } from './reconcile/ReconcileWorker';

/*
 * The wiring of live state: the reconcile task starts watches on the ONLINE clusters when
 * `fleet.reconcile.watch` is on (the default) and none when it is off, and the backend's
 * shutdown closes them.
 */

jest.setTimeout(60_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east', 'west'] });

async function until(what: string, probe: () => boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(r => setTimeout(r, 25));
  }
}

describe.each(databases.eachSupportedId())(
  'fleet plugin live state (%s)',
  databaseId => {
    async function start(reconcile: JsonObject) {
      // The mock scheduler instance (its type does not show its factory): tasks run on demand.
      const scheduler = mockServices.scheduler() as SchedulerService & {
        factory(options: { skipTaskRunOnStartup: boolean }): ServiceFactory;
      };
      const backend = await startTestBackend({
        features: [
          fleetPlugin,
          mockServices.database.factory({
            knex: await databases.init(databaseId),
          }),
          mockServices.rootConfig.factory({
            data: {
              fleet: {
                discovery: { kubeconfigDir: sim.kubeconfigDir },
                health: { probeTimeout: { seconds: 2 } },
                reconcile,
              },
            },
          }),
          scheduler.factory({ skipTaskRunOnStartup: true }),
          catalogServiceMock.factory({ entities: [] }),
        ],
      });
      await request(backend.server).post('/api/fleet/health/run').expect(200);
      await scheduler.triggerTask(RECONCILE_TASK_ID);
      return backend;
    }

    it('watches every ONLINE cluster from the reconcile task by default, and stops at shutdown', async () => {
      const backend = await start({});
      // Deployments, Services, PDBs, Ingresses and HPAs, on each cluster
      await until(
        'the watches',
        () => sim.openWatches('east') >= 5 && sim.openWatches('west') >= 5,
      );
      await backend.stop();
      await until(
        'the watches closed',
        () => sim.openWatches('east') === 0 && sim.openWatches('west') === 0,
      );
      expect(sim.openWatches('east')).toBe(0);
    });

    it('opens no watch with fleet.reconcile.watch: false', async () => {
      const backend = await start({ watch: false });
      await new Promise(r => setTimeout(r, 500));
      expect(sim.openWatches('east')).toBe(0);
      expect(sim.openWatches('west')).toBe(0);
      await backend.stop();
    });
  },
);
