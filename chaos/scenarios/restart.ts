/*
 * Restart mid-outage: the backend process is killed (SIGKILL) while a cluster is OFFLINE with
 * degraded deployments; a new process starts on the same database; the cluster recovers → every
 * deployment the outage degraded is restored, and only those.
 */
import path from 'node:path';
import { seedDeployments, startSimulator } from '@cnp/fleet-harness';
import { CHAOS_READY_DELAY_MS, startFleetBackend } from '../lib';
import type { Scenario } from '../lib';

/** fleet.health.minOutage: an outage is confirmed by 2 failures spanning this long. */
const MIN_OUTAGE_MS = 3_000;
/** The bound on a graceful stop, under stop()'s SIGKILL fallback (20 s). */
const GRACEFUL_STOP_MS = 10_000;

export const restartMidOutage: Scenario = {
  id: 'restart',
  title: 'Restart mid-outage',
  tried:
    "'west' OFFLINE with 5 deployments degraded (plus 1 DEGRADED for another reason, 1 FAILED) and 'south' one failure into its grace period; backend SIGKILLed; a new backend process on the same PostgreSQL; 'west' recovers",
  timeoutMs: 240_000,
  async run({ checks, db, tmp, log }) {
    const sim = await startSimulator({
      readyDelayMs: CHAOS_READY_DELAY_MS,
      clusters: ['east', 'west', 'north', 'south'],
    });
    const knex = db.knex();
    const fleetConfig = {
      health: {
        probeTimeout: { seconds: 1 },
        failureThreshold: 2,
        minOutage: { milliseconds: MIN_OUTAGE_MS },
      },
    };
    /** Waits until an outage whose first failure was in `cycle` has lasted minOutage. */
    const outageLasted = async (cycle: { startedAt: string }) => {
      const wait = Date.parse(cycle.startedAt) + MIN_OUTAGE_MS - Date.now();
      if (wait > 0) await new Promise(r => setTimeout(r, wait));
    };
    const logFile = path.join(tmp, 'backend.log');

    const first = await startFleetBackend({
      db,
      kubeconfigDir: sim.kubeconfigDir,
      fleet: fleetConfig,
      logFile,
    });
    log(`backend #1 pid ${first.backend.pid} on ${first.backend.base}`);
    const cycle0 = await first.call('POST', '/health/run');
    checks.ok(
      cycle0.status === 200 && cycle0.json?.online === 4,
      'backend #1: all 4 clusters ONLINE',
      cycle0.json,
    );

    await seedDeployments(knex, ['west'], 5, { appPrefix: 'west-app' });
    await seedDeployments(knex, ['west'], 1, {
      appPrefix: 'west-unhealthy',
      status: 'DEGRADED',
      statusReason: 'WORKLOAD_UNHEALTHY',
    });
    await seedDeployments(knex, ['west'], 1, {
      appPrefix: 'west-failed',
      status: 'FAILED',
      statusReason: 'APPLY_FAILED',
    });
    await seedDeployments(knex, ['south'], 2, { appPrefix: 'south-app' });
    await seedDeployments(knex, ['east'], 3, { appPrefix: 'east-app' });

    sim.setFault('west', { mode: 'down' });
    const westFirstFailure = await first.call('POST', '/health/run');
    await first.call('POST', '/health/run');
    const westInBlip = await first.call('GET', '/clusters/west');
    checks.ok(
      westInBlip.json?.status === 'ONLINE' &&
        westInBlip.json?.consecutiveFailures === 2,
      `'west' 2/2 failures within minOutage (${MIN_OUTAGE_MS} ms): still ONLINE`,
      westInBlip.json,
    );
    await outageLasted(westFirstFailure.json);
    await first.call('POST', '/health/run');
    const westBefore = await first.call('GET', '/clusters/west');
    checks.equal(
      westBefore.json?.status,
      'OFFLINE',
      "before the kill: 'west' OFFLINE",
    );
    const degradedBefore = (
      await first.call('GET', '/deployments?cluster=west')
    ).json.items.filter(
      (d: any) =>
        d.status === 'DEGRADED' && d.statusReason === 'CLUSTER_OFFLINE',
    );
    checks.equal(
      degradedBefore.length,
      5,
      "before the kill: 5 deployments on 'west' DEGRADED (CLUSTER_OFFLINE)",
    );

    sim.setFault('south', { mode: 'down' });
    const southFirstFailure = await first.call('POST', '/health/run');
    const southBefore = (await first.call('GET', '/clusters/south')).json;
    checks.ok(
      southBefore?.status === 'ONLINE' &&
        southBefore?.consecutiveFailures === 1,
      "before the kill: 'south' ONLINE with 1 consecutive failure (grace period)",
      southBefore,
    );

    const killed = await first.backend.kill();
    /** Whether a process of that pid still exists (signal 0 only asks). */
    const processExists = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch (error) {
        return (error as NodeJS.ErrnoException).code !== 'ESRCH';
      }
    };
    checks.ok(
      killed.signal === 'SIGKILL' &&
        killed.code === null &&
        first.backend.exited() &&
        !processExists(first.backend.pid),
      'backend #1 killed with SIGKILL: it ended by that signal, no exit code of its own, and its process is gone',
      { ...killed, exists: processExists(first.backend.pid) },
    );

    const second = await startFleetBackend({
      db,
      kubeconfigDir: sim.kubeconfigDir,
      fleet: fleetConfig,
      logFile,
    });
    log(`backend #2 pid ${second.backend.pid} on ${second.backend.base}`);
    // (The Backstage scheduler keeps a global task's next run in the database: a restarted backend
    // does not run a cycle at startup when the stored next run is still ahead. So the first cycle
    // after the restart is the one asked for here.)
    const westAfterRestart = (await second.call('GET', '/clusters/west')).json;
    checks.equal(
      westAfterRestart?.status,
      'OFFLINE',
      "after the restart: 'west' still OFFLINE, not reset to UNKNOWN",
    );
    const southAfterRestart = (await second.call('GET', '/clusters/south'))
      .json;
    checks.ok(
      southAfterRestart?.status === 'ONLINE' &&
        southAfterRestart?.consecutiveFailures === 1,
      "after the restart: 'south' still has its 1 consecutive failure (stored, not in memory)",
      southAfterRestart,
    );
    const southRow = await knex('fleet_clusters')
      .where({ name: 'south' })
      .first();
    checks.equal(
      southRow?.first_failure_at &&
        new Date(southRow.first_failure_at).toISOString(),
      southFirstFailure.json?.startedAt,
      "after the restart: 'south' keeps the time of its first failure (stored, not in memory)",
    );
    await outageLasted(southFirstFailure.json);
    const firstCycle = await second.call('POST', '/health/run');
    log(
      `first cycle after the restart: ${JSON.stringify(
        firstCycle.json?.transitions,
      )}`,
    );
    const southNow = (await second.call('GET', '/clusters/south')).json;
    checks.ok(
      southNow?.status === 'OFFLINE' && southNow?.consecutiveFailures === 2,
      "the first cycle after the restart, minOutage after the first failure, takes 'south' OFFLINE (2/2): the grace period went on across the restart",
      southNow,
    );
    const southDeployments = (
      await second.call('GET', '/deployments?cluster=south')
    ).json.items;
    checks.ok(
      southDeployments.length === 2 &&
        southDeployments.every((d: any) => d.status === 'DEGRADED'),
      "'south' ONLINE→OFFLINE after the restart cascaded to its 2 deployments",
      southDeployments.map((d: any) => d.status),
    );

    sim.setFault('west', { mode: 'ok' });
    const recovery = await second.call('POST', '/health/run');
    checks.ok(
      recovery.status === 200,
      'POST /health/run on backend #2: 200',
      recovery.status,
    );
    const westAfter = (await second.call('GET', '/clusters/west')).json;
    checks.equal(westAfter?.status, 'ONLINE', "'west' ONLINE again");
    const westDeployments = (
      await second.call('GET', '/deployments?cluster=west')
    ).json.items as any[];
    const restored = westDeployments.filter(d =>
      d.entityRef.includes('/west-app-'),
    );
    checks.ok(
      restored.length === 5 &&
        restored.every(d => d.status === 'DEPLOYED' && !d.statusReason),
      'all 5 deployments the outage degraded are DEPLOYED again',
      restored.map(d => d.status),
    );
    const unhealthy = westDeployments.find(d =>
      d.entityRef.includes('/west-unhealthy-'),
    );
    checks.ok(
      unhealthy?.status === 'DEGRADED' &&
        unhealthy?.statusReason === 'WORKLOAD_UNHEALTHY',
      'the deployment DEGRADED for another reason (WORKLOAD_UNHEALTHY) kept its status',
      unhealthy,
    );
    const failed = westDeployments.find(d =>
      d.entityRef.includes('/west-failed-'),
    );
    checks.equal(
      failed?.status,
      'FAILED',
      'the FAILED deployment stayed FAILED',
    );
    const east = (await second.call('GET', '/deployments?cluster=east')).json
      .items as any[];
    checks.ok(
      east.length === 3 && east.every(d => d.status === 'DEPLOYED'),
      "'east' deployments untouched (3 DEPLOYED)",
    );
    const history = await second.call(
      'GET',
      `/deployments/${restored[0]?.id}/events`,
    );
    const steps = (history.json?.items ?? [])
      .map((e: any) => `${e.from ?? ''}->${e.to}`)
      .reverse();
    checks.ok(
      steps.join(' ').includes('DEPLOYED->DEGRADED') &&
        steps.join(' ').includes('DEGRADED->DEPLOYED'),
      "a restored deployment's history shows DEPLOYED→DEGRADED (backend #1) then DEGRADED→DEPLOYED (backend #2)",
      steps,
    );
    // Graceful: still running when asked, then SIGTERM → Backstage stops the backend and exits 0
    // by itself, well before stop()'s SIGKILL fallback (20 s).
    const runningBeforeStop = !second.backend.exited();
    const stopped = await second.backend.stop();
    log(`backend #2 stop: ${JSON.stringify(stopped)}`);
    checks.ok(
      runningBeforeStop &&
        !stopped.forced &&
        stopped.code === 0 &&
        stopped.signal === null &&
        stopped.ms < GRACEFUL_STOP_MS &&
        second.backend.exited(),
      `backend #2 stopped gracefully (SIGTERM: exit code 0 within ${
        GRACEFUL_STOP_MS / 1000
      } s, not SIGKILLed)`,
      { runningBeforeStop, ...stopped },
    );
  },
};
