/*
 * The reconcile and its watches split by the health worker's shards: two replicas over one
 * database, each reconciling and watching the clusters of the shards it holds, the fleet-wide
 * placement in a task of its own; when one replica dies, the other takes its shards over and, at
 * its next run, watches and reconciles their clusters too; when it lets them go again (a
 * replica joined), it stops comparing them at once and watching them at its next run.
 */
import { mockServices } from '@backstage/backend-test-utils';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import { createFleet, seedDeployment } from '../testing/fleet';
import type { Knex } from 'knex';
import { DeploymentService } from '../deploy/DeploymentService';
import { ManifestApplier } from '../deploy/ManifestApplier';
import { ManifestRemover } from '../deploy/ManifestRemover';
import { ClusterWatches } from '../livestate/ClusterWatches';
import { DriftChecks } from '../livestate/DriftChecks';
import { ReconcileWorker, type ReconcileShards } from './ReconcileWorker';
import {
  inShards,
  SHARDED_CLUSTERS,
  SHARDS,
} from '../__testUtils__/shardedFleet';

jest.setTimeout(90_000);

const databases = createTestDatabases();
const CLUSTERS = SHARDED_CLUSTERS;
const sim = useSimulator({
  clusters: CLUSTERS,
  watch: { controllerTickMs: 50 },
});

describe.each(databases.eachSupportedId())(
  'ReconcileWorker with health shards, two replicas over one database (%s)',
  databaseId => {
    const tag = databaseId.toLowerCase().replace(/_/g, '-');
    const namespace = `shards-${tag}`;
    const stops: Array<() => unknown> = [];
    afterEach(async () => {
      for (const stop of stops.splice(0)) await stop();
    });

    /** One replica: its health worker, and a reconcile with watches wired as the plugin does. */
    async function replica(knex: Knex) {
      const fleet = await createFleet({
        knex,
        kubeconfigDir: sim.kubeconfigDir,
        logger: mockServices.logger.mock(),
        health: { sharding: { shards: SHARDS, leaseMs: 30_000 } },
      });
      const applier = ManifestApplier.create({ clients: fleet.clients });
      const deployments = DeploymentService.create({
        stores: fleet.stores,
        applier,
        remover: ManifestRemover.create({ clients: fleet.clients }),
        logger: fleet.logger,
        deploy: {
          namespace,
          defaultReplicas: 1,
          progressDeadlineMs: 5_000,
          pollIntervalMs: 25,
        },
      });
      const adopted = jest.spyOn(deployments, 'adoptUnfinished');
      const liveState = ClusterWatches.create({
        clients: fleet.clients,
        applier,
        logger: fleet.logger,
        timings: { backoffMs: 50, maxBackoffMs: 200 },
      });
      const compared: string[] = [];
      const recordSync = fleet.stores.deployments.recordSync.bind(
        fleet.stores.deployments,
      );
      jest
        .spyOn(fleet.stores.deployments, 'recordSync')
        .mockImplementation(async (id, ...rest) => {
          compared.push(id);
          return recordSync(id, ...rest);
        });
      const reconciler = ReconcileWorker.create({
        stores: fleet.stores,
        applier,
        deployments,
        logger: fleet.logger,
        deploy: { namespace },
        reconcile: {
          intervalMs: 60_000,
          concurrency: 8,
          resyncIntervalMs: 600_000,
        },
        liveState,
        shards: fleet.worker.shardOwnership(),
      });
      // As the plugin wires them: a cluster's objects are compared once its watches listed.
      const driftChecks = DriftChecks.create({
        check: changes => reconciler.checkChanged(changes),
        logger: fleet.logger,
      });
      liveState.listen(
        change => driftChecks.changed(change),
        cluster => {
          for (const object of reconciler.objectsOn(cluster))
            driftChecks.changed(object);
        },
      );
      stops.push(
        () => deployments.stop(),
        () => driftChecks.stop(),
        () => liveState.stop(),
        () => fleet.worker.stop(),
      );
      return { ...fleet, reconciler, liveState, adopted, compared };
    }

    const until = async (what: string, done: () => boolean) => {
      const deadline = Date.now() + 20_000;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
        await new Promise(r => setTimeout(r, 25));
      }
    };

    it('each replica watches and reconciles the clusters of its own shards, placement is one task, and shards moving move both', async () => {
      const knex = await databases.init(databaseId);
      const a = await replica(knex);
      const b = await replica(knex);
      await a.discovery.run();
      expect(await a.worker.claimShards()).toEqual([0, 1, 2, 3]);
      expect(await b.worker.claimShards()).toEqual([]);
      expect(await a.worker.claimShards()).toEqual([0, 1]);
      expect(await b.worker.claimShards()).toEqual([2, 3]);
      await a.worker.runCycle();
      await b.worker.runCycle();

      // One deployment on every cluster, as the database knows them (nothing applied: each
      // compare finds its objects missing and records it).
      const byCluster = new Map<string, string>();
      for (const cluster of CLUSTERS) {
        const d = await seedDeployment(
          a.stores,
          cluster,
          `app-${cluster}-${tag}`,
          'DEPLOYED',
        );
        byCluster.set(cluster, d.id);
      }
      const seededOn = (clusters: string[]) =>
        clusters.map(c => byCluster.get(c)!).sort();
      const seeded = (compared: string[]) =>
        [...new Set(compared)]
          .filter(id => [...byCluster.values()].includes(id))
          .sort();
      // An application whose placement names a cluster it is not on: placing it is fleet-wide.
      await a.stores.applications.insertApplication({
        entityRef: `component:default/placed-${tag}`,
        name: `placed-${tag}`,
        spec: { image: 'nginx:1.27' },
        placement: { clusters: ['juliet'] },
      });

      // A sharded run places nothing and adopts nothing: that is the placement task's.
      const bRun = await b.reconciler.runOnce();
      const aRun = await a.reconciler.runOnce();
      expect([...bRun.placed, ...aRun.placed]).toEqual([]);
      expect(a.adopted).not.toHaveBeenCalled();
      expect(b.adopted).not.toHaveBeenCalled();
      expect([...bRun.errors, ...aRun.errors]).toEqual([]);
      const placing = await b.reconciler.placeOnce();
      expect(placing.placed.map(p => p.cluster)).toEqual(['juliet']);
      expect(b.adopted).toHaveBeenCalledTimes(1);

      // Watches follow the shards: every cluster is watched once, by its shard's holder.
      expect(a.liveState.clusters().sort()).toEqual(inShards([0, 1]));
      expect(b.liveState.clusters().sort()).toEqual(inShards([2, 3]));
      // So does the compare of each seeded deployment (once the watches listed).
      await until(
        'each replica compared its own deployments',
        () =>
          seeded(a.compared).length === inShards([0, 1]).length &&
          seeded(b.compared).length === inShards([2, 3]).length,
      );
      expect(seeded(a.compared)).toEqual(seededOn(inShards([0, 1])));
      expect(seeded(b.compared)).toEqual(seededOn(inShards([2, 3])));

      // b dies (no release); once its leases ran out, a holds every shard, and its next run
      // watches and compares b's clusters too.
      await b.worker.stop();
      b.liveState.stop();
      const bHolder = (
        await a.stores.state.listLeases('health-cycle:shard-')
      ).find(l => l.name === 'health-cycle:shard-2')!.holder;
      await knex('fleet_locks')
        .where({ holder: bHolder })
        .update({ expires_at: new Date(Date.now() - 1000) });
      expect(await a.worker.claimShards()).toEqual([0, 1, 2, 3]);
      a.compared.length = 0;
      await a.reconciler.runOnce();
      expect(a.liveState.clusters().sort()).toEqual([...CLUSTERS].sort());
      await until("a compared b's deployments", () =>
        seededOn(inShards([2, 3])).every(id => a.compared.includes(id)),
      );

      // A replica joins: a lets shards 2 and 3 go. Before its next run it still watches their
      // clusters, but a change there is no longer its to compare; its next run stops watching.
      const c = await replica(knex);
      expect(await c.worker.claimShards()).toEqual([]);
      expect(await a.worker.claimShards()).toEqual([0, 1]);
      expect(await c.worker.claimShards()).toEqual([2, 3]);
      a.compared.length = 0;
      const juliet = await a.reconciler.checkChanged([
        { cluster: 'juliet', namespace, name: `app-juliet-${tag}` },
      ]);
      expect(juliet.checked).toBe(0);
      const echo = await a.reconciler.checkChanged([
        { cluster: 'echo', namespace, name: `app-echo-${tag}` },
      ]);
      expect(echo.checked).toBe(1);
      expect(seeded(a.compared)).toEqual([byCluster.get('echo')]);
      await a.reconciler.runOnce();
      expect(a.liveState.clusters().sort()).toEqual(inShards([0, 1]));
    });
  },
);

describe('ReconcileWorker.start', () => {
  it('schedules the reconcile on every replica and the placement on one at a time with shards; one global task without', async () => {
    const scheduled = async (shards?: ReconcileShards) => {
      const scheduler = mockServices.scheduler.mock();
      await ReconcileWorker.create({
        stores: {} as any,
        applier: {} as any,
        deployments: {} as any,
        logger: mockServices.logger.mock(),
        scheduler,
        deploy: { namespace: 'apps' },
        reconcile: { intervalMs: 60_000, concurrency: 1 },
        shards,
      }).start();
      return scheduler.scheduleTask.mock.calls.map(([task]) => [
        task.id,
        task.scope,
      ]);
    };
    expect(await scheduled()).toEqual([['fleet-reconcile', 'global']]);
    expect(
      await scheduled({ current: () => ({ holdsCluster: () => true }) }),
    ).toEqual([
      ['fleet-reconcile', 'local'],
      ['fleet-placement', 'global'],
    ]);
  });
});
