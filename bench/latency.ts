/*
 * GET /deployments?entityRef= (what the entity card calls) on PostgreSQL at a fleet size (1,000
 * clusters × 10,000 deployments by default; 10,000 × 100,000 for the scale issue), under 20
 * concurrent clients, over real HTTP on loopback; and the peak RSS of the backend process that
 * serves it (VmHWM from /proc).
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
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

/** A POST that may take minutes (fetch gives up on headers after 300 s). */
function postLong(
  url: string,
  token: string,
  timeoutMs: number,
): Promise<{ status: number; body: string }> {
  return new Promise(resolve => {
    const req = http.request(
      url,
      {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(timeoutMs),
      },
      res => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', chunk => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', error => resolve({ status: 0, body: String(error) }));
      },
    );
    req.on('error', error => resolve({ status: 0, body: String(error) }));
    req.end();
  });
}

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
  log: (line: string) => void;
}): Promise<LatencyResult> {
  const { log } = options;
  // Waits that grow with the fleet: a health cycle at concurrency c takes about
  // ⌈down / c⌉ × the 2 s timeout plus the answering clusters' probes; the reconcile run reads
  // every deployment. At least the budgets that served 1,000 × 10,000.
  const deployments = options.applications * options.deploymentsPerApplication;
  const cycleBudgetMs = Math.max(300_000, options.clusters * 60);
  const reconcileBudgetMs = Math.max(900_000, deployments * 30);
  const db = await createTempDatabase('fleet_bench');
  const sim = await startSimProcess({
    clusters: options.clusters,
    port: options.basePort,
    // The simulator's controllers run every second on each cluster with open watches: at 1,000
    // watched clusters, over the seeded objects, they would take a share of the 2 cores the
    // card is measured on (an API server's work, done elsewhere in a real fleet). The seeded
    // workloads are ready before the backend starts; spec changes are streamed at once anyway.
    watch: { controllerTickMs: 30_000 },
  });
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
    // One simulator process holds every cluster's objects and their pods: at 10,000 clusters ×
    // 90,000 applied deployments it ran out of its 4 GiB heap. Beyond 20,000 deployments the
    // rows are seeded alone (the card reads rows, not objects).
    applyObjects: deployments <= MAX_APPLIED_DEPLOYMENTS,
    log,
  });

  const env = {
    FLEET_BENCH_DB: db.connection,
    FLEET_BENCH_KUBECONFIG_DIR: sim.kubeconfigDir,
    FLEET_BENCH_TOKEN: token,
    FLEET_BENCH_HEALTH: JSON.stringify({
      probeTimeout: { seconds: 2 },
      concurrency: options.concurrency,
    }),
    // The reconcile task runs once, 15 s after startup; then not again during the measurement.
    FLEET_BENCH_FLEET: JSON.stringify({
      reconcile: { ...options.reconcile, interval: { hours: 1 } },
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
    const browserHeaders = {
      Authorization: `Bearer ${token}`,
      'Accept-Encoding': 'gzip, deflate, br',
      Accept: 'application/json',
    };
    const httpGet = (url: string, etag?: string) =>
      new Promise<{ status: number; body: string; etag?: string }>(
        (resolve, reject) => {
          const req = http.get(
            url,
            {
              agent: keepAlive,
              headers: etag
                ? { ...browserHeaders, 'If-None-Match': etag }
                : browserHeaders,
              signal: AbortSignal.timeout(30_000),
            },
            res => {
              const chunks: Buffer[] = [];
              res.on('data', (chunk: Buffer) => chunks.push(chunk));
              res.on('end', () => {
                const raw = Buffer.concat(chunks);
                const encoding = res.headers['content-encoding'];
                const body =
                  encoding === 'gzip'
                    ? gunzipSync(raw)
                    : encoding === 'br'
                    ? brotliDecompressSync(raw)
                    : encoding === 'deflate'
                    ? inflateSync(raw)
                    : raw;
                resolve({
                  status: res.statusCode ?? 0,
                  body: body.toString('utf8'),
                  etag: res.headers.etag,
                });
              });
              res.on('error', reject);
            },
          );
          req.on('error', reject);
        },
      );
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
    ): Promise<LoadRun> => {
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
        }`,
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
            current_run_started_at: unknown;
            next_run_start_at: unknown;
          }
        | undefined;
    const hasRun = (task: Awaited<ReturnType<typeof reconcileTask>>) =>
      !!task &&
      !task.current_run_ticket &&
      new Date(task.next_run_start_at as string).getTime() >
        Date.now() + 30 * 60_000;
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
      if (!(await reconcileTask())?.current_run_ticket) {
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
      async () =>
        (await reconcileTask())?.current_run_ticket ? undefined : true,
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
    if (!reconcileEnded) {
      // A quiet backend for the measured runs, as at sizes where the run ends: a new process on
      // the same database. Its scheduler finds the reconcile run still claimed (until the run's
      // timeout, an hour) and the health task's next run an hour after the startup cycle.
      await backend.stop();
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
    const runs: LoadRun[] = [];
    for (let i = 0; i < options.runs; i++) {
      runs.push(
        await runLoad(
          `run ${i + 1}/${options.runs}, ${options.clients} clients`,
          options.requestsPerRun,
        ),
      );
    }
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
      other,
      memory,
      peakMiB,
      controlMiB: controlMemory.rssMiB,
      cardBytes,
    };
  } finally {
    await backend.stop();
    await sim.stop();
    await db.drop();
  }
}
