/*
 * The prober's network is cut: every cluster fails at once. The mass-outage guard must hold the
 * cascade (clusters honestly OFFLINE, zero deployments degraded); when the network comes back
 * with one cluster really down, only that cluster's deployments are degraded.
 */
import {
  createFleet,
  seedDeployments,
  startSimulator,
} from '@cnp/fleet-harness';
import { CHAOS_READY_DELAY_MS } from '../lib';
import type { Scenario } from '../lib';

export const networkCut: Scenario = {
  id: 'network-cut',
  title: 'Prober network cut',
  tried:
    "6 clusters × 2 deployments; every cluster black-holed at once (timeout) for 3 cycles; then the network is back except 'n-4'; then 'n-4' recovers",
  timeoutMs: 120_000,
  async run({ checks, db }) {
    const names = Array.from({ length: 6 }, (_, i) => `n-${i + 1}`);
    const sim = await startSimulator({
      clusters: names,
      readyDelayMs: CHAOS_READY_DELAY_MS,
    });
    const knex = db.knex();
    const fleet = await createFleet({
      knex,
      kubeconfigDir: sim.kubeconfigDir,
      health: { probeTimeoutMs: 400 },
    });
    await fleet.worker.runCycle();
    await seedDeployments(knex, names, 2);
    const degradedCount = async () =>
      (await fleet.stores.deployments.listDeployments()).filter(
        d => d.status === 'DEGRADED',
      ).length;

    for (const name of names) sim.setFault(name, { mode: 'timeout' });
    const cut1 = await fleet.worker.runCycle();
    const cut2 = await fleet.worker.runCycle();
    const clustersCut = await fleet.stores.clusters.listClusters();
    checks.ok(
      clustersCut.every(c => c.status === 'OFFLINE'),
      'network cut, 2 cycles: all 6 clusters OFFLINE (honest status)',
      clustersCut.map(c => c.status),
    );
    checks.ok(
      cut2.massOutage.active === true,
      'the mass-outage guard is up, with a fleet-level warning',
      cut2.massOutage,
    );
    const warning = await fleet.stores.state.getMassOutage();
    checks.ok(
      warning?.active === true && warning.clusters.length === 6,
      'the warning is stored (what GET /summary shows), naming the 6 clusters',
      warning,
    );
    checks.equal(
      cut1.degradedDeployments + cut2.degradedDeployments,
      0,
      'zero deployments degraded by those cycles',
    );
    checks.equal(
      await degradedCount(),
      0,
      'zero DEGRADED deployments in the database',
    );
    checks.ok(
      clustersCut.every(c => c.cascadeHeldAt),
      "each cluster's held cascade is recorded in the database",
    );

    const cut3 = await fleet.worker.runCycle();
    checks.ok(
      cut3.massOutage.active &&
        cut3.degradedDeployments === 0 &&
        (await degradedCount()) === 0,
      'a third cycle still cut: the guard stays up, still zero degraded',
      cut3.massOutage,
    );

    for (const name of names)
      if (name !== 'n-4') sim.setFault(name, { mode: 'ok' });
    const back = await fleet.worker.runCycle();
    const clustersBack = await fleet.stores.clusters.listClusters();
    checks.ok(
      clustersBack.filter(c => c.status === 'ONLINE').length === 5 &&
        clustersBack.find(c => c.name === 'n-4')?.status === 'OFFLINE',
      "network back: 5 clusters ONLINE, 'n-4' still OFFLINE",
      clustersBack.map(c => `${c.name}:${c.status}`),
    );
    checks.equal(back.massOutage.active, false, 'the guard is lifted');
    const deployments = await fleet.stores.deployments.listDeployments();
    const degraded = deployments.filter(d => d.status === 'DEGRADED');
    checks.ok(
      degraded.length === 2 &&
        degraded.every(
          d => d.cluster === 'n-4' && d.statusReason === 'CLUSTER_OFFLINE',
        ),
      "only n-4's 2 deployments are DEGRADED (CLUSTER_OFFLINE), the held cascade applied",
      degraded.map(d => `${d.cluster}:${d.statusReason}`),
    );
    checks.equal(
      deployments.filter(d => d.status === 'DEPLOYED').length,
      10,
      'the other 10 deployments stayed DEPLOYED',
    );
    checks.ok(
      clustersBack.every(c => !c.cascadeHeldAt),
      'no held cascade left (applied for n-4, dropped for the others)',
    );

    sim.setFault('n-4', { mode: 'ok' });
    const recovered = await fleet.worker.runCycle();
    checks.ok(
      recovered.restoredDeployments === 2 && (await degradedCount()) === 0,
      "'n-4' back: its 2 deployments restored; all 12 DEPLOYED",
      recovered.restoredDeployments,
    );
  },
};
