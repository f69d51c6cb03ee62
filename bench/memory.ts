/*
 * Fleet's memory, told apart from the backend's: the same Backstage backend process without the
 * Fleet plugin (the control) and with it, at N clusters × 10 N deployments on PostgreSQL, through
 * the phases that cost memory: the startup health cycle, the first reconcile run (it reads every
 * deployment's live objects), the entity-card load, and a health cycle under that load. For each:
 * peak RSS (VmHWM from /proc), then, after a full GC, the JS heap in use and what the process
 * holds outside the JS heap (RSS minus the V8 heap: native TLS state, sockets, buffers, code).
 * 10 % of the clusters time out, as in the other benchmarks. The control gets the same request
 * load as Fleet's two card loads (the same count from as many clients, each spread over as long as
 * Fleet's took) on a route of its own (its liveness), not idling; `runs` rounds of a Fleet run
 * then a control, alternating, give the spread. Then Fleet's cost per idle cluster:
 * the backend with N registered clusters (all answering) and no deployment against the backend
 * with none.
 *
 * With `baseline` (the path of another checkout, installed), its code runs the same phases on a
 * fresh database and simulator of its own, in the same run: today's code side by side with the
 * change. Its database is migrated by this checkout's code: the two must share their migrations.
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  createTempDatabase,
  establishedConnections,
  median,
  ms,
  processMemory,
  startBackendProcess,
  table,
  startSimProcess,
  type BackendProcess,
} from '@cnp/fleet-harness';
import { parse } from 'yaml';
import { seedFleetDeployments } from './lib/seedDeployments';
import { waitFor, waitForStartupCycle } from './lib/waitFor';
import { postLong, routeLoad, type RouteLoadResult } from './lib/httpLoad';

/** The control's own route: the backend's liveness, answered without Fleet or credentials. */
const CONTROL_ROUTE = '/.backstage/health/v1/liveness';

const MiB = 2 ** 20;

export interface MemorySample {
  phase: string;
  /** RSS at the end of the phase, before the GC the other figures follow. */
  rssBeforeGcMiB: number;
  /** After a full GC. */
  rssMiB: number;
  /** VmHWM: the highest RSS so far. */
  peakMiB: number;
  /** After a full GC. */
  heapUsedMiB: number;
  heapTotalMiB: number;
  /** RSS after a full GC minus the V8 heap (heapTotal): native memory, buffers, code. */
  outsideHeapMiB: number;
  /** process.memoryUsage().external and .arrayBuffers after a full GC. */
  externalMiB: number;
  arrayBuffersMiB: number;
  /** Fleet's cluster agents then (code that can tell only). */
  pool?: Record<string, number>;
  /** The backend's established TCP connections to the simulated clusters (from /proc). */
  clusterConnections?: number;
}

export interface MemoryRun {
  /** `control` (no Fleet), `fleet` (this checkout) or `baseline` (the other checkout). */
  label: string;
  checkout: string;
  clusters: number;
  deployments: number;
  samples: MemorySample[];
  peakMiB: number;
  startupCycleMs?: number;
  reconcileMs?: number;
  /** Fleet: the card load; the control: the same load on its own route. */
  card?: RouteLoadResult;
  /** The second load (Fleet: during a health cycle run on demand). */
  secondLoad?: RouteLoadResult;
}

export interface IdleRun {
  label: string;
  checkout: string;
  /** Peak RSS and the RSS after a full GC with no cluster, and with `clusters` idle clusters. */
  none: MemorySample;
  idle: MemorySample;
  clusters: number;
  /** (idle − none) × 1,000 / clusters. */
  peakMiBPer1000: number;
  rssAfterGcMiBPer1000: number;
}

export interface MemoryResult {
  clusters: number;
  deploymentsPerCluster: number;
  requests: number;
  /** One control per round, each after that round's Fleet run(s). */
  controls: MemoryRun[];
  /** Each round's Fleet run (and baseline run, first, with a baseline). */
  runs: MemoryRun[];
  idle: IdleRun[];
  /** Native memory of one TLS secure context built from a cluster CA (this machine's Node). */
  secureContextKiB?: number;
}

function commitOf(dir: string): string {
  try {
    return execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return 'unknown';
  }
}

/** Established TCP connections of process `pid` to `port` on loopback. */
async function connectionsTo(
  pid: number,
  port: number,
): Promise<number | undefined> {
  return (await establishedConnections(pid, [port]))?.length;
}

async function sampleOf(
  backend: BackendProcess,
  phase: string,
  simPort?: number,
): Promise<MemorySample> {
  const before = await processMemory(backend.pid);
  const live = await backend.liveMemory();
  const m = await processMemory(backend.pid);
  const pool = await backend.poolStats();
  const clusterConnections = simPort
    ? await connectionsTo(backend.pid, simPort)
    : undefined;
  const rss = live ? live.rss / MiB : m.rssMiB;
  return {
    phase,
    rssBeforeGcMiB: before.rssMiB,
    rssMiB: rss,
    peakMiB: m.peakMiB,
    heapUsedMiB: live ? live.heapUsed / MiB : NaN,
    heapTotalMiB: live ? live.heapTotal / MiB : NaN,
    outsideHeapMiB: live ? (live.rss - live.heapTotal) / MiB : NaN,
    externalMiB: live ? live.external / MiB : NaN,
    arrayBuffersMiB: live ? live.arrayBuffers / MiB : NaN,
    ...(pool ? { pool } : {}),
    ...(clusterConnections === undefined ? {} : { clusterConnections }),
  };
}

function describe(s: MemorySample): string {
  const pool = s.pool
    ? `; ${s.pool.secureContexts} TLS contexts, ${s.pool.agents} agents, ${s.pool.activeSockets} active + ${s.pool.freeSockets} idle sockets`
    : '';
  const connections =
    s.clusterConnections === undefined
      ? ''
      : `; ${s.clusterConnections} connections open to the clusters`;
  return `peak ${s.peakMiB.toFixed(0)} MiB, RSS ${s.rssBeforeGcMiB.toFixed(
    0,
  )} MiB; after a full GC: RSS ${s.rssMiB.toFixed(
    0,
  )} MiB, JS heap ${s.heapUsedMiB.toFixed(
    0,
  )} MiB in use (${s.heapTotalMiB.toFixed(
    0,
  )} MiB V8 heap), outside the V8 heap ${s.outsideHeapMiB.toFixed(
    0,
  )} MiB (array buffers ${s.arrayBuffersMiB.toFixed(
    0,
  )} MiB)${pool}${connections}`;
}

/** The scheduler's state of the reconcile task. */
async function reconcileTask(
  knex: ReturnType<Awaited<ReturnType<typeof createTempDatabase>>['knex']>,
) {
  return (await knex('backstage_backend_tasks__tasks')
    .where({ id: 'fleet-reconcile' })
    .first()) as
    | { current_run_ticket: string | null; next_run_start_at: unknown }
    | undefined;
}

const fleetEnv = (db: string, kubeconfigDir: string, token: string) => ({
  FLEET_BENCH_DB: db,
  FLEET_BENCH_KUBECONFIG_DIR: kubeconfigDir,
  FLEET_BENCH_TOKEN: token,
  FLEET_BENCH_HEALTH: JSON.stringify({
    probeTimeout: { seconds: 2 },
    concurrency: 16,
  }),
  // The reconcile task runs once, 15 s after startup; then not again during the measurement.
  FLEET_BENCH_FLEET: JSON.stringify({ reconcile: { interval: { hours: 1 } } }),
  LOG_LEVEL: process.env.FLEET_BENCH_VERBOSE ? 'info' : 'error',
});

/**
 * One backend (a checkout's code, or the control) over a fresh database and simulator: N
 * clusters, `applications` × `deploymentsPerApplication` deployments.
 */
async function measureFleet(options: {
  label: string;
  checkout?: string;
  clusters: number;
  applications: number;
  deploymentsPerApplication: number;
  requests: number;
  control?: boolean;
  /**
   * The control: the times its two loads (the same count and concurrency as Fleet's, on its own
   * route) are spread over, Fleet's loads' durations in the same round.
   */
  controlLoadMs?: [number, number];
  /** 10 % of the clusters time out (probe timeout 2 s), as in the other benchmarks. */
  timingOut?: boolean;
  heapSnapshotDir?: string;
  log: (line: string) => void;
}): Promise<MemoryRun> {
  const { log } = options;
  const checkout = options.checkout ?? process.cwd();
  log(
    `  ${options.label} (${
      options.control ? 'the same backend without Fleet' : 'Fleet'
    }, code at ${checkout}, commit ${commitOf(checkout)})`,
  );
  const db = await createTempDatabase('fleet_bench');
  const sim = await startSimProcess({ clusters: options.clusters });
  let backend: BackendProcess | undefined;
  try {
    if (options.timingOut) {
      const downNames = sim.names.filter((_, i) => (i + 1) % 10 === 0);
      await sim.setFault(downNames, { mode: 'timeout' });
    }
    const knex = db.knex();
    const seeded = await seedFleetDeployments({
      knex,
      kubeconfigDir: sim.kubeconfigDir,
      clusterNames: sim.names,
      applications: options.applications,
      deploymentsPerApplication: options.deploymentsPerApplication,
      log: line => log(`  ${line}`),
    });
    const token = randomBytes(24).toString('hex');
    const startedAt = Date.now();
    backend = await startBackendProcess(
      {
        ...fleetEnv(db.connection, sim.kubeconfigDir, token),
        ...(options.control ? { FLEET_BENCH_NO_FLEET: '1' } : {}),
      },
      { checkout: options.checkout },
    );
    const samples: MemorySample[] = [];
    const sample = async (phase: string) => {
      const s = await sampleOf(
        backend!,
        phase,
        Number(new URL(sim.url).port) || undefined,
      );
      samples.push(s);
      log(`    after ${phase}: ${describe(s)}`);
    };
    await sample('startup');
    /**
     * After the last sample: writing a snapshot takes memory of its own, which would count in the
     * peaks measured after it. Only this checkout's backend answers the question.
     */
    const snapshot = async (phase: string) => {
      if (!options.heapSnapshotDir || options.checkout) return;
      const file = path.join(
        path.resolve(options.heapSnapshotDir),
        `${options.label.replace(/\W+/g, '-')}-${
          options.clusters
        }-${phase}.heapsnapshot`,
      );
      mkdirSync(path.dirname(file), { recursive: true });
      const written = await backend!.heapSnapshot(file);
      // A snapshot cut short (the backend did not answer in time) is no snapshot.
      if (!written) rmSync(file, { force: true });
      log(
        written
          ? `    heap snapshot: ${file}`
          : `    heap snapshot to ${file} failed`,
      );
    };
    const run: MemoryRun = {
      label: options.label,
      checkout,
      clusters: options.clusters,
      deployments: seeded.deployments,
      samples,
      peakMiB: 0,
    };
    if (options.control) {
      // No Fleet: nothing to wait for but the backend settling (its own startup tasks); then
      // Fleet's two loads' requests on a route of its own, each over as long as Fleet's took.
      await new Promise(r => setTimeout(r, 20_000));
      await sample('20 s idle');
      for (const [i, spreadOverMs] of (options.controlLoadMs ?? []).entries()) {
        const result = await routeLoad({
          base: new URL(backend.base).origin,
          clients: 20,
          requests: options.requests,
          pathOf: () => CONTROL_ROUTE,
          ok: body => body.includes('ok'),
          spreadOverMs,
        });
        if (i === 0) run.card = result;
        else run.secondLoad = result;
        log(
          `    load on ${CONTROL_ROUTE}: ${
            result.requests
          } requests from 20 clients in ${ms(result.durationMs)} (Fleet's: ${ms(
            spreadOverMs,
          )}), ${result.errors} errors, p95 ${ms(result.p95)}`,
        );
        await sample(
          i === 0 ? 'load on its route' : 'second load on its route',
        );
      }
    } else {
      const cycle = await waitForStartupCycle(knex, startedAt, 600_000);
      run.startupCycleMs = cycle.durationMs;
      log(
        `    startup health cycle over ${cycle.probed} clusters: ${ms(
          cycle.durationMs,
        )}`,
      );
      await sample('health cycle');
      // The reconcile task's first run starts 15 s after startup: wait for it to start and end.
      await waitFor(
        'the first reconcile run to start',
        async () => {
          const task = await reconcileTask(knex);
          if (task?.current_run_ticket) return true;
          return task &&
            new Date(task.next_run_start_at as string).getTime() >
              Date.now() + 30 * 60_000
            ? true
            : undefined;
        },
        120_000,
      );
      const reconcileStarted = Date.now();
      const ranAlready = !(await reconcileTask(knex))?.current_run_ticket;
      await waitFor(
        'the first reconcile run to end',
        async () =>
          (await reconcileTask(knex))?.current_run_ticket ? undefined : true,
        1_800_000,
      );
      run.reconcileMs = Date.now() - reconcileStarted;
      log(
        ranAlready
          ? '    reconcile run: it had already ended'
          : `    reconcile run: about ${ms(run.reconcileMs)}`,
      );
      await sample('reconcile run');
      if (options.applications > 0) {
        // node:http keep-alive GETs of the entity card's route, gzip like a browser.
        const load = {
          base: backend.base,
          token,
          clients: 20,
          requests: options.requests,
          pathOf: () =>
            `/deployments?entityRef=${encodeURIComponent(
              `component:default/service-${
                Math.floor(Math.random() * options.applications) + 1
              }`,
            )}`,
          ok: (body: string) =>
            JSON.parse(body).items?.length ===
            options.deploymentsPerApplication,
        };
        run.card = await routeLoad(load);
        log(
          `    card load: ${run.card.requests} requests in ${ms(
            run.card.durationMs,
          )}, ${run.card.errors} errors, p95 ${ms(run.card.p95)}`,
        );
        await sample('card load');
        const cycleDone = postLong(
          `${backend.base}/health/run`,
          token,
          900_000,
        );
        await new Promise(r => setTimeout(r, 200));
        run.secondLoad = await routeLoad(load);
        log(
          `    (the health cycle under load answered ${
            (await cycleDone).status
          }; that load: ${ms(run.secondLoad.durationMs)})`,
        );
        await sample('health cycle under card load');
      }
    }
    run.peakMiB = Math.max(...samples.map(s => s.peakMiB));
    await snapshot('end');
    return run;
  } finally {
    await backend?.stop();
    await sim.stop();
    await db.drop();
  }
}

/**
 * Fleet with `clusters` registered clusters and no deployment, after its startup health cycle
 * and reconcile run, against Fleet with no cluster at all: what idle clusters cost.
 */
async function measureIdle(options: {
  label: string;
  checkout?: string;
  clusters: number;
  log: (line: string) => void;
}): Promise<IdleRun> {
  const { log } = options;
  const none = await measureFleet({
    label: `${options.label}, no cluster`,
    checkout: options.checkout,
    clusters: 0,
    applications: 0,
    deploymentsPerApplication: 0,
    requests: 0,
    log,
  });
  const idle = await measureFleet({
    label: `${options.label}, ${options.clusters} idle clusters`,
    checkout: options.checkout,
    clusters: options.clusters,
    applications: 0,
    deploymentsPerApplication: 0,
    requests: 0,
    log,
  });
  const last = (r: MemoryRun) => r.samples[r.samples.length - 1];
  const per = (a: number, b: number) => ((a - b) * 1000) / options.clusters;
  return {
    label: options.label,
    checkout: idle.checkout,
    none: last(none),
    idle: last(idle),
    clusters: options.clusters,
    peakMiBPer1000: per(last(idle).peakMiB, last(none).peakMiB),
    rssAfterGcMiBPer1000: per(last(idle).rssMiB, last(none).rssMiB),
  };
}

/**
 * What one TLS secure context built from a cluster's CA holds natively on this machine's Node
 * (each gets a certificate store of its own, with the root and NODE_EXTRA_CA_CERTS certificates):
 * what every cluster with a CA of its own costs, shared or not. In a child with --expose-gc.
 */
function secureContextKiB(caPem: string): number | undefined {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fleet-bench-ctx-'));
  try {
    const script = `
      const tls = require('node:tls');
      const ca = require('node:fs').readFileSync(process.argv[1], 'utf8');
      tls.createSecureContext({ ca }); // Node's root certificates parsed once
      gc(); const before = process.memoryUsage().rss;
      const kept = [];
      for (let i = 0; i < 500; i++) kept.push(tls.createSecureContext({ ca }));
      gc(); const after = process.memoryUsage().rss;
      process.stdout.write(String((after - before) / kept.length / 1024));
    `;
    const file = path.join(dir, 'ca.pem');
    require('node:fs').writeFileSync(file, caPem);
    const out = execFileSync(
      process.execPath,
      ['--expose-gc', '-e', script, file],
      { encoding: 'utf8', env: process.env },
    );
    return Number(out);
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchMemory(options: {
  clusters: number;
  deploymentsPerCluster: number;
  requests: number;
  /** Rounds: Fleet (the baseline first, with one), then the control, alternating. */
  runs: number;
  baseline?: string;
  /**
   * Also write a V8 heap snapshot here of this checkout's Fleet backend and of the control, each
   * after its last sample (first round only; not of the idle-cluster or baseline runs).
   */
  heapSnapshotDir?: string;
  log: (line: string) => void;
}): Promise<MemoryResult> {
  const { log } = options;
  const applications = options.clusters;
  const common = {
    clusters: options.clusters,
    applications,
    deploymentsPerApplication: options.deploymentsPerCluster,
    requests: options.requests,
    heapSnapshotDir: options.heapSnapshotDir,
    log,
  };
  const runs: MemoryRun[] = [];
  const controls: MemoryRun[] = [];
  const idle: IdleRun[] = [];
  const variants: Array<{ label: string; checkout?: string }> = [
    ...(options.baseline
      ? [{ label: 'baseline', checkout: path.resolve(options.baseline) }]
      : []),
    { label: 'fleet' },
  ];
  for (let round = 1; round <= options.runs; round++) {
    const suffix = options.runs > 1 ? ` ${round}/${options.runs}` : '';
    const heapSnapshotDir = round === 1 ? options.heapSnapshotDir : undefined;
    let fleet: MemoryRun | undefined;
    for (const v of variants) {
      fleet = await measureFleet({
        ...common,
        ...v,
        label: `${v.label}${suffix}`,
        heapSnapshotDir,
        timingOut: true,
      });
      runs.push(fleet);
    }
    // Without the plugin the database and the simulator are never read: none is seeded. Its
    // load: the same requests from as many clients as the Fleet run's, over as long.
    controls.push(
      await measureFleet({
        ...common,
        clusters: 0,
        applications: 0,
        label: `control${suffix}`,
        heapSnapshotDir,
        control: true,
        controlLoadMs:
          fleet?.card && fleet.secondLoad
            ? [fleet.card.durationMs, fleet.secondLoad.durationMs]
            : undefined,
      }),
    );
  }
  for (const v of variants) {
    idle.push(
      await measureIdle({
        label: v.label,
        checkout: v.checkout,
        clusters: options.clusters,
        log,
      }),
    );
  }
  // The simulator's CA, as a kubeconfig carries it.
  let ctxKiB: number | undefined;
  const sim = await startSimProcess({ clusters: 1 });
  try {
    const file = readdirSync(sim.kubeconfigDir).find(f => f.endsWith('.yaml'));
    if (file) {
      const doc = parse(
        readFileSync(path.join(sim.kubeconfigDir, file), 'utf8'),
      );
      const ca = Buffer.from(
        doc.clusters[0].cluster['certificate-authority-data'],
        'base64',
      ).toString('utf8');
      ctxKiB = secureContextKiB(ca);
    }
  } finally {
    await sim.stop();
  }
  if (ctxKiB !== undefined)
    log(`  one TLS secure context from a cluster CA: ${ctxKiB.toFixed(0)} KiB`);
  return {
    clusters: options.clusters,
    deploymentsPerCluster: options.deploymentsPerCluster,
    requests: options.requests,
    controls,
    runs,
    idle,
    secureContextKiB: ctxKiB,
  };
}

/** The memory benchmark's figures: each Fleet run against the control, then idle clusters. */
export function memorySummary(m: MemoryResult): string {
  const mib = (v: number) =>
    Number.isFinite(v) ? `${v.toFixed(0)} MiB` : 'n/a';
  const over = (v: number) =>
    Number.isFinite(v) ? `${v >= 0 ? '+' : ''}${v.toFixed(0)} MiB` : 'n/a';
  const at = (r: MemoryResult['runs'][number], phase: string) =>
    r.samples.find(s => s.phase === phase);
  const rows: string[][] = [];
  // Each round's runs against that round's control (same load, same time).
  const perRound = m.runs.length / Math.max(1, m.controls.length);
  const overs: Record<string, number[]> = {};
  for (const [i, r] of m.runs.entries()) {
    const controlRun = m.controls[Math.floor(i / perRound)];
    const control = controlRun.samples[controlRun.samples.length - 1];
    if (i % perRound === 0)
      rows.push([
        `${controlRun.label} (no Fleet; ${
          controlRun.card
            ? `${controlRun.card.requests} + ${controlRun.secondLoad?.requests} requests on its own route`
            : 'idle'
        })`,
        mib(controlRun.peakMiB),
        '',
        '',
        '',
        '',
        mib(control.heapUsedMiB),
        '',
        '',
      ]);
    const last = r.samples[r.samples.length - 1];
    const overPeak = r.peakMiB - control.peakMiB;
    const overHeap = last.heapUsedMiB - control.heapUsedMiB;
    (overs[r.label.split(' ')[0]] ??= []).push(overPeak);
    rows.push([
      `${r.label} (${r.checkout.split('/').pop()})`,
      mib(r.peakMiB),
      `**${over(overPeak)}**`,
      mib(at(r, 'health cycle')?.peakMiB ?? NaN),
      mib(at(r, 'reconcile run')?.peakMiB ?? NaN),
      mib(at(r, 'card load')?.peakMiB ?? NaN),
      mib(last.heapUsedMiB),
      over(overHeap),
      over(overPeak - overHeap),
    ]);
  }
  const spread = (list: number[], f: (v: number) => string) =>
    list.length
      ? `min ${f(Math.min(...list))} / median ${f(median(list))} / max ${f(
          Math.max(...list),
        )}`
      : 'n/a';
  const peaksOf = (label: string) =>
    m.runs.filter(r => r.label.split(' ')[0] === label).map(r => r.peakMiB);
  const spreadLines = [
    `peak RSS over ${
      m.controls.length
    } round(s), each Fleet run then a control with the same load (${
      m.requests
    } requests twice, 20 clients, over as long) on its own route: control ${spread(
      m.controls.map(c => c.peakMiB),
      mib,
    )}`,
    ...Object.entries(overs).map(
      ([label, list]) =>
        `  ${label}: peak ${spread(
          peaksOf(label),
          mib,
        )}; over the control of its round **${spread(list, over)}**`,
    ),
  ];
  const idleRows = m.idle.map(i => [
    i.label,
    mib(i.none.peakMiB),
    mib(i.idle.peakMiB),
    `**${over(i.peakMiBPer1000)}**`,
    mib(i.none.rssMiB),
    mib(i.idle.rssMiB),
    over(i.rssAfterGcMiBPer1000),
  ]);
  return [
    `memory at ${m.clusters} clusters × ${
      m.clusters * m.deploymentsPerCluster
    } deployments (card load ${m.requests} requests):`,
    table(
      [
        'backend',
        'peak RSS',
        'over control',
        'after health cycle',
        'after reconcile',
        'after card load',
        'JS heap in use after GC (end)',
        'JS heap over control',
        'peak over control, less the JS heap in use',
      ],
      rows,
    ),
    ...spreadLines,
    `idle clusters (${
      m.idle[0]?.clusters ?? 0
    } registered, no deployment, after the startup health cycle and reconcile run):`,
    table(
      [
        'code',
        'peak, no cluster',
        'peak, idle clusters',
        'peak per 1,000 idle clusters',
        'RSS after GC, no cluster',
        'RSS after GC, idle clusters',
        'per 1,000',
      ],
      idleRows,
    ),
    m.secureContextKiB === undefined
      ? ''
      : `one TLS secure context built from a cluster CA holds ${m.secureContextKiB.toFixed(
          0,
        )} KiB natively (a cluster with a CA of its own pays it, shared or not)`,
  ].join('\n');
}
