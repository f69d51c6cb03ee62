/*
 * GET /deployments?entityRef= (what the entity card calls) on PostgreSQL at a fleet size (1,000
 * clusters × 10,000 deployments by default; 10,000 × 100,000 for the scale issue), under 20
 * concurrent clients, over real HTTP on loopback; and the peak RSS of the backend process that
 * serves it (VmHWM from /proc).
 *
 * By default the backend runs as a user runs it: watches on (unless `reconcile.watch` says
 * otherwise), every deployment's objects applied on the simulated clusters, the health cycle on
 * its schedule (`healthIntervalMs`) and the reconcile on the backend's (60 s) during the measure,
 * which goes on, run after run, until `cycles` health cycles ran during it; the cycles and
 * reconcile runs that did are counted (lib/backendActivity.ts) and printed with the figures.
 * With `quiet`, today's quiet backend: both every hour (one of each after startup), restarted
 * when the first reconcile run outlasts the wait, objects applied up to 20,000 deployments.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { ConfigReader } from '@backstage/config';
import {
  createTempDatabase,
  loadAverage,
  machineCpu,
  median,
  ms,
  percentile,
  processCpuSeconds,
  processMemory,
  startBackendProcess,
  threadCpuDelta,
  threadCpuSeconds,
  startSimProcess,
} from '@cnp/fleet-harness';
import {
  cardBytesLines,
  measureCardLoadBytes,
  type CardBytesResult,
} from './lib/cardLoadBytes';
import { seedFleetDeployments } from './lib/seedDeployments';
import { waitFor, waitForStartupCycle } from './lib/waitFor';
import {
  activityLine,
  conditionsLine,
  watchBackendActivity,
  type Activity,
  type MeasureConditions,
} from './lib/backendActivity';
import { browserGetter, postLong, withHeap } from './lib/httpLoad';
import { readFleetConfig } from './lib/releaseParts';

/**
 * The load generator of a run: `http` (node:http keep-alive, gzip like a browser, no HTTP cache:
 * every answer is a full 200), `fetch` (Node's fetch, heavier on the shared CPU), or `browser`
 * (`http` plus a browser's HTTP cache per client: If-None-Match, 304 when nothing changed).
 */
export type LoadClient = 'http' | 'fetch' | 'browser';

export interface LoadRun {
  label: string;
  client?: LoadClient;
  /** `browser` runs: answers that were 304 Not Modified. */
  revalidated?: number;
  requests: number;
  errors: number;
  durationMs: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  load: string;
  /** Backend CPU per request, ms (from /proc). */
  backendCpuMsPerRequest: number;
  /** Load generator (this process) CPU per request, ms. */
  clientCpuMsPerRequest: number;
  machineBusyPct: number;
  /** What the backend ran in the background during the run. */
  activity?: Activity;
}

export interface LatencyResult {
  clusters: number;
  deployments: number;
  applications: number;
  clients: number;
  requestsPerRun: number;
  backendStartMs: number;
  startupCycleMs: number;
  runs: LoadRun[];
  duringCycle?: LoadRun;
  duringReconcile?: LoadRun;
  reconcileMs: number;
  /**
   * Whether the first reconcile run ended within the wait; when not, how many deployments it had
   * compared (synced since the backend started, or no longer SYNCED) and the backend was
   * restarted.
   */
  reconcileEnded: boolean;
  reconcileCompared?: number;
  /** The same load with Node's fetch as the load generator. */
  fetchClientRun: LoadRun;
  /** Browsers that already show every card, revalidating (304 when unchanged). */
  browserRun: LoadRun;
  median: { p50: number; p95: number; p99: number };
  /** Every request of the measured runs together. */
  overall: { requests: number; p50: number; p95: number; p99: number };
  /** The worst measured run's p95. */
  worstP95: number;
  conditions: MeasureConditions;
  other: Record<string, number>;
  memory: Array<{
    phase: string;
    rssMiB: number;
    peakMiB: number;
    heapAfterGcMiB: number;
  }>;
  peakMiB: number;
  /** RSS of the same backend process without the Fleet plugin. */
  controlMiB: number;
  /** The bytes one load of a card downloads, with the card's old request set and its new one. */
  cardBytes: CardBytesResult;
}

/** The most deployments whose objects the seed applies to the one simulator process. */
const MAX_APPLIED_DEPLOYMENTS = 20_000;

/** The most cards a simulated browser shows and keeps in its HTTP cache. */
const BROWSER_CARDS = 250;

export async function benchLatency(options: {
  clusters: number;
  applications: number;
  deploymentsPerApplication: number;
  clients: number;
  requestsPerRun: number;
  runs: number;
  maxRunMs: number;
  downFraction: number;
  concurrency: number;
  /**
   * How long to wait for the first reconcile run to end before the measured runs. When it has
   * not ended by then, the backend is restarted (that run stays claimed in the scheduler's table
   * until its timeout, an hour), so that the measured runs, as at sizes where it ends, see no
   * reconcile run under way. Default: a budget that grows with the deployments.
   */
  reconcileWaitMs?: number;
  /** `fleet.reconcile` settings beyond the benchmark's interval (e.g. `{ watch: false }`). */
  reconcile?: Record<string, unknown>;
  /** The simulator listens here and the backends (one after the other) on the next port. */
  basePort?: number;
  /** Also profile the backend (V8 CPU profile) over one more measured run, written here. */
  profileDir?: string;
  /** Today's quiet backend (see the top of this file); by default, a running one. */
  quiet?: boolean;
  /** A running backend's fleet.health.interval. */
  healthIntervalMs: number;
  /** A running backend: the measured runs go on until this many health cycles ended in them. */
  cycles: number;
  /** The simulator's V8 heap (MiB) when it holds the objects of more than 20,000 deployments. */
  simHeapMiB?: number;
  log: (line: string) => void;
}): Promise<LatencyResult> {
  const { log } = options;
  // Waits that grow with the fleet: a health cycle at concurrency c takes about
  // ⌈down / c⌉ × the 2 s timeout plus the answering clusters' probes; the reconcile run reads
  // every deployment. At least the budgets that served 1,000 × 10,000.
  const deployments = options.applications * options.deploymentsPerApplication;
  const cycleBudgetMs = Math.max(300_000, options.clusters * 60);
  const reconcileBudgetMs = Math.max(900_000, deployments * 30);
  const quiet = options.quiet ?? false;
  // One simulator process holds every cluster's objects and their pods: at 10,000 clusters ×
  // 90,000 applied deployments it ran out of its 4 GiB heap. A quiet backend beyond 20,000
  // deployments has the rows seeded alone (the card reads rows, not objects); a running one has
  // every deployment's objects, in a simulator with a larger heap.
  const applyObjects = !quiet || deployments <= MAX_APPLIED_DEPLOYMENTS;
  const db = await createTempDatabase('fleet_bench');
  const sim = await withHeap(
    deployments > MAX_APPLIED_DEPLOYMENTS && applyObjects
      ? options.simHeapMiB
      : undefined,
    () =>
      startSimProcess({
        clusters: options.clusters,
        port: options.basePort,
        // The simulator's controllers run every second on each cluster with open watches: at
        // 1,000 watched clusters, over the seeded objects, they would take a share of the 2
        // cores the card is measured on (an API server's work, done elsewhere in a real fleet).
        // The seeded workloads are ready before the backend starts; spec changes are streamed
        // at once anyway.
        watch: { controllerTickMs: 30_000 },
      }),
  );
  const token = randomBytes(24).toString('hex');
  const step = Math.round(1 / options.downFraction);
  const downNames = sim.names.filter((_, i) => (i + 1) % step === 0);
  await sim.setFault(downNames, { mode: 'timeout' });

  const clusterNames = sim.names;
  const knex = db.knex();
  const seeded = await seedFleetDeployments({
    knex,
    kubeconfigDir: sim.kubeconfigDir,
    clusterNames,
    applications: options.applications,
    deploymentsPerApplication: options.deploymentsPerApplication,
    applyObjects,
    log,
  });
  const reconcileIntervalMs = quiet
    ? 3_600_000
    : readFleetConfig(new ConfigReader({}), {}).reconcile.intervalMs;
  const healthIntervalMs = quiet ? 3_600_000 : options.healthIntervalMs;

  const env = {
    FLEET_BENCH_DB: db.connection,
    FLEET_BENCH_KUBECONFIG_DIR: sim.kubeconfigDir,
    FLEET_BENCH_TOKEN: token,
    // Running: the health cycle on its schedule, an outage confirmed after one interval (the
    // backend's default); quiet: the harness's (every hour, one cycle at startup).
    FLEET_BENCH_HEALTH: JSON.stringify({
      probeTimeout: { seconds: 2 },
      concurrency: options.concurrency,
      ...(quiet
        ? {}
        : {
            interval: { milliseconds: healthIntervalMs },
            minOutage: { milliseconds: healthIntervalMs },
          }),
    }),
    // Quiet: the reconcile task runs once, 15 s after startup, then not again during the
    // measurement; running: on the backend's default schedule.
    FLEET_BENCH_FLEET: JSON.stringify({
      reconcile: {
        ...options.reconcile,
        ...(quiet ? { interval: { hours: 1 } } : {}),
      },
    }),
    LOG_LEVEL: process.env.FLEET_BENCH_VERBOSE ? 'info' : 'error',
    ...(options.basePort
      ? { FLEET_BENCH_PORT: String(options.basePort + 1) }
      : {}),
  };

  // Control: the same backend process without the Fleet plugin, to tell Fleet's share apart.
  const control = await startBackendProcess({
    ...env,
    FLEET_BENCH_NO_FLEET: '1',
  });
  await new Promise(r => setTimeout(r, 2_000));
  const controlMemory = await processMemory(control.pid);
  log(
    `  control: the same backend without Fleet: RSS ${controlMemory.rssMiB.toFixed(
      0,
    )} MiB, peak ${controlMemory.peakMiB.toFixed(0)} MiB`,
  );
  await control.stop();

  const backendStartedAt = Date.now();
  let backend = await startBackendProcess(env);
  const activity = watchBackendActivity(knex);
  const ready = backend;
  const memory: LatencyResult['memory'] = [];
  const sample = async (phase: string) => {
    const m = await processMemory(backend.pid);
    const live = await backend.liveMemory();
    const heapAfterGcMiB = live ? live.heapUsed / 2 ** 20 : NaN;
    memory.push({ phase, ...m, heapAfterGcMiB });
    log(
      `    backend memory after ${phase}: RSS ${m.rssMiB.toFixed(
        0,
      )} MiB, peak ${m.peakMiB.toFixed(
        0,
      )} MiB; JS heap in use after a full GC ${heapAfterGcMiB.toFixed(0)} MiB`,
    );
  };
  try {
    let base = `http://127.0.0.1:${ready.port}/api/fleet`;
    const headers = { Authorization: `Bearer ${token}` };
    const get = async (pathAndQuery: string) => {
      const res = await fetch(`${base}${pathAndQuery}`, { headers });
      const body = await res.text();
      return { status: res.status, body };
    };
    log(`  backend started in ${ms(ready.startMs)} on 127.0.0.1:${ready.port}`);
    await sample('startup');

    // The scheduler runs the first health cycle at startup; wait for it (its summary is stored).
    const startupCycle = await waitForStartupCycle(
      knex,
      backendStartedAt,
      cycleBudgetMs,
    );
    log(
      `  startup health cycle over ${startupCycle.probed} clusters: ${ms(
        startupCycle.durationMs,
      )} (${startupCycle.online} ONLINE, ${startupCycle.unknown} UNKNOWN, ${
        startupCycle.offline
      } OFFLINE)`,
    );
    await sample('startup health cycle');

    const refOf = (i: number) => `component:default/service-${i + 1}`;
    const one = await get(
      `/deployments?entityRef=${encodeURIComponent(refOf(0))}`,
    );
    const items = JSON.parse(one.body).items;
    if (
      one.status !== 200 ||
      items.length !== options.deploymentsPerApplication
    ) {
      throw new Error(
        `GET /deployments?entityRef= answered ${one.status} with ${items?.length} items`,
      );
    }

    const cardBytes = await measureCardLoadBytes({
      base,
      token,
      entityRef: refOf(0),
    });
    for (const line of cardBytesLines(cardBytes)) log(line);

    // The lighter load generator: node:http over keep-alive connections, asking for gzip and
    // inflating the answer like a browser does. With `etag`, it revalidates like a browser's HTTP
    // cache (If-None-Match; a 304 has no body and the cached one is used).
    const keepAlive = new http.Agent({
      keepAlive: true,
      maxSockets: options.clients,
    });
    const httpGet = browserGetter(keepAlive, token);
    const browserCaches = Array.from(
      { length: options.clients },
      () => new Map<string, { etag: string; body: unknown }>(),
    );
    // The cards a browser client shows and revalidates: 250 consecutive applications, each
    // client its own slice (all of them when there are fewer), so that filling the caches stays
    // 250 reads per client at any fleet size (every client read every card before: 200,000
    // reads at 10,000 applications).
    const browserCards = Math.min(options.applications, BROWSER_CARDS);
    const browserCardOf = (clientIndex: number, j: number) =>
      (Math.floor((clientIndex * options.applications) / options.clients) + j) %
      options.applications;
    const runLoad = async (
      label: string,
      requests: number,
      client: LoadClient = 'http',
      /** Every latency of the run is also added here. */
      into?: number[],
    ): Promise<LoadRun> => {
      const wallStart = Date.now();
      const latencies: number[] = [];
      let errors = 0;
      let issued = 0;
      let revalidated = 0;
      const backendCpu0 = await processCpuSeconds(backend.pid);
      const clientCpu0 = process.cpuUsage();
      const machine0 = await machineCpu();
      const started = performance.now();
      const deadline = started + options.maxRunMs;
      const clientLoop = async (clientIndex: number) => {
        const cache = browserCaches[clientIndex];
        while (issued < requests && performance.now() < deadline) {
          issued += 1;
          const ref =
            client === 'browser'
              ? refOf(
                  browserCardOf(
                    clientIndex,
                    Math.floor(Math.random() * browserCards),
                  ),
                )
              : refOf(Math.floor(Math.random() * options.applications));
          const t = performance.now();
          try {
            const url = `${base}/deployments?entityRef=${encodeURIComponent(
              ref,
            )}`;
            let status: number;
            let body: any;
            if (client === 'fetch') {
              const res = await fetch(url, { headers });
              status = res.status;
              body = await res.json();
            } else if (client === 'http') {
              const res = await httpGet(url);
              status = res.status;
              body = JSON.parse(res.body);
            } else {
              const cached = cache.get(url);
              const res = await httpGet(url, cached?.etag);
              if (res.status === 304 && cached) {
                revalidated += 1;
                status = 200;
                body = cached.body;
              } else {
                status = res.status;
                body = JSON.parse(res.body);
                if (res.etag) cache.set(url, { etag: res.etag, body });
              }
            }
            latencies.push(performance.now() - t);
            if (
              status !== 200 ||
              body.items?.length !== options.deploymentsPerApplication
            )
              errors += 1;
          } catch {
            errors += 1;
          }
        }
      };
      await Promise.all(
        Array.from({ length: options.clients }, (_, i) => clientLoop(i)),
      );
      const backendCpu = (await processCpuSeconds(backend.pid)) - backendCpu0;
      const clientCpu = process.cpuUsage(clientCpu0);
      const machine1 = await machineCpu();
      for (const l of into ? latencies : []) into!.push(l);
      const during = await activity.since(wallStart);
      const run: LoadRun = {
        label,
        requests: latencies.length,
        errors,
        durationMs: performance.now() - started,
        p50: percentile(latencies, 50),
        p95: percentile(latencies, 95),
        p99: percentile(latencies, 99),
        max: Math.max(...latencies),
        load: loadAverage(),
        backendCpuMsPerRequest:
          (backendCpu * 1000) / Math.max(1, latencies.length),
        clientCpuMsPerRequest:
          (clientCpu.user + clientCpu.system) /
          1000 /
          Math.max(1, latencies.length),
        machineBusyPct:
          (100 * (machine1.busy - machine0.busy)) /
          Math.max(1, machine1.total - machine0.total),
        activity: during,
      };
      log(
        `    ${label}: ${run.requests} requests in ${ms(
          run.durationMs,
        )} (${Math.round(
          (run.requests / run.durationMs) * 1000,
        )}/s), ${errors} errors; p50 ${ms(run.p50)} p95 ${ms(run.p95)} p99 ${ms(
          run.p99,
        )} max ${ms(
          run.max,
        )}; CPU per request: backend ${run.backendCpuMsPerRequest.toFixed(
          2,
        )} ms, load generator ${run.clientCpuMsPerRequest.toFixed(
          2,
        )} ms; machine ${run.machineBusyPct.toFixed(0)} % busy; load ${
          run.load
        }${
          client === 'browser'
            ? `; ${revalidated} answered 304 Not Modified`
            : ''
        }; during it ${activityLine(during)}`,
      );
      return { ...run, client, revalidated };
    };

    // The reconcile task's first run (15 s after startup) reads every deployment's live objects:
    // measure the entity card while it runs, then wait for it to end.
    const reconcileTask = async () =>
      (await knex('backstage_backend_tasks__tasks')
        .where({ id: 'fleet-reconcile' })
        .first()) as
        | {
            current_run_ticket: string | null;
            last_run_ended_at: unknown;
          }
        | undefined;
    // A run of this backend's has ended (the scheduler's time of its end).
    const hasRun = (task: Awaited<ReturnType<typeof reconcileTask>>) =>
      !!task?.last_run_ended_at &&
      new Date(task.last_run_ended_at as string).getTime() >= backendStartedAt;
    const state = await waitFor(
      'the first reconcile run',
      async () => {
        const task = await reconcileTask();
        if (task?.current_run_ticket) return 'running';
        return hasRun(task) ? 'done' : undefined;
      },
      120_000,
    );
    const reconcileStarted = Date.now();
    let duringReconcile: LoadRun | undefined;
    if (state === 'running') {
      duringReconcile = await runLoad(
        `during the reconcile run, ${options.clients} clients`,
        options.requestsPerRun,
      );
      if (hasRun(await reconcileTask())) {
        log(
          '    (the reconcile run ended before that load run did: figure not kept)',
        );
        duringReconcile = undefined;
      }
    } else {
      log(
        '    (the first reconcile run had already ended: no figure during it)',
      );
    }
    const reconcileWaitMs = options.reconcileWaitMs ?? reconcileBudgetMs;
    const reconcileEnded = await waitFor(
      'the first reconcile run to end',
      async () => (hasRun(await reconcileTask()) ? true : undefined),
      reconcileWaitMs,
    ).catch(() => false);
    const reconcileMs = Date.now() - reconcileStarted;
    const syncCounts = Object.fromEntries(
      (
        await knex('fleet_deployments')
          .select('sync_status')
          .count({ n: '*' })
          .groupBy('sync_status')
      ).map((r: any) => [r.sync_status as string, Number(r.n)]),
    );
    // Seeded as synced an hour ago: a deployment the run compared has a newer sync time (its
    // objects, applied by the seed, were found in sync), or is UNKNOWN (its cluster times out).
    const compared = await knex('fleet_deployments')
      .where('last_synced_at', '>=', new Date(backendStartedAt))
      .orWhere('sync_status', '!=', 'SYNCED')
      .count({ n: '*' })
      .first();
    const reconcileCompared = Number(compared?.n ?? 0);
    if (reconcileEnded) {
      log(
        `  the reconcile run over ${
          seeded.deployments
        } deployments took about ${ms(
          reconcileMs,
        )} (sync statuses after: ${JSON.stringify(syncCounts)})`,
      );
    } else {
      log(
        `  the first reconcile run over ${
          seeded.deployments
        } deployments had not ended after ${ms(
          reconcileMs,
        )}: ${reconcileCompared} compared so far (sync statuses: ${JSON.stringify(
          syncCounts,
        )})`,
      );
    }
    await sample(
      reconcileEnded ? 'reconcile run' : 'reconcile run (unfinished)',
    );
    if (!reconcileEnded && !quiet) {
      log(
        '  measured anyway, as a user would read cards: the run under way is counted with the figures',
      );
    } else if (!reconcileEnded) {
      // A quiet backend for the measured runs, as at sizes where the run ends: a new process on
      // the same database. Its scheduler finds the reconcile run still claimed (until the run's
      // timeout, an hour) and the health task's next run an hour after the startup cycle.
      await backend.stop();
      activity.restartedAt(Date.now());
      backend = await startBackendProcess(env);
      base = `http://127.0.0.1:${backend.port}/api/fleet`;
      const tasks = await knex('backstage_backend_tasks__tasks')
        .whereIn('id', ['fleet-reconcile', 'fleet-health-cycle'])
        .select('id', 'current_run_ticket', 'next_run_start_at');
      log(
        `  backend restarted for the measured runs (started in ${ms(
          backend.startMs,
        )} on 127.0.0.1:${backend.port}); ${tasks
          .map(
            t =>
              `${t.id}: ${
                t.current_run_ticket
                  ? 'the unfinished run still claimed'
                  : 'not running'
              }, next run ${new Date(t.next_run_start_at).toISOString()}`,
          )
          .join('; ')}`,
      );
      await sample('restart');
    }

    await runLoad(
      'warm-up (not counted)',
      Math.min(1000, options.requestsPerRun),
    );
    // The measure: `runs` runs, and with a running backend more, back to back, until `cycles`
    // health cycles ended during it (bounded by a few intervals past what they should take).
    const runs: LoadRun[] = [];
    const measured: number[] = [];
    const measureStart = Date.now();
    const cyclesWanted = quiet ? 0 : options.cycles;
    const measureEnd =
      measureStart + (cyclesWanted + 2) * healthIntervalMs + cycleBudgetMs;
    let sofar = await activity.since(measureStart);
    while (
      runs.length < options.runs ||
      (sofar.healthCycleMs.length < cyclesWanted && Date.now() < measureEnd)
    ) {
      runs.push(
        await runLoad(
          `run ${runs.length + 1}${quiet ? `/${options.runs}` : ''}, ${
            options.clients
          } clients`,
          options.requestsPerRun,
          'http',
          measured,
        ),
      );
      sofar = await activity.since(measureStart);
    }
    const conditions: MeasureConditions = {
      quiet,
      watch: options.reconcile?.watch !== false,
      openWatches: await sim.openWatches(),
      objectsApplied: seeded.applied,
      healthIntervalMs,
      reconcileIntervalMs,
      restarted: !reconcileEnded && quiet,
      measureMs: Date.now() - measureStart,
      activity: sofar,
    };
    const overall = {
      requests: measured.length,
      p50: percentile(measured, 50),
      p95: percentile(measured, 95),
      p99: percentile(measured, 99),
    };
    log(
      `  the measure: ${runs.length} runs, ${overall.requests} requests in ${ms(
        conditions.measureMs,
      )}: p95 ${ms(overall.p95)} over them all (p50 ${ms(
        overall.p50,
      )}, p99 ${ms(overall.p99)}); ${conditionsLine(conditions)}`,
    );
    await sample('entity-card load');
    if (options.profileDir) {
      // One more run, not counted: profiled (the profiler costs CPU of its own), with the CPU of
      // each of the backend's threads.
      const file = path.join(
        options.profileDir,
        `card-${options.clusters}-${Date.now()}.cpuprofile`,
      );
      const profiling = await backend.profileStart();
      const threads0 = await threadCpuSeconds(backend.pid);
      await runLoad('profiled run (not counted)', options.requestsPerRun);
      const threads1 = await threadCpuSeconds(backend.pid);
      const written = profiling && (await backend.profileStop(file));
      log(
        `      by thread: ${threadCpuDelta(threads0, threads1)}${
          written ? `; profile in ${file}` : '; no profile written'
        }`,
      );
    }
    // Sensitivity to the load generator, which shares the machine's 2 cores with the backend and
    // PostgreSQL: the same load with Node's fetch (undici) instead of node:http.
    const fetchClientRun = await runLoad(
      `Node's fetch as the load generator instead of node:http, ${options.clients} clients`,
      options.requestsPerRun,
      'fetch',
    );
    // Browsers polling cards they already show: every client first reads every card once (its
    // HTTP cache), then revalidates; nothing changes meanwhile, so the answers are 304s.
    // The clients fill their caches at once, each over its own cards.
    await Promise.all(
      Array.from({ length: options.clients }, async (_, c) => {
        for (let j = 0; j < browserCards; j++) {
          const url = `${base}/deployments?entityRef=${encodeURIComponent(
            refOf(browserCardOf(c, j)),
          )}`;
          const res = await httpGet(url);
          if (res.etag)
            browserCaches[c].set(url, {
              etag: res.etag,
              body: JSON.parse(res.body),
            });
        }
      }),
    );
    const browserRun = await runLoad(
      `browsers revalidating the cards they show (If-None-Match), ${options.clients} clients`,
      options.requestsPerRun,
      'browser',
    );

    // The heavier reads, once each, for the record (and for the memory peak).
    const other: Record<string, number> = {};
    for (const [name, q] of [
      // The lists answer a page at a time (at most 1,000 items).
      ['GET /clusters (a page of 1,000)', '/clusters?limit=1000'],
      ['GET /deployments (a page of 1,000)', '/deployments?limit=1000'],
      ['GET /summary', '/summary'],
      ['GET /deployments?cluster=', `/deployments?cluster=${clusterNames[0]}`],
    ] as const) {
      const t = performance.now();
      const res = await get(q);
      other[name] = performance.now() - t;
      log(
        `    ${name}: ${res.status}, ${(res.body.length / 1024).toFixed(
          0,
        )} KiB in ${ms(other[name])}`,
      );
    }

    // Entity-card latency while a health cycle over the whole fleet runs in the same backend.
    const cycle = postLong(`${base}/health/run`, token, cycleBudgetMs);
    await new Promise(r => setTimeout(r, 200));
    const duringCycle = await runLoad(
      `during a health cycle, ${options.clients} clients`,
      options.requestsPerRun,
    );
    // Its end is waited for at most 2 minutes past the load run (at 10,000 clusters a cycle
    // takes minutes; the figure is the load run's).
    const cycleAnswer = await Promise.race([
      cycle,
      new Promise<undefined>(r => setTimeout(() => r(undefined), 120_000)),
    ]);
    if (!cycleAnswer) {
      log(
        '    (that health cycle was still under way 2 minutes after the load run: not waited for)',
      );
    } else if (cycleAnswer.status === 200) {
      const summary = JSON.parse(cycleAnswer.body);
      log(
        `    (that health cycle: ${ms(summary.durationMs)}, ${
          summary.probed
        } clusters)`,
      );
    } else {
      log(
        `    (that health cycle answered ${
          cycleAnswer.status
        }: ${cycleAnswer.body.slice(0, 200)})`,
      );
    }
    await sample('health cycle under load');

    const peakMiB = Math.max(...memory.map(m => m.peakMiB));
    return {
      clusters: options.clusters,
      deployments: seeded.deployments,
      applications: seeded.applications,
      clients: options.clients,
      requestsPerRun: options.requestsPerRun,
      backendStartMs: ready.startMs,
      startupCycleMs: startupCycle.durationMs,
      runs,
      duringCycle,
      duringReconcile,
      reconcileMs,
      reconcileEnded,
      reconcileCompared: reconcileEnded ? undefined : reconcileCompared,
      fetchClientRun,
      browserRun,
      median: {
        p50: median(runs.map(r => r.p50)),
        p95: median(runs.map(r => r.p95)),
        p99: median(runs.map(r => r.p99)),
      },
      overall,
      worstP95: Math.max(...runs.map(r => r.p95)),
      conditions,
      other,
      memory,
      peakMiB,
      controlMiB: controlMemory.rssMiB,
      cardBytes,
    };
  } finally {
    await activity.stop();
    await backend.stop();
    await sim.stop();
    await db.drop();
  }
}
