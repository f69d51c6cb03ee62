/*
 * Flapping: a cluster that fails and succeeds on alternate cycles, 100 cycles, failureThreshold
 * 2 → never OFFLINE, nothing degraded. Then a blip probed again and again (manual runs back to
 * back) with minOutage 60 s → failureThreshold reached, still never OFFLINE.
 */
import {
  createFleet,
  seedDeployments,
  startSimulator,
} from '@cnp/fleet-harness';
import { CHAOS_READY_DELAY_MS } from '../lib';
import type { Scenario } from '../lib';

const CYCLES = 100;
const BLIP_RUNS = 5;
const FAILURES = [
  { mode: 'down' },
  { mode: 'timeout' },
  { mode: 'error' },
] as const;

export const flapping: Scenario = {
  id: 'flapping',
  title: 'Flapping cluster',
  tried: `'flap' alternates failure (down / timeout / error in turn) and success for ${CYCLES} cycles, failureThreshold 2, 3 steady clusters beside it; then a blip: 'flap' down for ${BLIP_RUNS} manual runs back to back, minOutage 60 s`,
  timeoutMs: 180_000,
  async run({ checks, db, log }) {
    const sim = await startSimulator({
      readyDelayMs: CHAOS_READY_DELAY_MS,
      clusters: ['flap', 'steady-1', 'steady-2', 'steady-3'],
    });
    const knex = db.knex();
    const fleet = await createFleet({
      knex,
      kubeconfigDir: sim.kubeconfigDir,
      health: { failureThreshold: 2, probeTimeoutMs: 300 },
    });
    await fleet.worker.runCycle();
    await seedDeployments(knex, sim.clusterNames(), 3);

    /** Deployments degraded by any of the cycles (a degrade then a restore ends DEPLOYED too). */
    let degradedInCycles = 0;
    let maxFailures = 0;
    let offlineSeen = 0;
    const statusesSeen = new Set<string>();
    /** Cycles that probed 'flap' and recorded the outcome its fault called for. */
    let recorded = 0;
    const misrecorded: string[] = [];
    let lastProbeAt = (await fleet.stores.clusters.getCluster('flap'))!
      .lastProbeAt;
    for (let i = 0; i < CYCLES; i++) {
      const failing = i % 2 === 0;
      sim.setFault(
        'flap',
        failing ? FAILURES[(i / 2) % FAILURES.length] : { mode: 'ok' },
      );
      const summary = await fleet.worker.runCycle();
      degradedInCycles += summary.degradedDeployments;
      const flap = (await fleet.stores.clusters.getCluster('flap'))!;
      // A new probe time, and the count the fault calls for: 1 failure, or reset by a success.
      if (
        flap.lastProbeAt !== lastProbeAt &&
        flap.consecutiveFailures === (failing ? 1 : 0)
      ) {
        recorded += 1;
      } else {
        misrecorded.push(
          `cycle ${i + 1}: ${flap.consecutiveFailures} failures, probed ${
            flap.lastProbeAt
          }`,
        );
      }
      lastProbeAt = flap.lastProbeAt;
      statusesSeen.add(flap.status);
      maxFailures = Math.max(maxFailures, flap.consecutiveFailures);
      if (flap.status === 'OFFLINE') offlineSeen += 1;
      if (summary.errors.length)
        log(`cycle ${i + 1}: errors ${JSON.stringify(summary.errors)}`);
    }
    const events = await fleet.stores.events.listEvents({
      subjectKind: 'cluster',
      subject: 'flap',
      limit: 1000,
    });
    const deployments = await fleet.stores.deployments.listDeployments({
      cluster: 'flap',
    });
    const all = await fleet.stores.deployments.listDeployments();

    checks.ok(
      recorded === CYCLES,
      `each of the ${CYCLES} cycles probed 'flap' and recorded what its fault called for (a new probe time; 1 failure after a failing probe, 0 after a success)`,
      misrecorded.slice(0, 5),
    );
    checks.equal(offlineSeen, 0, "'flap' was never OFFLINE after any cycle");
    checks.equal([...statusesSeen], ['ONLINE'], "'flap' stayed ONLINE");
    checks.ok(
      maxFailures === 1,
      `its consecutive failures never passed 1 (max ${maxFailures})`,
      maxFailures,
    );
    checks.equal(
      events.filter(e => e.to === 'OFFLINE').length,
      0,
      'no OFFLINE event recorded',
    );
    checks.ok(
      deployments.length === 3 &&
        deployments.every(d => d.status === 'DEPLOYED') &&
        degradedInCycles === 0,
      `its ${deployments.length} deployments stayed DEPLOYED (no cycle degraded any)`,
      { statuses: deployments.map(d => d.status), degradedInCycles },
    );
    checks.ok(
      all.every(d => d.status === 'DEPLOYED'),
      `all ${all.length} deployments stayed DEPLOYED`,
    );

    // A blip probed again and again: the count passes failureThreshold, the time does not.
    const guarded = await createFleet({
      knex,
      kubeconfigDir: sim.kubeconfigDir,
      health: { failureThreshold: 2, probeTimeoutMs: 300, minOutageMs: 60_000 },
    });
    await guarded.worker.runCycle();
    sim.setFault('flap', { mode: 'down' });
    const blip = [];
    for (let i = 0; i < BLIP_RUNS; i++)
      blip.push(await guarded.worker.runManualCycle());
    sim.setFault('flap', { mode: 'ok' });
    const flapInBlip = (await guarded.stores.clusters.getCluster('flap'))!;
    checks.ok(
      flapInBlip.status === 'ONLINE' &&
        flapInBlip.consecutiveFailures === BLIP_RUNS,
      `a blip of ${BLIP_RUNS} failed probes back to back (threshold 2, minOutage 60 s) kept 'flap' ONLINE`,
      `${flapInBlip.status}, ${flapInBlip.consecutiveFailures} failures: ${flapInBlip.statusReason}`,
    );
    checks.ok(
      blip.every(
        b => b.transitions.length === 0 && b.degradedDeployments === 0,
      ),
      'no transition and no degraded deployment in the blip',
      blip.map(b => b.transitions),
    );
    await guarded.worker.runCycle();
    const afterBlip = await fleet.stores.deployments.listDeployments({
      cluster: 'flap',
    });
    checks.ok(
      afterBlip.every(d => d.status === 'DEPLOYED') &&
        (await fleet.stores.clusters.getCluster('flap'))!
          .consecutiveFailures === 0,
      "after the blip: 'flap' answers again, its count reset, its deployments DEPLOYED",
      afterBlip.map(d => d.status),
    );
  },
};
