/*
 * The watches of a replica the reconcile left stop (`staleAfterMs` after its last run ended),
 * never during a run however long it takes: a first run over a large fleet lists every cluster
 * and can take longer than the staleness bound, and stopping the watches in the middle of it
 * made every next run start them (and compare every deployment) again.
 */
import { mockServices } from '@backstage/backend-test-utils';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import { eventually } from '../testing/eventually';
import { createDeployStack } from '../testing/deployStack';
import { seedDeployment } from '../testing/fleet';
import { ClusterWatches } from '../livestate/ClusterWatches';
import { ReconcileWorker } from './ReconcileWorker';

jest.setTimeout(90_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['north', 'south'], readyDelayMs: 50 });

/** The staleness bound here; a run is held three times as long. */
const STALE_AFTER_MS = 1_000;

describe.each(databases.eachSupportedId())(
  'ReconcileWorker and the staleness of its watches (%s)',
  databaseId => {
    const stops: Array<() => unknown> = [];
    afterEach(async () => {
      for (const stop of stops.splice(0)) await stop();
    });

    /** A reconcile whose runs wait in `heldDeployments` until `release` is called. */
    async function setup() {
      const { deployments, applier, ...harness } = await createDeployStack({
        knex: await databases.init(databaseId),
        kubeconfigDir: sim.kubeconfigDir,
        deploy: { namespace: 'stale' },
      });
      // One deployment, so that a run asks which deployments releases hold.
      await seedDeployment(harness.stores, 'north', 'payments', 'DEPLOYED');
      const logger = mockServices.logger.mock();
      const liveState = ClusterWatches.create({
        clients: harness.clients,
        applier,
        logger,
        timings: { backoffMs: 50, maxBackoffMs: 200 },
        staleAfterMs: STALE_AFTER_MS,
      });
      let inRun: (() => void) | undefined;
      let ending: 'pass' | 'fail' = 'pass';
      const heldDeployments = jest.fn(
        () =>
          new Promise<Set<string>>((resolve, reject) => {
            inRun = () =>
              ending === 'fail'
                ? reject(new Error('the store is down'))
                : resolve(new Set());
          }),
      );
      const reconciler = ReconcileWorker.create({
        stores: harness.stores,
        applier,
        deployments,
        logger: harness.logger,
        deploy: { namespace: 'stale' },
        reconcile: { intervalMs: 60_000, concurrency: 4 },
        liveState,
        heldDeployments,
      });
      stops.push(
        () => deployments.stop(),
        () => liveState.stop(),
      );
      return {
        stores: harness.stores,
        reconciler,
        liveState,
        logger,
        /** Runs from now on fail where they wait. */
        failRuns: () => {
          ending = 'fail';
        },
        /** Waits until a run is inside `heldDeployments` (past `setClusters`). */
        async inRun() {
          await eventually(() => expect(inRun).toBeDefined());
        },
        /** Waits until a run is inside `heldDeployments`, then lets it go on (or fail). */
        async endRun() {
          await eventually(() => expect(inRun).toBeDefined());
          const release = inRun!;
          inRun = undefined;
          release();
        },
      };
    }

    it('keeps the watches through a run longer than the bound, and stops them that long after it', async () => {
      const { reconciler, liveState, logger, endRun } = await setup();
      const run = reconciler.runOnce();
      await eventually(() =>
        expect(liveState.clusters().sort()).toEqual(['north', 'south']),
      );
      // The run goes on for three times the bound: nothing stops its watches meanwhile.
      await new Promise(r => setTimeout(r, 3 * STALE_AFTER_MS));
      expect(liveState.clusters().sort()).toEqual(['north', 'south']);
      await endRun();
      await run;
      expect(liveState.clusters().sort()).toEqual(['north', 'south']);
      // No run after it: the bound after its end, the watches stop, saying why.
      await eventually(() => expect(liveState.clusters()).toEqual([]));
      expect(logger.info).toHaveBeenCalledWith(
        expect.stringContaining(
          'No reconcile run here in the 1 s since the last one ended: stopping the watches of 2 cluster(s)',
        ),
      );
    });

    it('keeps them when the next run starts within the bound, however long it takes to read the fleet', async () => {
      const { stores, reconciler, liveState, logger, endRun, inRun } =
        await setup();
      const first = reconciler.runOnce();
      await endRun();
      await first;
      // The next run starts at once, and reads the fleet for three times the bound.
      const listClusters = stores.clusters.listClusters.bind(stores.clusters);
      jest
        .spyOn(stores.clusters, 'listClusters')
        .mockImplementationOnce(async () => {
          await new Promise(r => setTimeout(r, 3 * STALE_AFTER_MS));
          return listClusters();
        });
      const second = reconciler.runOnce();
      await inRun();
      await new Promise(r => setTimeout(r, 3 * STALE_AFTER_MS));
      expect(liveState.clusters().sort()).toEqual(['north', 'south']);
      await endRun();
      await second;
      expect(logger.info).not.toHaveBeenCalledWith(
        expect.stringContaining('No reconcile run here'),
      );
    });

    it('keeps them through a long run that fails, and counts the bound from its end', async () => {
      const { reconciler, liveState, logger, failRuns, endRun, inRun } =
        await setup();
      failRuns();
      const run = reconciler.runOnce();
      await inRun();
      await new Promise(r => setTimeout(r, 3 * STALE_AFTER_MS));
      expect(liveState.clusters().sort()).toEqual(['north', 'south']);
      await endRun();
      await expect(run).rejects.toThrow('the store is down');
      expect(liveState.clusters().sort()).toEqual(['north', 'south']);
      await eventually(() => expect(liveState.clusters()).toEqual([]));
      expect(logger.info).toHaveBeenCalledWith(
        expect.stringContaining('No reconcile run here in the 1 s'),
      );
    });
  },
);
