/*
 * Two backend instances on one PostgreSQL: two HealthWorkers, each with its own knex pool, store
 * and clients (as two replicas have), run cycles at the same moments. The database lease must
 * make every cycle run alone: each cluster probed exactly once per cycle, never twice.
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
  title: 'Two backend instances, one database',
  tried: `replicas A and B (own knex pool, store, clients) on one PostgreSQL: ${TICKS} scheduler ticks firing on both at once (runCycle without waiting), then ${ROUNDS} rounds of manual runs on both at once (runCycle waiting for the lease); 8 clusters, 300 ms API latency, one cluster down throughout`,
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
    const recorder =
      (instance: string) =>
      (probe: ProbeFn): ProbeFn =>
      async (cluster, timeoutMs) => {
        const start = Date.now();
        try {
          return await probe(cluster, timeoutMs);
        } finally {
          probes.push({
            instance,
            cluster: cluster.name,
            start,
            end: Date.now(),
          });
        }
      };
    const a = await createFleet({
      knex: db.knex({ poolMax: 5 }),
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

    // 1. Scheduler ticks: both replicas fire at the same moment; the loser skips (ConflictError).
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
      `${TICKS} ticks fired on both: each time exactly one cycle ran and the other replica skipped (ConflictError), and every cluster got exactly one namespace list (one probe)`,
      { ranPerTick, conflictsPerTick },
    );

    // 2. Manual runs on both at once: the second waits for the lease, then runs its own cycle.
    for (let round = 0; round < ROUNDS; round++) {
      await Promise.all([run('A', a.worker, true), run('B', b.worker, true)]);
    }
    const manual = cycles.slice(-2 * ROUNDS);
    checks.equal(
      manual.length,
      2 * ROUNDS,
      `${ROUNDS} rounds of manual runs on both: ${2 * ROUNDS} cycles ran`,
    );
    checks.ok(
      manual.filter(c => c.instance === 'A').length === ROUNDS &&
        manual.filter(c => c.instance === 'B').length === ROUNDS,
      'each replica ran its own manual cycles',
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
      `in each of the ${cycles.length} cycles every cluster was probed exactly once, by the replica running that cycle`,
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
  },
};
