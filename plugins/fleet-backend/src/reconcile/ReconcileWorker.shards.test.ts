/*
 * The reconcile and its watches split by the health worker's shards: two replicas over one
 * database, each reconciling and watching the clusters of the shards it holds, the fleet-wide
 * placement done by the holder of shard 0 only; when one replica dies, the other takes its
 * shards over and, at its next run, watches and reconciles their clusters too.
 */
import { mockServices } from '@backstage/backend-test-utils';
import {
  createFleet,
  createTestDatabases,
  seedDeployment,
  useSimulator,
} from '@cnp/fleet-harness';
import type { Knex } from 'knex';
import { DeploymentService } from '../deploy/DeploymentService';
import { ManifestApplier } from '../deploy/ManifestApplier';
import { ManifestRemover } from '../deploy/ManifestRemover';
import { shardOf } from '../health/HealthWorker';
import { ClusterWatches } from '../livestate/ClusterWatches';
import { ReconcileWorker } from './ReconcileWorker';

jest.setTimeout(90_000);

const databases = createTestDatabases();
// With 4 shards (FNV-1a of the name): echo, india, kilo in 0; charlie, delta in 1; juliet in 2;
// alpha, bravo in 3.
const CLUSTERS = [
  'alpha',
  'bravo',
  'charlie',
  'delta',
  'echo',
  'india',
  'juliet',
  'kilo',
];
const SHARDS = 4;
const sim = useSimulator({
  clusters: CLUSTERS,
  watch: { controllerTickMs: 50 },
});

const inShards = (shards: number[]) =>
  CLUSTERS.filter(name => shards.includes(shardOf(name, SHARDS))).sort();

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
      stops.push(
        () => deployments.stop(),
        () => liveState.stop(),
        () => fleet.worker.stop(),
      );
      return { ...fleet, reconciler, liveState, adopted, compared };
    }

    it('each replica watches and reconciles the clusters of its own shards; only the holder of shard 0 places; a survivor takes over the rest', async () => {
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
      // An application whose placement names a cluster it is not on: placing it is fleet-wide.
      await a.stores.applications.insertApplication({
        entityRef: `component:default/placed-${tag}`,
        name: `placed-${tag}`,
        spec: { image: 'nginx:1.27' },
        placement: { clusters: ['juliet'] },
      });

      const bRun = await b.reconciler.runOnce();
      expect(bRun.placed).toEqual([]);
      expect(b.adopted).not.toHaveBeenCalled();
      const aRun = await a.reconciler.runOnce();
      expect(aRun.placed.map(p => p.cluster)).toEqual(['juliet']);
      expect(a.adopted).toHaveBeenCalledTimes(1);

      // Watches follow the shards: every cluster is watched once, by its shard's holder.
      expect(a.liveState.clusters().sort()).toEqual(inShards([0, 1]));
      expect(b.liveState.clusters().sort()).toEqual(inShards([2, 3]));
      // So does the compare of each seeded deployment.
      const seededOn = (clusters: string[]) =>
        clusters.map(c => byCluster.get(c)!).sort();
      expect(
        [...new Set(a.compared)].filter(id =>
          [...byCluster.values()].includes(id),
        ),
      ).toEqual(expect.arrayContaining(seededOn(inShards([0, 1]))));
      expect(
        a.compared.filter(id => seededOn(inShards([2, 3])).includes(id)),
      ).toEqual([]);
      expect([...new Set(b.compared)].sort()).toEqual(
        seededOn(inShards([2, 3])),
      );

      // b dies (no release); once its leases ran out, a holds every shard, and its next run
      // watches and compares b's clusters too, while b's stale watches are gone with it.
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
      expect(a.compared).toEqual(
        expect.arrayContaining(seededOn(inShards([2, 3]))),
      );
    });
  },
);
