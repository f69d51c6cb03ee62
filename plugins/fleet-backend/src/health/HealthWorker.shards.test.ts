import { mockServices } from '@backstage/backend-test-utils';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import { eventually } from '../testing/eventually';
import { createFleet, seedDeployment } from '../testing/fleet';
import type { Knex } from 'knex';
import { HealthWorker } from './HealthWorker';
import {
  inShards,
  SHARDED_CLUSTERS,
  SHARDS,
} from '../__testUtils__/shardedFleet';

// Several replicas share the health work, shard by shard, over one database. Time is not
// waited for: a lease period passing is its expiry written into `fleet_locks`.

jest.setTimeout(60_000);

const databases = createTestDatabases();
const CLUSTERS = SHARDED_CLUSTERS;
const sim = useSimulator({ clusters: CLUSTERS });

describe.each(databases.eachSupportedId())(
  'HealthWorker with shards, two replicas over one database (%s)',
  databaseId => {
    /** One replica: its worker, and the clusters it probed since `probed.length = 0`. */
    async function replica(
      knex: Knex,
      health: Parameters<typeof createFleet>[0]['health'] = {},
    ) {
      const probed: string[] = [];
      const fleet = await createFleet({
        knex,
        kubeconfigDir: sim.kubeconfigDir,
        logger: mockServices.logger.mock(),
        health: {
          sharding: { shards: SHARDS, leaseMs: 30_000 },
          ...health,
        },
        wrapProbe: probe => async (cluster, timeoutMs) => {
          probed.push(cluster.name);
          return probe(cluster, timeoutMs);
        },
      });
      return { ...fleet, probed };
    }

    /**
     * A replica's worker as the backend runs it: started (it claims every third of a lease, and
     * at another's lease expiry), with the clusters it probes recorded.
     */
    async function started(a: Awaited<ReturnType<typeof replica>>) {
      const probed: string[] = [];
      const worker = HealthWorker.create({
        stores: a.stores,
        clients: {
          probe: async (cluster, timeoutMs) => {
            probed.push(cluster.name);
            return a.clients.probe(cluster, timeoutMs);
          },
        },
        logger: mockServices.logger.mock(),
        health: a.health,
        scheduler: mockServices.scheduler.mock(),
      });
      await worker.start();
      return { worker, probed };
    }

    /** Two replicas that have found each other and split the shards: a holds 0-1, b 2-3. */
    async function twoReplicas(health: Parameters<typeof replica>[1] = {}) {
      const knex = await databases.init(databaseId);
      const a = await replica(knex, health);
      const b = await replica(knex, health);
      await a.discovery.run();
      // a, alone, takes every shard; b, arriving, finds none free; a then lets its extra ones go
      // (its fair share is now ceil(4 / 2)), and b takes them.
      expect(await a.worker.claimShards()).toEqual([0, 1, 2, 3]);
      expect(await b.worker.claimShards()).toEqual([]);
      expect(await a.worker.claimShards()).toEqual([0, 1]);
      expect(await b.worker.claimShards()).toEqual([2, 3]);
      return { knex, a, b };
    }
    const round = async (
      ...replicas: Array<{ worker: { runCycle(): any } }>
    ) => {
      for (const r of replicas) await r.worker.runCycle();
    };

    it('each replica probes only the clusters of its shards, and together they probe every cluster once', async () => {
      const { a, b } = await twoReplicas();
      await round(a, b);
      expect([...a.probed].sort()).toEqual(inShards([0, 1]));
      expect([...b.probed].sort()).toEqual(inShards([2, 3]));
      expect([...a.probed, ...b.probed].sort()).toEqual([...CLUSTERS].sort());
      for (const name of CLUSTERS) {
        expect(await a.stores.clusters.getCluster(name)).toMatchObject({
          status: 'ONLINE',
        });
      }
      // The last-cycle summary is the holder of shard 0's, counted over the whole fleet (the
      // other shards' clusters as their replica left them).
      await a.worker.runCycle();
      expect(await a.stores.state.getLastCycle()).toMatchObject({
        probed: CLUSTERS.length,
        online: CLUSTERS.length,
      });
    });

    it('the shards of a replica that stopped renewing are taken over once their lease has run out, not before', async () => {
      const { knex, a, b } = await twoReplicas();
      await round(a, b);
      // b dies: it stops without letting its leases go.
      await b.worker.stop();
      // Within the lease period its shards are still b's.
      expect(await a.worker.claimShards()).toEqual([0, 1]);
      // One lease period later (its presence and shard leases expired) a takes every shard ...
      const leases = await a.stores.state.listLeases('health-cycle:shard-');
      const bHolder = leases.find(
        l => l.name === 'health-cycle:shard-2',
      )!.holder;
      await knex('fleet_locks')
        .where({ holder: bHolder })
        .update({ expires_at: new Date(Date.now() - 1000) });
      a.probed.length = 0;
      sim.setFault('juliet', { mode: 'down' });
      const summary = await a.worker.runCycle();
      expect(await a.worker.claimShards()).toEqual([0, 1, 2, 3]);
      // ... and probes every cluster, b's included.
      expect([...a.probed].sort()).toEqual([...CLUSTERS].sort());
      expect(summary.errors).toEqual([]);
      expect(await a.stores.clusters.getCluster('juliet')).toMatchObject({
        consecutiveFailures: 1,
      });
      const taken = await a.stores.state.listLeases('health-cycle:shard-');
      expect(taken.map(l => l.holder)).not.toContain(bHolder);
    });

    it('a running replica takes over the shards of one that died as soon as their leases run out, not at its next periodic claim', async () => {
      const knex = await databases.init(databaseId);
      const b = await replica(knex);
      await b.discovery.run();
      expect(await b.worker.claimShards()).toEqual([0, 1, 2, 3]);
      // b dies: its leases (presence and shards) run on for their 30 s.
      await b.worker.stop();
      const leases = await b.stores.state.listLeases('health-cycle:shard-');
      const bHolder = leases[0].holder;
      // a runs as the backend runs it: started, it claims every third of a lease (30 s here,
      // far beyond the waits below).
      const a = await replica(knex, {
        sharding: { shards: SHARDS, leaseMs: 90_000 },
      });
      const { worker } = await started(a);
      try {
        // b's last renewal, as a sees it from now: its leases run out in 4 s (set after a's
        // start, so that a slow start cannot outlast them).
        await knex('fleet_locks')
          .where({ holder: bHolder })
          .update({ expires_at: new Date(Date.now() + 4_000) });
        // Its claim while b's leases still run finds no shard free ...
        expect(await worker.claimShards()).toEqual([]);
        // ... and, with no claim of its own before its next periodic one (30 s away), it holds
        // every shard once they have run out: waited for up to 20 s, still short of that claim.
        const holders = async () =>
          (await a.stores.state.listLeases('health-cycle:shard-'))
            .filter(l => Date.parse(l.expiresAt) > Date.now())
            .map(l => l.holder);
        const held = await eventually(
          async () => {
            const now = await holders();
            expect(now).toHaveLength(SHARDS);
            expect(now).not.toContain(bHolder);
            return now;
          },
          { timeoutMs: 20_000, intervalMs: 100 },
        );
        expect(new Set(held).size).toBe(1);
      } finally {
        await worker.stop({ release: true });
      }
    });

    it('probes the clusters of the shards it took over from a dead replica at once, and keeps them', async () => {
      const knex = await databases.init(databaseId);
      const b = await replica(knex);
      await b.discovery.run();
      expect(await b.worker.claimShards()).toEqual([0, 1, 2, 3]);
      await b.worker.stop();
      const bHolder = (
        await b.stores.state.listLeases('health-cycle:shard-')
      )[0].holder;
      // a claims every third of a lease: 30 s here, far beyond the waits below.
      const a = await replica(knex, {
        sharding: { shards: SHARDS, leaseMs: 90_000 },
      });
      const { worker, probed } = await started(a);
      try {
        // b's last renewal, as a sees it from now (set after a's start, so that a slow start
        // cannot outlast it): its leases (presence, then shards a little later) run out in 4 s.
        await knex('fleet_locks')
          .where({ holder: bHolder })
          .whereNot('name', 'like', 'health-cycle:shard-%')
          .update({ expires_at: new Date(Date.now() + 4_000) });
        await knex('fleet_locks')
          .where({ holder: bHolder })
          .where('name', 'like', 'health-cycle:shard-%')
          .update({ expires_at: new Date(Date.now() + 4_050) });
        // Two replicas live: a takes its fair half, of which none is free yet.
        expect(await worker.claimShards()).toEqual([]);
        // Once b's leases have run out, a takes all four, at once (waited for up to 20 s, short
        // of its periodic claim).
        await eventually(
          async () => {
            const held = (
              await a.stores.state.listLeases('health-cycle:shard-')
            )
              .filter(
                l =>
                  Date.parse(l.expiresAt) > Date.now() && l.holder !== bHolder,
              )
              .map(l => Number(l.name.slice('health-cycle:shard-'.length)));
            expect(held.sort()).toEqual([0, 1, 2, 3]);
          },
          { timeoutMs: 20_000, intervalMs: 100 },
        );
        // ... probes their clusters at once, each once, not at its next interval, and keeps
        // them.
        await eventually(
          () =>
            expect([...new Set(probed)].sort()).toEqual([...CLUSTERS].sort()),
          { timeoutMs: 20_000, intervalMs: 100 },
        );
        await new Promise(resolve => setTimeout(resolve, 300));
        expect(probed).toHaveLength(CLUSTERS.length);
        expect(await worker.claimShards()).toEqual([0, 1, 2, 3]);
      } finally {
        await worker.stop({ release: true });
      }
    });

    it('a mass outage spread over shards raises the guard fleet-wide and holds every cascade, though no shard alone crosses it', async () => {
      const { a, b } = await twoReplicas({
        failureThreshold: 1,
        massOutage: { minClusters: 3, fraction: 0.3 },
      });
      await round(a, b);
      // 3 of 8 clusters go down: a's shards see 2 of their 5, b's 1 of its 3.
      const down = ['echo', 'charlie', 'alpha'];
      const deployments = [];
      for (const name of down) {
        deployments.push(
          await seedDeployment(a.stores, name, 'web', 'DEPLOYED'),
        );
        sim.setFault(name, { mode: 'down' });
      }
      await round(a, b);
      await round(a, b);
      for (const name of down) {
        const cluster = await a.stores.clusters.getCluster(name);
        expect(cluster).toMatchObject({ status: 'OFFLINE' });
        expect(cluster?.cascadeHeldAt).toBeDefined();
      }
      for (const deployment of deployments) {
        expect(
          await a.stores.deployments.getDeployment(deployment.id),
        ).toMatchObject({ status: 'DEPLOYED' });
      }
      const warning = await a.stores.state.getMassOutage();
      expect(warning).toMatchObject({ active: true });
      expect([...warning!.clusters].sort()).toEqual([...down].sort());

      // Once they are back, the holds are dropped and the guard lifts; nothing was degraded.
      for (const name of down) sim.setFault(name, { mode: 'ok' });
      await round(a, b);
      await round(a, b);
      expect(await a.stores.state.getMassOutage()).toMatchObject({
        active: false,
      });
      for (const deployment of deployments) {
        expect(
          await a.stores.deployments.getDeployment(deployment.id),
        ).toMatchObject({ status: 'DEPLOYED' });
      }
    });

    it('a single cluster going OFFLINE in a sharded fleet gets its cascade one cycle later', async () => {
      const { a, b } = await twoReplicas({ failureThreshold: 1 });
      await round(a, b);
      const web = await seedDeployment(b.stores, 'juliet', 'web', 'DEPLOYED');
      sim.setFault('juliet', { mode: 'down' });
      await round(a, b);
      const juliet = await b.stores.clusters.getCluster('juliet');
      expect(juliet).toMatchObject({ status: 'OFFLINE' });
      expect(juliet?.cascadeHeldAt).toBeDefined();
      expect(await b.stores.deployments.getDeployment(web.id)).toMatchObject({
        status: 'DEPLOYED',
      });
      await round(a, b);
      expect(await b.stores.deployments.getDeployment(web.id)).toMatchObject({
        status: 'DEGRADED',
        statusReason: 'CLUSTER_OFFLINE',
      });
      expect(
        (await b.stores.clusters.getCluster('juliet'))?.cascadeHeldAt,
      ).toBeUndefined();
      expect((await a.stores.state.getMassOutage())?.active ?? false).toBe(
        false,
      );
    });
  },
);
