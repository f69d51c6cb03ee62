/*
 * Three backend processes on one PostgreSQL share the health work by shards. Each probes only
 * the clusters of the shards it holds, and watches only those (every cluster's watches are on
 * one replica's connection); one is SIGKILLed in the middle of a cycle; its shards are taken
 * over by the two others once its leases run out, every cluster is probed again, and its
 * clusters are watched again, by the survivors.
 */
import path from 'node:path';
import { establishedConnections, startSimulator } from '@cnp/fleet-harness';
import { shardOf } from '@cnp/plugin-fleet-backend/testUtils';
import {
  CHAOS_READY_DELAY_MS,
  startFleetBackend,
  waitFor,
  type FleetHttp,
} from '../lib';
import type { Scenario } from '../lib';

const SHARDS = 6;
const LEASE_MS = 3_000;
const CLUSTERS = 12;
/** The probe's request: the simulator counts it per cluster. */
const NAMESPACES = '/api/v1/namespaces';
const REPLICAS = 3;

interface Lease {
  name: string;
  holder: string;
  expires_at: Date;
}

export const shards: Scenario = {
  id: 'shards',
  title: 'Three replicas sharing the health work, one killed mid-cycle',
  tried: `3 backend processes on one PostgreSQL with fleet.health.shards ${SHARDS} and shardLease ${
    LEASE_MS / 1000
  } s, ${CLUSTERS} clusters: a cycle on each; then one SIGKILLed while its cycle probes (1.5 s API latency); the two others run cycles after`,
  timeoutMs: 300_000,
  async run({ checks, db, tmp, log }) {
    const names = Array.from({ length: CLUSTERS }, (_, i) => `s-${i + 1}`);
    const sim = await startSimulator({
      clusters: names,
      readyDelayMs: CHAOS_READY_DELAY_MS,
    });
    const knex = db.knex();
    const fleet = {
      // Each replica's reconcile, with its watches, runs every 2 s (from 15 s after startup).
      reconcile: { interval: { seconds: 2 } },
      health: {
        shards: SHARDS,
        shardLease: { milliseconds: LEASE_MS },
        manualMinInterval: { seconds: 0 },
        probeTimeout: { seconds: 5 },
      },
    };
    const backends: FleetHttp[] = [];
    // Each on a free port: a fixed one may be taken by a process of an earlier scenario.
    for (let i = 0; i < REPLICAS; i++) {
      backends.push(
        await startFleetBackend({
          db,
          kubeconfigDir: sim.kubeconfigDir,
          fleet,
          logFile: path.join(tmp, `backend-${i + 1}.log`),
        }),
      );
    }
    const pids = backends.map(b => b.backend.pid);
    log(`backends: pids ${pids.join(', ')}`);
    /** Which backend holds a lease: its holder names the process. */
    const ownerOf = (holder: string) =>
      pids.findIndex(pid => holder.includes(`-${pid}-`));
    const shardLeases = async (): Promise<Lease[]> =>
      knex('fleet_locks')
        .where('name', 'like', 'health-cycle:shard-%')
        .select('name', 'holder', 'expires_at');
    const heldBy = async (alive: number[]) => {
      const now = Date.now();
      const leases = (await shardLeases()).filter(
        l => new Date(l.expires_at).getTime() > now,
      );
      const counts = alive.map(
        i => leases.filter(l => ownerOf(l.holder) === i).length,
      );
      return { leases: leases.length, counts };
    };

    // 1. The three find each other and split the shards, two each.
    const split = await waitFor(
      'the shards split two by two',
      async () => {
        const held = await heldBy([0, 1, 2]);
        return held.leases === SHARDS && held.counts.every(n => n === 2)
          ? held
          : undefined;
      },
      30_000,
    ).catch(error => {
      log(String(error));
      return undefined;
    });
    checks.ok(
      split !== undefined,
      `the ${SHARDS} shards are held, ${SHARDS / 3} by each replica`,
      await heldBy([0, 1, 2]),
    );

    // 1b. Each cluster is watched by the replica that holds its shard, and by no other: its
    // five watch streams on one connection, whose client port is that replica's.
    const watchers = async (alive: number[]) => {
      const simPorts = new Set(
        names.map(name => Number(new URL(sim.endpoint(name)).port)),
      );
      const portsOf = await Promise.all(
        alive.map(
          async i =>
            new Set((await establishedConnections(pids[i], simPorts)) ?? []),
        ),
      );
      const leases = await shardLeases();
      return names.map(name => {
        const holder = leases.find(
          l => l.name === `health-cycle:shard-${shardOf(name, SHARDS)}`,
        )?.holder;
        const by = sim
          .watchPeerPorts(name)
          .map(port => alive.find((_, k) => portsOf[k].has(port)) ?? -1);
        return {
          name,
          streams: sim.openWatches(name),
          by,
          holder: holder === undefined ? -1 : ownerOf(holder),
        };
      });
    };
    const watchedByHolders = (seen: Awaited<ReturnType<typeof watchers>>) =>
      seen.every(
        w =>
          w.streams === 5 &&
          w.by.length === 1 &&
          w.holder >= 0 &&
          w.by[0] === w.holder,
      );
    const spread = await waitFor(
      'every cluster watched by its shard holder',
      async () => {
        const seen = await watchers([0, 1, 2]);
        return watchedByHolders(seen) ? seen : undefined;
      },
      60_000,
    ).catch(() => undefined);
    checks.ok(
      spread !== undefined,
      `each of the ${CLUSTERS} clusters is watched by the replica holding its shard, and only by it (one connection, 5 watch streams)`,
      await watchers([0, 1, 2]),
    );
    checks.ok(
      spread !== undefined && new Set(spread.map(w => w.by[0])).size === 3,
      'the watches are spread over the 3 replicas',
      spread?.map(w => `${w.name}: replica ${w.by[0] + 1}`),
    );

    // 2. A cycle on each: together they probe every cluster exactly once.
    const before = names.map(n => sim.requestCount(n, NAMESPACES));
    const summaries = [];
    for (const backend of backends) {
      summaries.push(await backend.call('POST', '/health/run'));
    }
    const deltas = names.map(
      (n, i) => sim.requestCount(n, NAMESPACES) - before[i],
    );
    checks.ok(
      deltas.every(d => d === 1),
      `one cycle on each replica: each of the ${CLUSTERS} clusters got exactly one probe`,
      deltas,
    );
    checks.ok(
      summaries.every(s => s.status === 200),
      'each manual run answered 200',
      summaries.map(s => s.status),
    );
    const online = await knex('fleet_clusters')
      .where({ status: 'ONLINE' })
      .count<{ n: string }[]>({ n: '*' });
    checks.equal(
      Number(online[0].n),
      CLUSTERS,
      'every cluster ONLINE after one cycle on each',
    );

    // 3. The third replica is SIGKILLed while its cycle probes: once the simulator has received
    // a probe of one of its clusters (each answer takes 1.5 s), before the cycle writes anything.
    const leasesNow = await shardLeases();
    const third = names.filter(name => {
      const holder = leasesNow.find(
        l => l.name === `health-cycle:shard-${shardOf(name, SHARDS)}`,
      )?.holder;
      return holder !== undefined && ownerOf(holder) === 2;
    });
    const thirdRequests0 = third.map(n => sim.requestCount(n, NAMESPACES));
    const probesInFlight = () =>
      third.filter(
        (n, i) => sim.requestCount(n, NAMESPACES) > thirdRequests0[i],
      ).length;
    for (const n of names) sim.setFault(n, { mode: 'ok', latencyMs: 1_500 });
    const dyingFrom = new Date();
    const dying = backends[2].call('POST', '/health/run').then(
      answer => answer.status,
      () => undefined,
    );
    const probing = await waitFor(
      "replica 3's cycle probing its clusters",
      async () => (probesInFlight() > 0 ? true : undefined),
      30_000,
    ).catch(error => {
      log(String(error));
      return false;
    });
    const inFlightAtKill = probesInFlight();
    const killed = await backends[2].backend.kill();
    const killedAt = Date.now();
    const dyingAnswer = await dying;
    // Read before the survivors can hold its shards (a lease of 3 s): rows of its clusters
    // written by that cycle would carry a probe time from after it began.
    const writtenByDying = await knex('fleet_clusters')
      .whereIn('name', third)
      .where('last_probe_at', '>=', dyingFrom)
      .pluck('name');
    for (const n of names) sim.setFault(n, { mode: 'ok' });
    checks.ok(
      probing === true &&
        third.length > 0 &&
        inFlightAtKill > 0 &&
        killed.signal === 'SIGKILL' &&
        dyingAnswer === undefined &&
        writtenByDying.length === 0,
      `replica 3 was SIGKILLed mid-cycle: probes of ${inFlightAtKill} of its ${third.length} clusters had reached the simulator, its manual run got no answer, and its cycle wrote no cluster row`,
      {
        third,
        inFlightAtKill,
        signal: killed.signal,
        dyingAnswer,
        writtenByDying,
      },
    );

    const taken = await waitFor(
      'the survivors to hold every shard',
      async () => {
        const held = await heldBy([0, 1]);
        return held.counts[0] + held.counts[1] === SHARDS ? held : undefined;
      },
      6 * LEASE_MS,
    ).catch(error => {
      log(String(error));
      return undefined;
    });
    const takeoverMs = Date.now() - killedAt;
    log(
      `takeover: every shard held by the survivors ${takeoverMs} ms after the kill (shard lease ${LEASE_MS} ms, claims every ${
        LEASE_MS / 3
      } ms)`,
    );
    checks.ok(
      taken !== undefined,
      `the killed replica's shards were taken over by the two others (${takeoverMs} ms after the kill)`,
      await heldBy([0, 1]),
    );
    checks.ok(
      taken !== undefined && taken.counts.every(n => n === SHARDS / 2),
      `the two survivors hold ${SHARDS / 2} shards each (fair share)`,
      taken,
    );
    checks.ok(
      takeoverMs <= 2 * LEASE_MS,
      `taken over within one lease period and one claim after the last renewal (${takeoverMs} ms ≤ ${
        2 * LEASE_MS
      } ms)`,
    );

    // A survivor probes the clusters of the shards it took over at once: those probes come
    // first (each of the dead replica's clusters probed after the kill), so that the cycles
    // below are all that is counted, however late a loaded machine runs them.
    const takenProbed = await waitFor(
      "the dead replica's clusters probed by the survivors",
      async () =>
        (
          await knex('fleet_clusters')
            .whereIn('name', third)
            .where('last_probe_at', '>', new Date(killedAt))
            .pluck('name')
        ).length === third.length
          ? true
          : undefined,
      30_000,
    ).catch(() => false);
    checks.ok(
      takenProbed,
      `the survivors probed the ${third.length} clusters of the shards they took over without waiting for a cycle`,
    );

    // 4. A cycle on each survivor: every cluster probed once more, all after the kill.
    const again = names.map(n => sim.requestCount(n, NAMESPACES));
    for (const backend of backends.slice(0, 2)) {
      await backend.call('POST', '/health/run');
    }
    const after = names.map(
      (n, i) => sim.requestCount(n, NAMESPACES) - again[i],
    );
    checks.ok(
      after.every(d => d === 1),
      `one cycle on each survivor: each of the ${CLUSTERS} clusters got exactly one probe, the dead replica's included`,
      after,
    );
    const stale = await knex('fleet_clusters')
      .where('last_probe_at', '<', new Date(killedAt))
      .orWhereNull('last_probe_at')
      .pluck('name');
    checks.equal(stale, [], 'every cluster was probed after the kill');

    // 5. The dead replica's clusters are watched again, each by the survivor holding its shard.
    const rewatched = await waitFor(
      "the dead replica's clusters watched again",
      async () => {
        const seen = await watchers([0, 1]);
        return watchedByHolders(seen) ? seen : undefined;
      },
      30_000,
    ).catch(() => undefined);
    checks.ok(
      rewatched !== undefined,
      `after the kill, each of the ${CLUSTERS} clusters is watched again, by the survivor holding its shard`,
      await watchers([0, 1]),
    );
  },
};
