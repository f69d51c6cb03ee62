/*
 * Fleet's benchmarks (docs/benchmarks.md). Run with `bash bench/run.sh [flags]`:
 *
 *   --only cycle,statements,latency,peer  parts to run (default: those four; `release` is opt-in,
 *                                     ~3 min: --only release, or --only cycle,...,release)
 *   --sizes 100,1000                  cycle benchmark fleet sizes
 *   --concurrency 16,64               fleet.health.concurrency values measured
 *   --fleet-runs 5                    measured Fleet cycles per size and concurrency (median)
 *   --baseline-runs 3                 sequential baseline runs at N <= 100
 *   --baseline-runs-large 1           sequential baseline runs at N > 100 (each takes > 200 s)
 *   --statement-sizes 100,300,1000    fleet sizes for the statement counts
 *   --latency-runs 3 --requests 5000  entity-card load runs and requests per run
 *   --latency-clusters 1000           fleet sizes of the entity-card benchmark, each measured on a
 *                                     fleet of its own in the same run (e.g. 1000,10000)
 *   --latency-deployments 10000       deployments at each of those sizes, 10 per application
 *                                     (default: 10 × the clusters: 10,000 at 1,000 clusters,
 *                                     100,000 at 10,000)
 *   --latency-port 47300              the entity-card benchmark's simulator port (its backends: the
 *                                     next one); default: any free port
 *   --latency-reconcile-wait 900      seconds to wait for the first reconcile run to end before
 *                                     the measured runs (default: 900, more beyond 30,000
 *                                     deployments); past it, measured anyway (--latency-quiet:
 *                                     the backend is restarted, no reconcile run under way)
 *   --latency-watch true|false        fleet.reconcile.watch of its backend (default: the
 *                                     backend's default, true)
 *   --latency-health-interval 60      its fleet.health.interval, seconds (--quick: 30); by default
 *                                     the backend runs as a user runs it: every deployment's
 *                                     objects applied, the health cycle on that schedule and the
 *                                     reconcile on its default one (60 s) during the measure
 *   --latency-cycles 3                the measured runs go on until that many health cycles
 *                                     ended during them (--quick: 2); each figure is printed with
 *                                     the health cycles and reconcile runs that ran
 *   --latency-sim-heap 12288          the simulator's V8 heap, MiB, beyond 20,000 deployments
 *                                     (it holds every deployment's objects)
 *   --latency-quiet                   today's quiet backend instead: health cycle and reconcile
 *                                     every hour (one of each after startup), objects applied up
 *                                     to 20,000 deployments; its figures say "quiet backend"
 *   --cold 64                         also time cycles that start with no open connection (health
 *                                     interval > the clients' 30 s idle timeout) at that
 *                                     concurrency; 0 to skip
 *   --release-databases sqlite,postgres  databases of the progressive-release benchmark
 *   --release-clusters 100            its fleet size (4 waves: 10 / 40 / 70 / 100 %)
 *   --release-ready 700,1700          pods' readiness delay, spread over the clusters (ms)
 *   --only judgment                   a canary judged against its baseline: one step over
 *                                     --judgment-clusters 100 clusters (16 at a time), each
 *                                     reading --judgment-points 120 samples a side for 3 metrics
 *   --only manifests                  a component's own 50 manifests against Fleet's generated
 *                                     workload (opt-in, ~3 min a round): per cluster, first
 *                                     apply, second and later re-applies unchanged, preview of
 *                                     a changed set
 *   --manifests-clusters 100          its fleet size
 *   --manifests-concurrency 16        clusters at once, one round each on namespaces of its own
 *                                     (16: a progressive release's wave; 1: an immediate
 *                                     release or a placement, one cluster after another; 8: a
 *                                     preview's), e.g. 16,1; 0 for none
 *   --manifests-deploy 16             then the whole deploy path (DeploymentService.deploy() with
 *                                     the manifests read from a local Git host, preview()), that
 *                                     many clusters at a time (~4 min; default 0: left out)
 *   --drift-sizes 1000,10000          drift benchmark (opt-in: --only drift) fleet sizes in
 *                                     deployments, 10 per cluster; watches vs polling (today)
 *   --drift-samples 20                drifts timed one by one per size and mode, each from the
 *                                     change to the backend's OUT_OF_SYNC event (its createdAt)
 *   --drift-steady 120                seconds of the no-change CPU window
 *   --drift-health-interval 60        fleet.health.interval of its backends, seconds: the health
 *                                     cycle on its schedule, also in that window (default on;
 *                                     3600: off, one cycle at startup, as before)
 *   --drift-settle 60                 seconds with no change before that window
 *   --drift-port 47200                first of the ports it uses (simulator, then backends)
 *   --drift-modes watch,poll          reconcile modes measured (watches, polling)
 *   --drift-baseline <dir>            also run each mode with the backend of another installed
 *                                     checkout (e.g. a git worktree of main after `yarn install`),
 *                                     on the same fleet, before this code's
 *   --drift-profile <dir>             also take a V8 CPU profile of the backend over a second
 *                                     quiet window of each run, written to <dir>
 *   --card-bytes-clusters 1000        fleet sizes of the bytes-per-card-load figure (`--only
 *                                     card-bytes`, opt-in: the card's old request set and its new
 *                                     one; --card-bytes-port 47600 its simulator port)
 *   --latency-profile <dir>           also take a V8 CPU profile of the backend over one more
 *                                     measured run (not counted), written to <dir>
 *   --only memory                     Fleet's memory against the same backend without Fleet (opt-in,
 *                                     ~25 min a round at 1,000 clusters): phases, heap, outside the heap,
 *                                     MiB per 1,000 idle clusters
 *   --memory-clusters 1000            its fleet size (10 deployments per cluster)
 *   --memory-requests 5000            entity-card requests of its card load (the control: as many
 *                                     on a route of its own, from as many clients, over as long)
 *   --memory-runs 3                   rounds of Fleet then the control, alternating (--quick: 1);
 *                                     min / median / max of the peaks and of Fleet over the control
 *   --memory-baseline <dir>           also measure the code of another installed checkout (e.g. a
 *                                     git worktree of main after `yarn install`), in the same run
 *   --memory-heap-snapshots <dir>     also write each backend's V8 heap snapshot there, after its
 *                                     last sample (this checkout's backends); summarize them with
 *                                     bench/heapSummary.ts (its header says how)
 *   --only shards                     the health cycle shared by 2 backend processes (opt-in, ~10 min):
 *                                     10,000 clusters, 10 % timing out, fleet.health.shards; then
 *                                     one replica SIGKILLed mid-cycle (takeover, gaps between probes)
 *   --shards-clusters 10000           its fleet size
 *   --shards-replicas 2               backend processes
 *   --shards-count 8                  fleet.health.shards
 *   --shards-lease 30                 fleet.health.shardLease, seconds (the default)
 *   --shards-interval 60              fleet.health.interval, seconds
 *   --shards-concurrency 64           fleet.health.concurrency (probe timeout 2 s, as for cycle)
 *   --shards-cycles 5                 steady cycles measured before the kill (--quick: 2), each
 *                                     printed; the verdict is the worst one's
 *   --shards-port 47480               first of the ports it uses (simulator, then backends)
 *   --shards-watch true|false         fleet.reconcile.watch of the replicas (default true, the
 *                                     backend's default: each replica watches its shards' clusters)
 *   --only peer                       Fleet's entity card beside the Kubernetes plugin's
 *                                     POST /api/kubernetes/services/:id in one backend, the
 *                                     component on every cluster, one page view of each
 *                                     alternating; then with 10 % of the clusters hanging, before
 *                                     Fleet finds them OFFLINE (in the default run)
 *   --peer-clusters 1000              its fleet size (--quick: 100)
 *   --peer-requests 20                page views of each with every cluster answering (--quick: 10)
 *   --peer-fault-requests 5           page views of each with clusters hanging (--quick: 3)
 *   --peer-bound 60                   seconds a page view is waited for (client side)
 *   --peer-port 47700                 its simulator port (its backend: the next one); default:
 *                                     any free port
 *   --quick                           a small smoke run (minutes, not for the figures)
 *   --json <file>                     also write every figure as JSON
 *
 * Needs PostgreSQL on 127.0.0.1:5432 (user postgres, trust auth), or FLEET_BENCH_PG. Creates
 * fleet_bench_* databases and drops them at the end. Loopback only; every loop is bounded.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { benchCycle, type CycleSizeResult } from './cycle';
import {
  machineLine,
  ms,
  postgresAnswers,
  runMain,
  table,
} from '@cnp/fleet-harness';
import { benchLatency, type LatencyResult } from './latency';
import { activityLine, conditionsLine } from './lib/backendActivity';
import { benchCardBytes, type CardBytesRun } from './cardBytes';
import { benchDrift, type DriftSizeResult } from './drift';
import { benchShards, shardsSummary, type ShardsResult } from './shards';
import { benchMemory, memorySummary, type MemoryResult } from './memory';
import { readFleetConfig } from './lib/releaseParts';
import { benchRelease, type ReleaseRunResult } from './release';
import { benchJudgment, type JudgmentRunResult } from './judgment';
import { benchPeer, peerSummary, type PeerResult } from './peer';
import {
  benchManifests,
  MANIFESTS_TABLE_HEADER,
  manifestsDeploySummary,
  manifestsTableRows,
  type ManifestsBenchResult,
} from './manifests';
import { ConfigReader } from '@backstage/config';
import {
  benchStatements,
  medianTotal,
  type StatementsResult,
} from './statements';

/** The commit measured, and whether the backend had uncommitted changes (read-only git calls). */
function codeVersion(): string {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    const dirty = git('status', '--porcelain', '--', 'plugins', 'packages')
      .split('\n')
      .filter(Boolean).length;
    return `commit ${git('rev-parse', '--short', 'HEAD')}${
      dirty ? ` + ${dirty} uncommitted file(s) in plugins/ and packages/` : ''
    }`;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

function parseArgs(argv: string[]) {
  const args = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    if (a === '--quick' || a === '--latency-quiet') args.set(a.slice(2), '1');
    else args.set(a.slice(2), argv[++i] ?? '');
  }
  const quick = args.has('quick');
  const list = (key: string, fallback: string) =>
    (args.get(key) ?? fallback).split(',').filter(Boolean);
  const checkedInt = (key: string) => (raw: string | number) => {
    const v = Number(raw);
    if (!Number.isInteger(v) || v < 0 || v > 100_000)
      throw new Error(`--${key}: expected an integer`);
    return v;
  };
  const int = (key: string, fallback: number) =>
    checkedInt(key)(args.get(key) ?? fallback);
  const bool = (key: string) => {
    const v = args.get(key);
    if (v === undefined) return undefined;
    if (v !== 'true' && v !== 'false')
      throw new Error(`--${key}: expected true or false`);
    return v === 'true';
  };
  return {
    only: new Set(list('only', 'cycle,statements,latency,peer')),
    sizes: list('sizes', quick ? '100' : '100,1000').map(Number),
    concurrency: list('concurrency', '16,64').map(Number),
    fleetRuns: int('fleet-runs', quick ? 2 : 5),
    baselineRuns: int('baseline-runs', quick ? 1 : 3),
    baselineRunsLarge: int('baseline-runs-large', 1),
    statementSizes: list(
      'statement-sizes',
      quick ? '50,100' : '100,300,1000',
    ).map(Number),
    latencyRuns: int('latency-runs', quick ? 1 : 3),
    requests: int('requests', quick ? 1000 : 5000),
    latencyClusters: list('latency-clusters', quick ? '200' : '1000').map(
      checkedInt('latency-clusters'),
    ),
    latencyDeployments: args.has('latency-deployments')
      ? list('latency-deployments', '').map(checkedInt('latency-deployments'))
      : undefined,
    latencyWatch: bool('latency-watch'),
    latencyReconcileWait: args.has('latency-reconcile-wait')
      ? int('latency-reconcile-wait', 0)
      : undefined,
    latencyPort: args.has('latency-port') ? int('latency-port', 0) : undefined,
    latencyProfile: args.get('latency-profile'),
    latencyQuiet: args.has('latency-quiet'),
    latencyHealthInterval: int('latency-health-interval', quick ? 30 : 60),
    latencyCycles: int('latency-cycles', quick ? 2 : 3),
    latencySimHeap: int('latency-sim-heap', 12_288),
    cardBytesClusters: list('card-bytes-clusters', quick ? '200' : '1000').map(
      checkedInt('card-bytes-clusters'),
    ),
    cardBytesPort: int('card-bytes-port', 47600),
    cold: int('cold', 64),
    releaseDatabases: list('release-databases', 'sqlite,postgres') as Array<
      'sqlite' | 'postgres'
    >,
    releaseClusters: int('release-clusters', quick ? 30 : 100),
    releaseReady: list('release-ready', '700,1700').map(Number) as [
      number,
      number,
    ],
    manifestsClusters: int('manifests-clusters', quick ? 20 : 100),
    manifestsConcurrency: list('manifests-concurrency', '16')
      .map(checkedInt('manifests-concurrency'))
      .filter(c => c > 0),
    manifestsDeploy: int('manifests-deploy', 0),
    judgmentClusters: int('judgment-clusters', quick ? 20 : 100),
    judgmentPoints: int('judgment-points', 120),
    driftSizes: list('drift-sizes', quick ? '300' : '1000,10000').map(Number),
    driftSamples: int('drift-samples', quick ? 5 : 20),
    driftSteady: int('drift-steady', quick ? 20 : 120),
    driftSettle: int('drift-settle', quick ? 5 : 60),
    driftHealthInterval: int('drift-health-interval', 60),
    driftPort: int('drift-port', 47200),
    driftModes: list('drift-modes', 'watch,poll').map(mode => {
      if (mode !== 'watch' && mode !== 'poll')
        throw new Error(`--drift-modes: unknown mode ${mode}`);
      return mode;
    }),
    driftBaseline: args.get('drift-baseline'),
    driftProfile: args.get('drift-profile'),
    memoryClusters: int('memory-clusters', quick ? 50 : 1000),
    memoryRequests: int('memory-requests', quick ? 1000 : 5000),
    memoryRuns: int('memory-runs', quick ? 1 : 3),
    memoryBaseline: args.get('memory-baseline'),
    memorySnapshots: args.get('memory-heap-snapshots'),
    shardsClusters: int('shards-clusters', quick ? 1000 : 10_000),
    shardsReplicas: int('shards-replicas', 2),
    shardsCount: int('shards-count', 8),
    shardsLease: int('shards-lease', quick ? 10 : 30),
    shardsInterval: int('shards-interval', quick ? 30 : 60),
    shardsConcurrency: int('shards-concurrency', 64),
    shardsCycles: int('shards-cycles', quick ? 2 : 5),
    shardsPort: int('shards-port', 47480),
    shardsWatch: bool('shards-watch') ?? true,
    peerClusters: int('peer-clusters', quick ? 100 : 1000),
    peerRequests: int('peer-requests', quick ? 10 : 20),
    peerFaultRequests: int('peer-fault-requests', quick ? 3 : 5),
    peerBound: int('peer-bound', 60),
    peerPort: args.has('peer-port') ? int('peer-port', 0) : undefined,
    json: args.get('json'),
  };
}

const USAGE = `usage: bash bench/run.sh [--only cycle,statements,latency,peer] [--sizes 100,1000] [--concurrency 16,64]
  [--fleet-runs 5] [--baseline-runs 3] [--baseline-runs-large 1] [--statement-sizes 100,300,1000]
  [--latency-runs 3] [--requests 5000] [--latency-clusters 1000,10000]
  [--latency-deployments 10000,100000] [--latency-watch true|false] [--latency-port 47300]
  [--latency-reconcile-wait 900] [--latency-profile <dir>] [--latency-health-interval 60]
  [--latency-cycles 3] [--latency-sim-heap 12288] [--latency-quiet] [--cold 64]
  [--card-bytes-clusters 1000,10000] [--card-bytes-port 47600]
  [--release-databases sqlite,postgres] [--release-clusters 100] [--release-ready 700,1700]
  [--manifests-clusters 100] [--manifests-concurrency 16,1] [--manifests-deploy 0]
  [--memory-clusters 1000] [--memory-requests 5000] [--memory-runs 3] [--memory-baseline <checkout>] [--memory-heap-snapshots <dir>] [--quick] [--json <file>]
  [--drift-sizes 1000,10000] [--drift-samples 20] [--drift-steady 120] [--drift-settle 60] [--drift-health-interval 60] [--drift-port 47200]
  [--drift-modes watch,poll] [--drift-baseline <checkout>] [--drift-profile <dir>]
  [--shards-clusters 10000] [--shards-replicas 2] [--shards-count 8] [--shards-lease 30]
  [--shards-interval 60] [--shards-concurrency 64] [--shards-cycles 5] [--shards-port 47480]
  [--shards-watch true|false]
  [--peer-clusters 1000] [--peer-requests 20] [--peer-fault-requests 5] [--peer-bound 60] [--peer-port 47700]
  --only release: the progressive-release benchmark (opt-in, not in the default run)
  --only manifests: a component's own 50 manifests vs the generated workload (opt-in, not in the default run)
  --only judgment: a canary judged against its baseline, one step over the fleet (opt-in) [--judgment-clusters 100] [--judgment-points 120]
  --only memory: Fleet's memory against the backend without it (opt-in, not in the default run)
  --only drift: drift detection, watches vs polling (opt-in, not in the default run)
  --only shards: the health cycle across replicas and a replica killed (opt-in, not in the default run)
(see the comment at the top of bench/run.ts)`;

async function main(): Promise<number> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const options = parseArgs(process.argv.slice(2));
  const needsPostgres =
    [
      'cycle',
      'statements',
      'latency',
      'card-bytes',
      'memory',
      'drift',
      'shards',
      'peer',
    ].some(p => options.only.has(p)) ||
    (options.only.has('release') &&
      options.releaseDatabases.includes('postgres'));
  if (needsPostgres && !(await postgresAnswers())) {
    process.stderr.write(
      'bench: PostgreSQL does not answer at 127.0.0.1:5432 (or FLEET_BENCH_PG)\n',
    );
    return 2;
  }
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const startedAt = new Date();
  log(`Fleet benchmarks, ${startedAt.toISOString()}`);
  log(`machine: ${machineLine()}`);
  log(`code: ${codeVersion()}`);
  // What changes the backends' processes from outside: their allocator and Node's flags.
  const processEnv = [
    'LD_PRELOAD',
    'MALLOC_ARENA_MAX',
    'NODE_OPTIONS',
    'FLEET_BENCH_NODE_ARGS',
  ]
    .filter(name => process.env[name])
    .map(name => `${name}=${process.env[name]}`);
  if (processEnv.length > 0)
    log(`environment of the processes: ${processEnv.join(' ')}`);
  const results: {
    startedAt: string;
    machine: string;
    code: string;
    cycle: CycleSizeResult[];
    statements: StatementsResult[];
    latency: LatencyResult[];
    cardBytes: CardBytesRun[];
    release: ReleaseRunResult[];
    manifests?: ManifestsBenchResult;
    judgment?: JudgmentRunResult;
    drift: DriftSizeResult[];
    memory?: MemoryResult;
    shards?: ShardsResult;
    peer?: PeerResult;
  } = {
    startedAt: startedAt.toISOString(),
    machine: machineLine(),
    code: codeVersion(),
    cycle: [],
    statements: [],
    latency: [],
    cardBytes: [],
    release: [],
    drift: [],
  };

  if (options.only.has('cycle')) {
    log(
      '\n== health cycle: Fleet vs the sequential baseline (10 % of clusters time out, probe timeout 2 s)',
    );
    for (const n of options.sizes) {
      results.cycle.push(
        await benchCycle({
          n,
          concurrencies: options.concurrency,
          fleetRuns: options.fleetRuns,
          baselineRuns:
            n > 100 ? options.baselineRunsLarge : options.baselineRuns,
          probeTimeoutMs: 2_000,
          downFraction: 0.1,
          coldConcurrency: options.cold || undefined,
          log,
        }),
      );
    }
  }
  if (options.only.has('statements')) {
    log('\n== database statements per cycle (10 deployments per cluster)');
    for (const n of options.statementSizes) {
      results.statements.push(
        await benchStatements({
          n,
          deploymentsPerCluster: 10,
          noChangeRuns: 3,
          downFraction: 0.1,
          log,
        }),
      );
    }
  }
  if (options.only.has('latency')) {
    const { latencyClusters, latencyDeployments } = options;
    if (
      latencyDeployments &&
      latencyDeployments.length !== latencyClusters.length
    )
      throw new Error(
        '--latency-deployments: one figure per --latency-clusters size',
      );
    for (const [i, clusters] of latencyClusters.entries()) {
      const deployments = latencyDeployments?.[i] ?? clusters * 10;
      if (deployments % 10 !== 0 || deployments === 0 || clusters < 10)
        throw new Error(
          `--latency-deployments: ${deployments} is not 10 per application on 10 of ${clusters} clusters`,
        );
      log(
        `\n== GET /deployments?entityRef= and backend memory (PostgreSQL), ${clusters} clusters × ${deployments} deployments, ${
          options.latencyQuiet ? 'quiet backend' : 'running backend'
        }` +
          (options.latencyWatch === undefined
            ? ''
            : `, fleet.reconcile.watch: ${options.latencyWatch}`),
      );
      results.latency.push(
        await benchLatency({
          clusters,
          applications: deployments / 10,
          deploymentsPerApplication: 10,
          clients: 20,
          requestsPerRun: options.requests,
          runs: options.latencyRuns,
          maxRunMs: 120_000,
          downFraction: 0.1,
          concurrency: 16,
          reconcile:
            options.latencyWatch === undefined
              ? undefined
              : { watch: options.latencyWatch },
          basePort: options.latencyPort,
          reconcileWaitMs:
            options.latencyReconcileWait === undefined
              ? undefined
              : options.latencyReconcileWait * 1000,
          profileDir: options.latencyProfile,
          quiet: options.latencyQuiet,
          healthIntervalMs: options.latencyHealthInterval * 1000,
          cycles: options.latencyCycles,
          simHeapMiB: options.latencySimHeap,
          log,
        }),
      );
    }
  }

  if (options.only.has('card-bytes')) {
    for (const clusters of options.cardBytesClusters) {
      log(
        `\n== bytes per entity-card load (PostgreSQL), ${clusters} clusters, 10 applications × 10 deployments`,
      );
      results.cardBytes.push(
        await benchCardBytes({
          clusters,
          // The answers' size depends on the clusters, not on other applications' deployments.
          applications: 10,
          cards: 3,
          basePort: options.cardBytesPort,
          log,
        }),
      );
    }
  }

  if (options.only.has('release')) {
    // The backend's defaults: the deploy poll (completion and rollback wait on it) and the
    // reconcile interval (the abort's budget).
    const defaults = readFleetConfig(new ConfigReader({}), {});
    log(
      '\n== progressive release: 4 waves, 3 weight steps, 2 s pauses, analysis every 1 s; then an abort in wave 3',
    );
    for (const database of options.releaseDatabases) {
      results.release.push(
        await benchRelease({
          database,
          clusters: options.releaseClusters,
          readyDelayMs: options.releaseReady,
          tickMs: 500,
          pollIntervalMs: defaults.deploy.pollIntervalMs,
          reconcileIntervalMs: defaults.reconcile.intervalMs,
          abort: true,
          log,
        }),
      );
    }
  }

  if (options.only.has('manifests')) {
    log(
      `\n== a component's own manifests (50 objects) vs the generated workload (3), ${
        options.manifestsClusters
      } clusters over HTTPS: ${[
        options.manifestsConcurrency.length
          ? `ObjectSetApplier and ManifestApplier, ${options.manifestsConcurrency.join(
              ' then ',
            )} at a time`
          : '',
        options.manifestsDeploy
          ? `DeploymentService.deploy() and preview(), ${options.manifestsDeploy} at a time`
          : '',
      ]
        .filter(Boolean)
        .join('; ')}`,
    );
    results.manifests = await benchManifests({
      clusters: options.manifestsClusters,
      concurrencies: options.manifestsConcurrency,
      deployConcurrency: options.manifestsDeploy,
      log,
    });
  }

  if (options.only.has('judgment')) {
    log(
      `\n== a canary judged against its baseline: one step on ${options.judgmentClusters} clusters, query_range reads and Mann-Whitney judgments`,
    );
    results.judgment = await benchJudgment({
      clusters: options.judgmentClusters,
      points: options.judgmentPoints,
      concurrency: 16,
      log,
    });
  }

  if (options.only.has('memory')) {
    log(
      `\n== memory: Fleet against the same backend without Fleet, ${
        options.memoryClusters
      } clusters × ${options.memoryClusters * 10} deployments (PostgreSQL)`,
    );
    results.memory = await benchMemory({
      clusters: options.memoryClusters,
      deploymentsPerCluster: 10,
      requests: options.memoryRequests,
      runs: Math.max(1, options.memoryRuns),
      baseline: options.memoryBaseline,
      heapSnapshotDir: options.memorySnapshots,
      log,
    });
  }

  if (options.only.has('shards')) {
    log(
      `\n== health cycle across ${options.shardsReplicas} replicas: ${options.shardsClusters} clusters, 10 % timing out (probe timeout 2 s), fleet.health.shards ${options.shardsCount}, shardLease ${options.shardsLease} s, interval ${options.shardsInterval} s, concurrency ${options.shardsConcurrency} (PostgreSQL)`,
    );
    results.shards = await benchShards({
      clusters: options.shardsClusters,
      downFraction: 0.1,
      replicas: options.shardsReplicas,
      shards: options.shardsCount,
      leaseMs: options.shardsLease * 1000,
      intervalMs: options.shardsInterval * 1000,
      probeTimeoutMs: 2_000,
      concurrency: options.shardsConcurrency,
      measuredPairs: options.shardsCycles,
      basePort: options.shardsPort,
      watch: options.shardsWatch,
      log,
    });
  }

  if (options.only.has('peer')) {
    log(
      `\n== Fleet's card beside the Kubernetes plugin (one backend, PostgreSQL): one component on each of ${options.peerClusters} clusters, one page view at a time, alternating, each bounded to ${options.peerBound} s`,
    );
    results.peer = await benchPeer({
      clusters: options.peerClusters,
      requests: options.peerRequests,
      faultRequests: options.peerFaultRequests,
      boundMs: options.peerBound * 1000,
      hangingFraction: 0.1,
      basePort: options.peerPort,
      log,
    });
  }

  // ------------------------------------------------------------------ summary
  log(
    `\n== summary (${new Date().toISOString()}; load average at the end ${
      machineLine().split('load average ')[1]
    })`,
  );
  if (results.cycle.length) {
    const rows: string[][] = [];
    for (const r of results.cycle) {
      for (const f of r.fleet) {
        rows.push([
          String(r.n),
          String(r.down),
          String(f.concurrency),
          `${ms(f.medianMs)} (${f.runs.length})`,
          `${ms(f.boundMs)}`,
          `${f.withinBound.toFixed(2)}×`,
          `${ms(r.baseline.medianMs)} (${r.baseline.runs.length})`,
          `${(r.baseline.medianMs / f.medianMs).toFixed(1)}×`,
          ms(r.rttMs),
        ]);
      }
    }
    for (const r of results.cycle) {
      if (r.cold) {
        rows.push([
          String(r.n),
          String(r.down),
          `${r.cold.concurrency}, cold connections`,
          `${ms(r.cold.medianMs)} (${r.cold.runs.length})`,
          ms(r.cold.boundMs),
          `${(r.cold.medianMs / r.cold.boundMs).toFixed(2)}×`,
          `${ms(r.baseline.medianMs)} (${r.baseline.runs.length})`,
          `${(r.baseline.medianMs / r.cold.medianMs).toFixed(1)}×`,
          ms(r.cold.rttMs),
        ]);
      }
    }
    log(
      table(
        [
          'N',
          'timing out',
          'concurrency',
          'Fleet cycle median (runs)',
          'bound',
          'Fleet / bound',
          'sequential baseline median (runs)',
          'speed-up',
          'probe RTT',
        ],
        rows,
      ),
    );
  }
  if (results.statements.length) {
    log(
      table(
        [
          'N',
          'no change (median of 3)',
          'per cluster',
          '10 % fail once',
          '10 % go OFFLINE',
          'per cluster',
          'they recover',
        ],
        results.statements.map(s => [
          String(s.n),
          String(medianTotal(s.noChange)),
          (medianTotal(s.noChange) / s.n).toFixed(2),
          String(s.grace.total),
          String(s.goOffline.total),
          (s.goOffline.total / s.n).toFixed(2),
          String(s.recover.total),
        ]),
      ),
    );
  }
  for (const l of results.latency) {
    log(
      `GET /deployments?entityRef= at ${l.clusters} clusters × ${
        l.deployments
      } deployments, ${l.clients} clients, ${l.runs.length} runs of ${
        l.requestsPerRun
      } [${conditionsLine(l.conditions)}]: p95 over the measure's ${
        l.overall.requests
      } requests ${ms(l.overall.p95)} (p99 ${ms(
        l.overall.p99,
      )}); the runs' median p50 ${ms(l.median.p50)}, p95 ${ms(
        l.median.p95,
      )}, p99 ${ms(l.median.p99)}, worst run's p95 ${ms(l.worstP95)}` +
        ` (node:http load generator, gzip, no HTTP cache); with Node's fetch as the load generator p95 ${ms(
          l.fetchClientRun.p95,
        )}; browsers revalidating (304) p95 ${ms(l.browserRun.p95)}` +
        (l.duringCycle
          ? `; during a health cycle p95 ${ms(l.duringCycle.p95)}`
          : '') +
        (l.duringReconcile
          ? `; during the reconcile run p95 ${ms(l.duringReconcile.p95)}`
          : '') +
        (l.reconcileEnded
          ? `; the first reconcile run took ${ms(l.reconcileMs)}`
          : `; the first reconcile run had not ended after ${ms(
              l.reconcileMs,
            )} (${l.reconcileCompared} of ${
              l.deployments
            } deployments compared)${
              l.conditions.restarted
                ? ': the measured runs are on a restarted backend'
                : ''
            }`) +
        `; backend peak RSS ${l.peakMiB.toFixed(
          0,
        )} MiB (the same backend without Fleet: ${l.controlMiB.toFixed(
          0,
        )} MiB); 1-minute load average at the end of the measured runs ${l.runs
          .map(r => r.load.split(' ')[0])
          .join(' / ')}`,
    );
  }
  for (const r of results.release) {
    const a = r.abort;
    log(
      `progressive release, ${r.database}, ${
        r.clusters
      } clusters in waves of ${r.waves.join(
        ' / ',
      )}: orchestration delay per step p50 ${ms(r.all.p50)}, p95 ${ms(
        r.all.p95,
      )}, max ${ms(r.all.max)} (${
        r.all.count
      } transitions; per wave and step, the slowest cluster: p95 ${ms(
        r.perWaveStep.p95,
      )}) — target p95 <= 1 s: ${
        r.all.p95 <= 1000 ? 'holds' : 'MISSED'
      }; release ${ms(r.wallMs)}` +
        (a
          ? `; abort in wave 3: ${a.touched} clusters back in ${ms(
              a.allBackMs,
            )} (budget ${ms(a.budgetMs)}: ${
              a.allBackMs <= a.budgetMs ? 'holds' : 'MISSED'
            })`
          : ''),
    );
  }
  if (results.manifests) {
    if (results.manifests.rounds.length) {
      log(
        `a component's own manifests (50 objects) vs the generated workload (3 objects), ${options.manifestsClusters} clusters, time per cluster (each cluster's apply or preview, start to end):`,
      );
      log(
        table(
          MANIFESTS_TABLE_HEADER,
          manifestsTableRows(results.manifests.rounds),
        ),
      );
    }
    if (results.manifests.deploy)
      log(manifestsDeploySummary(results.manifests.deploy));
  }
  if (options.only.has('drift')) {
    log(
      '\n== drift detection: watches vs polling (fleet.reconcile.watch false, today), PostgreSQL, 10 deployments per cluster',
    );
    for (const size of options.driftSizes) {
      log(`\n-- ${size} deployments on ${Math.ceil(size / 10)} clusters`);
      results.drift.push(
        await benchDrift({
          clusters: Math.ceil(size / 10),
          deploymentsPerCluster: 10,
          latencySamples: options.driftSamples,
          steadySeconds: options.driftSteady,
          settleSeconds: options.driftSettle,
          modes: options.driftModes,
          baseline: options.driftBaseline,
          profileDir: options.driftProfile,
          basePort: options.driftPort,
          healthIntervalMs: options.driftHealthInterval * 1000,
          log,
        }),
      );
    }
    log('\n== drift detection summary');
    log(
      table(
        [
          'deployments',
          'mode',
          'first run',
          "drift → backend's OUT_OF_SYNC event: p50",
          'p95',
          'max',
          'changes',
          'health cycle',
          'steady CPU',
          'in the window',
          '100 changes: time',
          'CPU',
        ],
        results.drift.flatMap(r =>
          r.modes.map(m => [
            String(r.deployments),
            `${m.mode === 'watch' ? 'watches' : 'polling (today)'}${
              options.driftBaseline
                ? m.code === 'this'
                  ? ', this code'
                  : ', baseline'
                : ''
            }`,
            ms(m.firstRunMs),
            ms(m.p50),
            ms(m.p95),
            ms(m.max),
            `${m.latencies.length}${
              m.noEvent ? ` (${m.noEvent} no event)` : ''
            }`,
            m.healthIntervalMs >= 3_600_000
              ? 'every hour'
              : `every ${m.healthIntervalMs / 1000} s`,
            `${m.steadyCpuPct.toFixed(1)} % (${m.steadyWindowS.toFixed(0)} s)`,
            activityLine(m.steadyActivity),
            ms(m.hundredMs),
            `${m.hundredCpuS.toFixed(2)} s`,
          ]),
        ),
      ),
    );
  }
  if (results.memory) log(memorySummary(results.memory));
  if (results.shards) log(shardsSummary(results.shards));
  if (results.peer) log(peerSummary(results.peer));
  if (options.json) {
    writeFileSync(options.json, `${JSON.stringify(results, null, 2)}\n`);
    log(`figures written to ${options.json}`);
  }
  return 0;
}

runMain(main, 90 * 60_000);
