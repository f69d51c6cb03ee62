/*
 * Drift detection with live state from watches against today's polling reconcile, in the same
 * run: the same fleet (PostgreSQL, simulated clusters in a process of their own, every
 * deployment's objects really applied) served by a backend process with
 * `fleet.reconcile.watch: true`, then by one with `false` (every run reads every deployment).
 *
 * - latency: an image changed through the simulator's drift hook (behind Fleet's back) until the
 *   backend records the deployment OUT_OF_SYNC (its event's time; lib/driftParts.ts); drifts 1 s
 *   apart, the API polled every 200 ms to know when to read it.
 * - steady CPU: the backend's CPU (from /proc) over a window with no change, as % of one core,
 *   with the health cycles and reconcile runs that fell inside it (lib/backendActivity.ts).
 * - 100 changes: the backend's CPU from 100 drifts at once until all 100 are OUT_OF_SYNC.
 *
 * With `baseline` (another installed checkout), each mode also runs that checkout's backend on
 * the same fleet, before this one's: today's code against the change, under the same load. The
 * objects a run drifted are applied again as seeded before the next run, so every run starts
 * from the same fleet. With `profileDir`, a second quiet window as long as the first is taken
 * with a V8 CPU profile of the backend (written there as .cpuprofile), apart from the measured
 * one so that the profiler's own cost is not in the figure.
 *
 * The health cycle runs on its schedule (`healthIntervalMs`, 60 s by default) as for a user; at
 * 1 hour (one cycle at startup), the CPU is the reconcile's and the watches' alone.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import pLimit from 'p-limit';
import {
  createFleet,
  createTempDatabase,
  loadAverage,
  ms,
  percentile,
  processCpuSeconds,
  threadCpuByGroup,
  threadCpuDelta,
  threadCpuSeconds,
  startBackendProcess,
  startSimProcess,
  type SimProcess,
} from '@cnp/fleet-harness';
import { revisionApplier } from './lib/seedDeployments';
import { driftOf, picker, timeDrifts, type Seeded } from './lib/driftParts';
import { waitFor } from './lib/waitFor';
import {
  activityLine,
  watchBackendActivity,
  type Activity,
} from './lib/backendActivity';

export interface DriftModeResult {
  mode: 'watch' | 'poll';
  /** Whose backend ran: this checkout's, or the baseline checkout's. */
  code: 'this' | 'baseline';
  /** From the backend's start until every deployment was compared once. */
  firstRunMs: number;
  /** From the change to the backend's OUT_OF_SYNC event, ms. */
  latencies: number[];
  p50: number;
  p95: number;
  max: number;
  /** From the change until the 200 ms poll of the API saw OUT_OF_SYNC, ms. */
  polledLatencies: number[];
  /** Drifts whose OUT_OF_SYNC event was not found (no backend time). */
  noEvent: number;
  healthIntervalMs: number;
  /** CPU over the quiet window, % of one core. */
  steadyCpuPct: number;
  steadyWindowS: number;
  /** Health cycles and reconcile runs that overlapped the window. */
  steadyActivity: Activity;
  /** Seconds with no change before that window. */
  settleS: number;
  /** The window's CPU seconds by thread ('main', 'other threads', …). */
  steadyThreads: Record<string, number>;
  /** Backend CPU seconds from 100 drifts until all were OUT_OF_SYNC. */
  hundredCpuS: number;
  hundredMs: number;
  openWatches: number;
}

export interface DriftSizeResult {
  clusters: number;
  deployments: number;
  seedMs: number;
  modes: DriftModeResult[];
}

const OLD = new Date('2020-01-01T00:00:00Z');

export async function benchDrift(options: {
  clusters: number;
  deploymentsPerCluster: number;
  latencySamples: number;
  steadySeconds: number;
  /**
   * Seconds with no change before the steady window: the changes just measured leave work
   * behind them for a while (V8's memory reducer runs full collections once allocation slows).
   */
  settleSeconds?: number;
  modes: Array<'watch' | 'poll'>;
  /** Another installed checkout whose backend also runs each mode, on the same fleet. */
  baseline?: string;
  /** A folder for a CPU profile of a second quiet window of each run. */
  profileDir?: string;
  /** First port of the range this benchmark may use (simulator, then backends). */
  basePort: number;
  /** fleet.health.interval of the backends. */
  healthIntervalMs: number;
  log: (line: string) => void;
}): Promise<DriftSizeResult> {
  const { log } = options;
  const seedStarted = Date.now();
  const db = await createTempDatabase('fleet_bench_drift');
  const sim: SimProcess = await startSimProcess({
    clusters: options.clusters,
    port: options.basePort,
    readyDelayMs: 50,
    // One process serves every cluster's API server here: its controllers, run every second per
    // cluster with open watches by default, would take a core at 1,000 clusters by themselves.
    // Spec changes (what drift is) are streamed at once either way.
    watch: { controllerTickMs: 30_000 },
  });
  const knex = db.knex();
  const pre = await createFleet({
    knex,
    kubeconfigDir: sim.kubeconfigDir,
    health: { probeTimeoutMs: 5000, concurrency: 64 },
  });
  const cycle = await pre.worker.runCycle();
  log(`  registered ${cycle.probed} clusters (${cycle.online} ONLINE)`);

  // One application per deployment slot: deploymentsPerCluster applications, each on every
  // cluster, 1 replica (no PodDisruptionBudget), its current revision the one applied.
  const now = new Date();
  const apps = Array.from(
    { length: options.deploymentsPerCluster },
    (_, i) => ({
      id: randomUUID(),
      entity_ref: `component:default/drift-${i + 1}`,
      name: `drift-${i + 1}`,
      origin: 'imported',
      spec: JSON.stringify({ image: `registry.local/drift-${i + 1}:1.0.0` }),
      placement: '{}',
      created_at: now,
      updated_at: now,
    }),
  );
  await knex.batchInsert('fleet_applications', apps, 500);
  const seeded: Seeded[] = [];
  const rows = apps.flatMap(app =>
    sim.names.map(cluster => {
      const id = randomUUID();
      seeded.push({ id, cluster, name: app.name });
      return {
        id,
        application_id: app.id,
        cluster,
        status: 'DEPLOYED',
        status_reason: null,
        message: null,
        sync_status: 'SYNCED',
        image: `registry.local/${app.name}:1.0.0`,
        revision: 1,
        last_applied_at: now,
        last_synced_at: now,
        created_at: now,
        updated_at: now,
      };
    }),
  );
  await knex.batchInsert('fleet_deployments', rows, 1000);
  await knex.batchInsert(
    'fleet_revisions',
    rows.map(d => ({
      deployment_id: d.id,
      application_id: d.application_id,
      cluster: d.cluster,
      revision: 1,
      image: d.image,
      replicas: 1,
      cause: 'deploy',
      created_by: 'bench',
      created_at: now,
      outcome: 'DEPLOYED',
      outcome_at: now,
    })),
    2000,
  );
  await knex.raw('ANALYZE');

  // Every deployment's objects, built and applied as Fleet's deploy does.
  const { revisions, clusters, apply } = await revisionApplier(pre);
  const clusterByName = new Map(clusters.map(c => [c.name, c]));
  const limit = pLimit(32);
  /** Applies the deployments' objects as Fleet's deploy does. */
  const applyAll = async (of: typeof revisions, what: string) => {
    let failed = 0;
    await Promise.all(
      of.map(r =>
        limit(async () => {
          const result = await apply(r, clusterByName.get(r.cluster)!);
          if (result.kind !== 'applied') failed += 1;
        }),
      ),
    );
    if (failed) throw new Error(`${failed} applies failed ${what}`);
  };
  await applyAll(revisions, 'while seeding');
  const revisionByDeployment = new Map(revisions.map(r => [r.deploymentId, r]));
  const seedMs = Date.now() - seedStarted;
  log(
    `  seeded ${clusters.length} clusters × ${apps.length} applications = ${
      seeded.length
    } deployments, objects applied, in ${ms(seedMs)}`,
  );

  const pick = picker(seeded);
  const token = randomBytes(24).toString('hex');
  const results: DriftModeResult[] = [];
  let port = options.basePort + 1;
  const runs = options.modes.flatMap(mode =>
    options.baseline
      ? [
          { mode, code: 'baseline' as const },
          { mode, code: 'this' as const },
        ]
      : [{ mode, code: 'this' as const }],
  );
  /** Deployments the last run drifted: applied again as seeded before the next run. */
  let drifted: Seeded[] = [];
  try {
    for (const { mode, code } of runs) {
      log(
        `  -- ${mode === 'watch' ? 'watches' : 'polling (today)'}${
          options.baseline
            ? ` (${code === 'this' ? 'this code' : 'baseline'})`
            : ''
        }`,
      );
      if (drifted.length) {
        await applyAll(
          drifted.map(d => revisionByDeployment.get(d.id)!),
          "while undoing the last run's drift",
        );
        drifted = [];
      }
      // Every deployment SYNCED with last_synced_at in 2020: the first run writes it anew.
      await knex('fleet_deployments').update({
        last_synced_at: OLD,
        sync_status: 'SYNCED',
        sync_differences: null,
      });
      const started = new Date();
      const backend = await startBackendProcess(
        {
          FLEET_BENCH_DB: db.connection,
          FLEET_BENCH_KUBECONFIG_DIR: sim.kubeconfigDir,
          FLEET_BENCH_TOKEN: token,
          FLEET_BENCH_PORT: String(port++),
          FLEET_BENCH_HEALTH: JSON.stringify({
            interval: { milliseconds: options.healthIntervalMs },
            probeTimeout: { seconds: 5 },
            concurrency: 64,
          }),
          FLEET_BENCH_FLEET: JSON.stringify({
            reconcile: { watch: mode === 'watch' },
          }),
          LOG_LEVEL: process.env.FLEET_BENCH_VERBOSE ? 'info' : 'error',
        },
        code === 'baseline' ? { checkout: options.baseline } : {},
      );
      const activity = watchBackendActivity(knex);
      try {
        const base = `http://127.0.0.1:${backend.port}/api/fleet`;
        // The first run compares every deployment (and, with watches, starts them).
        await waitFor(
          'the first reconcile run',
          async () => {
            const row = await knex('fleet_deployments')
              .where('last_synced_at', '<=', OLD)
              .where('sync_status', 'SYNCED')
              .count({ n: '*' })
              .first();
            return Number(row?.n) === 0;
          },
          900_000,
          1000,
        );
        const firstRunMs = Date.now() - started.getTime();
        let openWatches = 0;
        if (mode === 'watch') {
          openWatches = await waitFor(
            'the watches',
            async () => {
              const n = await sim.openWatches();
              return n >= clusters.length * 5 && n;
            },
            300_000,
            1000,
          );
        }
        log(
          `    first run done ${ms(firstRunMs)} after start${
            mode === 'watch' ? `; ${openWatches} watches open` : ''
          }`,
        );
        // Let the startup work settle.
        await new Promise(r => setTimeout(r, 5_000));

        // Latency, change by change.
        const sample = pick(options.latencySamples);
        drifted.push(...sample);
        const latencyFrom = Date.now();
        const timed = await timeDrifts({ sim, base, token, sample, tag: mode });
        const latencies = timed.backendMs;
        const p50 = percentile(latencies, 50);
        const p95 = percentile(latencies, 95);
        const max = Math.max(...latencies);
        const polled = timed.polledMs;
        log(
          `    drift → OUT_OF_SYNC, the backend's event time minus the change's (${
            latencies.length
          } changes${
            timed.noEvent ? `, ${timed.noEvent} with no event` : ''
          }): p50 ${ms(p50)}, p95 ${ms(p95)}, max ${ms(
            max,
          )}; seen by the 200 ms poll: p50 ${ms(
            percentile(polled, 50),
          )}, p95 ${ms(percentile(polled, 95))}; during it ${activityLine(
            await activity.since(latencyFrom),
          )}`,
        );

        // Steady state: no change, once the changes above have settled.
        const settle = options.settleSeconds ?? 60;
        await new Promise(r => setTimeout(r, settle * 1000));
        const threads0 = await threadCpuSeconds(backend.pid);
        const cpu0 = await processCpuSeconds(backend.pid);
        const t0 = Date.now();
        await new Promise(r => setTimeout(r, options.steadySeconds * 1000));
        const cpu1 = await processCpuSeconds(backend.pid);
        const threads1 = await threadCpuSeconds(backend.pid);
        const steadyWindowS = (Date.now() - t0) / 1000;
        const steadyCpuPct = ((cpu1 - cpu0) / steadyWindowS) * 100;
        const steadyActivity = await activity.since(t0);
        // The machine's load at the window's end: the backend's CPU seconds are less sensitive to
        // other work than wall time, not immune (GC threads, caches).
        log(
          `    steady state, no change, ${steadyWindowS.toFixed(
            0,
          )} s (after ${settle} s with none): backend CPU ${steadyCpuPct.toFixed(
            1,
          )} % of one core (load average ${loadAverage()}); health cycle every ${
            options.healthIntervalMs / 1000
          } s; in the window ${activityLine(steadyActivity)}`,
        );
        log(`      by thread: ${threadCpuDelta(threads0, threads1)}`);

        // 100 changes at once.
        if (options.profileDir) {
          // A second quiet window, profiled (the profiler costs CPU of its own).
          const file = path.join(
            options.profileDir,
            `drift-${seeded.length}-${mode}-${code}.cpuprofile`,
          );
          const p0 = await processCpuSeconds(backend.pid);
          const pt = Date.now();
          if (await backend.profileStart()) {
            await new Promise(r => setTimeout(r, options.steadySeconds * 1000));
            const profiled = await backend.profileStop(file);
            const pct =
              (((await processCpuSeconds(backend.pid)) - p0) /
                ((Date.now() - pt) / 1000)) *
              100;
            log(
              `    profiled quiet window: backend CPU ${pct.toFixed(
                1,
              )} % of one core (load average ${loadAverage()})${
                profiled ? `, profile in ${file}` : ', no profile written'
              }`,
            );
          } else {
            log('    no CPU profile: this backend cannot take one');
          }
        }

        const hundred = pick(100);
        drifted.push(...hundred);
        const ids = hundred.map(d => d.id);
        const c0 = await processCpuSeconds(backend.pid);
        const h0 = Date.now();
        await sim.drift(hundred.map((d, i) => driftOf(d, `${mode}-h${i}`)));
        await waitFor(
          'the 100 changes OUT_OF_SYNC',
          async () => {
            const row = await knex('fleet_deployments')
              .whereIn('id', ids)
              .where('sync_status', 'OUT_OF_SYNC')
              .count({ n: '*' })
              .first();
            return Number(row?.n) === ids.length;
          },
          600_000,
          100,
        );
        const hundredMs = Date.now() - h0;
        const hundredCpuS = (await processCpuSeconds(backend.pid)) - c0;
        log(
          `    100 changes at once: all OUT_OF_SYNC in ${ms(
            hundredMs,
          )}, backend CPU ${hundredCpuS.toFixed(2)} s`,
        );
        results.push({
          mode,
          code,
          firstRunMs,
          latencies,
          p50,
          p95,
          max,
          polledLatencies: polled,
          noEvent: timed.noEvent,
          healthIntervalMs: options.healthIntervalMs,
          steadyCpuPct,
          steadyActivity,
          steadyWindowS,
          settleS: settle,
          steadyThreads: Object.fromEntries(
            [...threadCpuByGroup(threads0, threads1)].map(([name, s]) => [
              name,
              Math.round(s * 100) / 100,
            ]),
          ),
          hundredCpuS,
          hundredMs,
          openWatches,
        });
      } finally {
        await activity.stop();
        await backend.stop();
      }
    }
  } finally {
    await sim.stop();
    await db.drop();
  }
  return {
    clusters: options.clusters,
    deployments: seeded.length,
    seedMs,
    modes: results,
  };
}
