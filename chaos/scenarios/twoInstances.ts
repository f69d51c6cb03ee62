/*
 * Two health workers in one process on one PostgreSQL: two HealthWorkers, each with its own knex
 * pool, store and clients (as two replicas have, but not their own processes: the shards
 * scenario runs real backend processes), run cycles at the same moments. The database lease must
 * make every cycle run alone: each cluster probed exactly once per cycle, never twice. Then A's
 * cycle stalls past its lease and B takes it over: the fencing token refuses A's late writes.
 */
import { createFleet, type ProbeFn, startSimulator } from '@cnp/fleet-harness';
import { CHAOS_READY_DELAY_MS } from '../lib';
import type { Scenario } from '../lib';

/** The probe's request: the simulator counts it per cluster. */
const NAMESPACES = '/api/v1/namespaces';

const TICKS = 10;
const ROUNDS = 5;

interface ProbeRecord {
  instance: string;
  cluster: string;
  start: number;
  end: number;
}

export const twoInstances: Scenario = {
  id: 'two-instances',
  title: 'Two health workers in one process, one database',
  tried: `health workers A and B in one process (each its own knex pool, store, clients, as two replicas have) on one PostgreSQL: ${TICKS} scheduler ticks firing on both at once (runCycle without waiting), then ${ROUNDS} rounds of manual runs on both at once (runCycle waiting for the lease); 8 clusters, 300 ms API latency, one cluster down throughout; then A's cycle stalls in a probe past its lease while B takes the lease over and runs a cycle`,
  timeoutMs: 240_000,
  async run({ checks, db, log }) {
    const names = Array.from({ length: 8 }, (_, i) => `r-${i + 1}`);
    const sim = await startSimulator({
      clusters: names,
      readyDelayMs: CHAOS_READY_DELAY_MS,
    });
    for (const name of names)
      sim.setFault(name, { mode: 'ok', latencyMs: 300 });
    sim.setFault('r-8', { mode: 'down' });

    const probes: ProbeRecord[] = [];
    /** Set in step 3: A's probe of r-1 then waits for `stallA` after probing. */
    let stallingA = false;
    let resumeA!: () => void;
    const stallA = new Promise<void>(r => {
      resumeA = r;
    });
    let stalled!: () => void;
    const stalledA = new Promise<void>(r => {
      stalled = r;
    });
    const recorder =
      (instance: string) =>
      (probe: ProbeFn): ProbeFn =>
      async (cluster, timeoutMs) => {
        const start = Date.now();
        try {
          const outcome = await probe(cluster, timeoutMs);
          if (instance === 'A' && stallingA && cluster.name === 'r-1') {
            stalled();
            await stallA;
          }
          return outcome;
        } finally {
          probes.push({
            instance,
            cluster: cluster.name,
            start,
            end: Date.now(),
          });
        }
      };
    const knexA = db.knex({ poolMax: 5 });
    const a = await createFleet({
      knex: knexA,
      kubeconfigDir: sim.kubeconfigDir,
      health: { probeTimeoutMs: 2000 },
      wrapProbe: recorder('A'),
    });
    const b = await createFleet({
      knex: db.knex({ poolMax: 5 }),
      kubeconfigDir: sim.kubeconfigDir,
      health: { probeTimeoutMs: 2000 },
      wrapProbe: recorder('B'),
    });

    const cycles: Array<{ instance: string; start: number; end: number }> = [];
    const run = async (
      instance: string,
      worker: typeof a.worker,
      wait: boolean,
    ) => {
      const summary = await worker.runCycle({ wait });
      cycles.push({
        instance,
        start: Date.parse(summary.startedAt),
        end: Date.parse(summary.finishedAt),
      });
      return summary;
    };
    const requestsBefore = Object.fromEntries(
      names.map(n => [n, sim.requestCount(n, NAMESPACES)]),
    );

    // 1. Scheduler ticks: both workers fire at the same moment; the loser skips (ConflictError).
    const ranPerTick: number[] = [];
    const conflictsPerTick: number[] = [];
    for (let tick = 0; tick < TICKS; tick++) {
      const requests0 = Object.fromEntries(
        names.map(n => [n, sim.requestCount(n, NAMESPACES)]),
      );
      const results = await Promise.allSettled([
        run('A', a.worker, false),
        run('B', b.worker, false),
      ]);
      ranPerTick.push(results.filter(r => r.status === 'fulfilled').length);
      conflictsPerTick.push(
        results.filter(
          r =>
            r.status === 'rejected' &&
            (r.reason as Error).name === 'ConflictError',
        ).length,
      );
      const deltas = names.map(
        n => sim.requestCount(n, NAMESPACES) - requests0[n],
      );
      // One probe = one namespace list (a down cluster's too); /version is asked only now and then.
      if (!deltas.every(d => d === 1))
        log(
          `tick ${tick + 1}: namespace-list deltas ${JSON.stringify(deltas)}`,
        );
      if (!deltas.every(d => d === 1)) ranPerTick[tick] = -1;
    }
    checks.ok(
      ranPerTick.every(n => n === 1) && conflictsPerTick.every(n => n === 1),
      `${TICKS} ticks fired on both: each time exactly one cycle ran and the other worker skipped (ConflictError), and every cluster got exactly one namespace list (one probe)`,
      { ranPerTick, conflictsPerTick },
    );

    // 2. Manual runs on both at once: the second waits for the lease, then runs its own cycle.
    const manualFrom = cycles.length;
    const manualRequests0 = names.map(n => sim.requestCount(n, NAMESPACES));
    for (let round = 0; round < ROUNDS; round++) {
      await Promise.all([run('A', a.worker, true), run('B', b.worker, true)]);
    }
    const manual = cycles.slice(manualFrom);
    // Its own: a cycle of its own start, whose probes reached every cluster (not the other
    // run's summary handed back to the one that waited).
    const manualStarts = new Set(manual.map(c => c.start)).size;
    const manualRequests = names.map(
      (n, i) => sim.requestCount(n, NAMESPACES) - manualRequests0[i],
    );
    checks.ok(
      manual.length === 2 * ROUNDS &&
        manualStarts === 2 * ROUNDS &&
        manualRequests.every(r => r === 2 * ROUNDS),
      `${ROUNDS} rounds of manual runs on both: each of the ${
        2 * ROUNDS
      } runs ran a cycle of its own (${
        2 * ROUNDS
      } distinct start times; the simulator saw ${
        2 * ROUNDS
      } namespace lists per cluster)`,
      { cycles: manual.length, manualStarts, manualRequests },
    );
    // Its own: the probes inside each of its manual cycles were made by its own worker.
    const ranOwn = (instance: string) =>
      manual.filter(
        c =>
          c.instance === instance &&
          probes.some(
            p =>
              p.instance === instance &&
              p.start >= c.start &&
              p.end <= c.end + 5,
          ),
      ).length;
    checks.ok(
      ranOwn('A') === ROUNDS && ranOwn('B') === ROUNDS,
      'each worker ran its own manual cycles (its own probes inside each)',
      { A: ranOwn('A'), B: ranOwn('B') },
    );

    // No two cycles overlap, and within each cycle every cluster was probed exactly once.
    const sorted = [...cycles].sort((x, y) => x.start - y.start);
    const overlaps = sorted.filter(
      (c, i) => i > 0 && c.start < sorted[i - 1].end,
    ).length;
    checks.equal(
      overlaps,
      0,
      `none of the ${cycles.length} cycles overlapped another (start/finish times)`,
    );
    const perCycle = sorted.map(c => {
      const inside = probes.filter(
        p => p.start >= c.start && p.end <= c.end + 5,
      );
      const counts = names.map(n => inside.filter(p => p.cluster === n).length);
      return {
        instance: c.instance,
        counts,
        foreign: inside.filter(p => p.instance !== c.instance).length,
      };
    });
    checks.ok(
      perCycle.every(c => c.counts.every(n => n === 1) && c.foreign === 0),
      `in each of the ${cycles.length} cycles every cluster was probed exactly once, by the worker running that cycle`,
      perCycle.filter(c => !(c.counts.every(n => n === 1) && c.foreign === 0)),
    );
    checks.equal(
      probes.length,
      cycles.length * names.length,
      `probes in all: ${cycles.length} cycles × ${names.length} clusters`,
    );
    const requests = names.map(
      n => sim.requestCount(n, NAMESPACES) - requestsBefore[n],
    );
    checks.ok(
      requests.every(r => r === cycles.length),
      `simulator request counts agree: ${cycles.length} namespace lists per cluster (1 per probe)`,
      requests,
    );
    const down = await a.stores.clusters.getCluster('r-8');
    checks.equal(
      down?.consecutiveFailures,
      cycles.length,
      `the down cluster's consecutive failures equal the number of cycles (${cycles.length}): no update lost or doubled`,
    );

    // 3. A's cycle stalls in a probe (a GC pause, a hung socket) until its lease has run out; B
    // takes the lease over and runs a whole cycle. A's decisions, made from older reads, come
    // last: the fencing token must refuse every one of its writes.
    stallingA = true;
    const late = a.worker.runCycle({ wait: false });
    await stalledA;
    await knexA('fleet_locks')
      .where({ name: 'health-cycle' })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const newer = await b.worker.runCycle({ wait: false });
    const afterNewer = await b.stores.clusters.listClusters();
    resumeA();
    const stale = await late;
    checks.ok(
      stale.errors.length === names.length &&
        stale.errors.every(e => /lease was lost/.test(e.message)),
      `A's cycle that lost its lease to B had all ${names.length} of its cluster writes refused`,
      stale.errors,
    );
    const afterStale = await b.stores.clusters.listClusters();
    checks.ok(
      JSON.stringify(afterStale) === JSON.stringify(afterNewer) &&
        afterStale.every(c => c.lastProbeAt === newer.startedAt),
      "B's probe results stand after A's late cycle: every cluster row is as B's cycle wrote it",
      afterStale
        .filter(c => c.lastProbeAt !== newer.startedAt)
        .map(c => ({ name: c.name, lastProbeAt: c.lastProbeAt })),
    );
    checks.equal(
      (await b.stores.state.getLastCycle())?.startedAt,
      newer.startedAt,
      "the last cycle's summary is B's, not the late one of A",
    );
  },
};
