/*
 * A progressive release over 100 simulated clusters (1/3 serve Argo Rollouts, 2/3 are plain, so
 * the canary runs as a Rollout or as a canary Deployment), in 4 waves with 3 weight steps, run by
 * Fleet's own ReleaseOrchestrator ticking every 500 ms as the backend's scheduled task does. It
 * measures the orchestration's own delay at every step of every cluster (from the moment the
 * step's condition was met in the cluster to the moment Fleet acted on it), and then the time an
 * abort in the middle of wave 3 takes to put every touched cluster back on its previous revision.
 *
 * Times come from the simulator's write history (`sim.history()`, ms timestamps, same clock), the
 * simulator's readiness model (a write's new pods are available `readyDelayMs` after it) and the
 * release's progress as the orchestrator wrote it (its timed pauses' `pauseUntil`).
 */
import type {
  CanaryClusterProgress,
  Deployment,
  Release,
  ReleaseStrategy,
} from '@cnp/plugin-fleet-common';
import {
  createFleet,
  createTempDatabase,
  loadAverage,
  median,
  ms,
  percentile,
  runScoped,
  startSimulator,
} from '@cnp/fleet-harness';
import type { ReleaseProgress } from '@cnp/plugin-fleet-common';
import knexFactory, { type Knex } from 'knex';
import {
  builtInTrafficProviders,
  DeploymentService,
  ManifestApplier,
  ManifestRemover,
  ReleaseOrchestrator,
  ReleaseService,
  TrafficProviders,
} from './lib/releaseParts';

const ENTITY = 'component:default/payments';
const APP = 'payments';
const CANARY = 'payments-canary';
const NAMESPACE = 'bench-release';
const IMAGES = [
  'registry.example/payments:1.0.0',
  'registry.example/payments:2.0.0',
  'registry.example/payments:3.0.0',
];
const ACTOR = 'user:default/bench';
const PAUSE_MS = 2_000;

export type ReleaseDatabase = 'sqlite' | 'postgres';

export interface Transition {
  /** e.g. `pause 1 over -> weight 50 applied`. */
  kind: string;
  cluster: string;
  wave: number;
  /** When the step's condition was met in the cluster (epoch ms). */
  conditionAt: number;
  /** When Fleet acted on it (epoch ms). */
  appliedAt: number;
  delayMs: number;
}

export interface DelayStats {
  count: number;
  p50: number;
  p95: number;
  max: number;
}

export interface ReleaseRunResult {
  database: ReleaseDatabase;
  clusters: number;
  rolloutClusters: number;
  waves: number[];
  /** Pods' readiness delay: the smallest and largest of the clusters'. */
  readyDelayMs: [number, number];
  tickMs: number;
  pollIntervalMs: number;
  /** Release created to COMPLETED. */
  wallMs: number;
  ticks: DelayStats & { mean: number };
  transitions: Transition[];
  /** Every per-cluster step transition. */
  all: DelayStats;
  /** The same without the last one (new revision available -> DONE), which waits on the deploy poll. */
  allButDone: DelayStats;
  byKind: Array<{ kind: string } & DelayStats>;
  /** Per wave and kind, the slowest cluster of the wave (the step applied on EVERY cluster). */
  perWaveStep: DelayStats;
  /** Per cluster: time from its first write to DONE not spent in pauses or readiness waits. */
  overheadPerCluster: DelayStats;
  /** A plain deploy on one cluster: deploy() call to DEPLOYED (median of the samples). */
  plainDeploy: { applyMs: number; readyMs: number; samples: number };
  abort?: {
    touched: number;
    skipped: number;
    /** The clusters' states when the abort was asked. */
    statesAtAbort: Record<string, number>;
    /** Abort asked to the release's ROLLED_BACK. */
    rolledBackMs: number;
    /** Abort asked to every touched cluster DEPLOYED on the rollback revision, previous image live. */
    allBackMs: number;
    /** Abort asked to each cluster back, p50 / p95 / max. */
    perCluster: DelayStats;
    reconcileIntervalMs: number;
    budgetMs: number;
  };
  load: string;
}

function stats(values: number[]): DelayStats {
  if (!values.length) return { count: 0, p50: NaN, p95: NaN, max: NaN };
  return {
    count: values.length,
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    max: Math.max(...values),
  };
}

const sleep = (msToWait: number) =>
  new Promise(resolve => setTimeout(resolve, msToWait));

async function openDatabase(
  database: ReleaseDatabase,
): Promise<{ knex: Knex; close: () => Promise<void> }> {
  if (database === 'postgres') {
    const db = await createTempDatabase('fleet_bench');
    return { knex: db.knex(), close: () => db.drop() };
  }
  // What the backend gets from `backend.database.client: better-sqlite3` in memory: one
  // connection (an in-memory database lives in its connection), foreign keys on.
  const knex = knexFactory({
    client: 'better-sqlite3',
    connection: { filename: ':memory:' },
    useNullAsDefault: true,
    pool: { min: 1, max: 1 },
  });
  await knex.raw('PRAGMA foreign_keys = ON');
  return { knex, close: () => knex.destroy() };
}

function strategy(prometheusUrl: string): ReleaseStrategy {
  return {
    waves: [
      { percent: 10 },
      { percent: 40 },
      { percent: 70 },
      { percent: 100 },
    ],
    canary: {
      steps: [
        { setWeight: 20 },
        { pause: { duration: '2s' } },
        { setWeight: 50 },
        { pause: { duration: '2s' } },
        { setWeight: 100 },
      ],
      maxSurge: '25%',
      maxUnavailable: 0,
    },
    analysis: {
      templates: [
        {
          name: 'success-rate',
          interval: '1s',
          failureLimit: 1,
          successCondition: 'result[0] >= 0.995',
          provider: {
            prometheus: {
              address: prometheusUrl,
              query:
                'sum(rate(http_requests_total{app="{{app}}",cluster="{{cluster}}",revision="{{revision}}",code!~"5.."}[1m]))',
            },
          },
        },
      ],
    },
    rollback: { enabled: true, timeout: '5m' },
  };
}

export async function benchRelease(options: {
  database: ReleaseDatabase;
  clusters: number;
  /**
   * Pods become available this long after a write, spread evenly over the clusters from the
   * first to the second figure: real readiness is not a multiple of the tick, and a fixed delay
   * that is one (1 s with a 500 ms tick) lands every condition just after a tick started.
   */
  readyDelayMs: [number, number];
  tickMs: number;
  /** `fleet.deploy.pollInterval` (the backend's default: 2 s). */
  pollIntervalMs: number;
  /** `fleet.reconcile.interval` (the backend's default: 60 s), the abort's budget. */
  reconcileIntervalMs: number;
  abort: boolean;
  log: (line: string) => void;
}): Promise<ReleaseRunResult> {
  return runScoped(() => run(options));
}

async function run(options: Parameters<typeof benchRelease>[0]) {
  const { log, tickMs } = options;
  const names = Array.from(
    { length: options.clusters },
    (_, i) => `sim-${i + 1}`,
  );
  const [lo, hi] = options.readyDelayMs;
  // Spread, not in cluster order: (i × 37) mod N, so every wave gets slow and fast clusters.
  const readyDelay = new Map(
    names.map((n, i) => [
      n,
      Math.round(
        lo +
          ((hi - lo) * ((i * 37) % names.length)) /
            Math.max(1, names.length - 1),
      ),
    ]),
  );
  const readyDelayMs = (cluster: string) => readyDelay.get(cluster)!;
  // Every third cluster serves Argo Rollouts; the others serve no CRD (a canary Deployment).
  const rollout = new Set(names.filter((_, i) => i % 3 === 0));
  const sim = await startSimulator({
    clusters: names,
    readyDelayMs: lo,
    prometheus: true,
    crds: Object.fromEntries(
      names.map(n => [n, rollout.has(n) ? ['rollouts.argoproj.io'] : []]),
    ),
  });
  for (const n of names) sim.setReadiness(n, { readyDelayMs: readyDelayMs(n) });
  sim.setPrometheusRule({ app: APP }, 0.999);
  const db = await openDatabase(options.database);
  const fleet = await createFleet({
    knex: db.knex,
    kubeconfigDir: sim.kubeconfigDir,
    health: { concurrency: 64 },
  });
  const deployments = DeploymentService.create({
    stores: fleet.stores,
    applier: ManifestApplier.create({ clients: fleet.clients }),
    remover: ManifestRemover.create({ clients: fleet.clients }),
    logger: fleet.logger,
    deploy: {
      namespace: NAMESPACE,
      defaultReplicas: 5,
      progressDeadlineMs: 600_000,
      pollIntervalMs: options.pollIntervalMs,
    },
  });
  let ticking = false;
  let tickLoop: Promise<void> | undefined;
  try {
    const cycle = await fleet.worker.runCycle();
    if (cycle.online !== names.length)
      throw new Error(`${cycle.online}/${names.length} clusters ONLINE`);

    // Every cluster runs revision 1 first (a release with a strategy starts from what runs).
    const settle = async (ids: string[], timeoutMs = 120_000) => {
      const deadline = Date.now() + timeoutMs;
      const left = new Set(ids);
      const settled = new Map<string, Deployment>();
      while (left.size) {
        for (const id of [...left]) {
          const d = (await fleet.stores.deployments.getDeployment(id))!;
          if (d.status !== 'PENDING' && d.status !== 'PROGRESSING') {
            left.delete(id);
            settled.set(id, d);
          }
        }
        if (!left.size) break;
        if (Date.now() > deadline)
          throw new Error(`${left.size} deployments did not settle`);
        await sleep(100);
      }
      return settled;
    };
    const firstIds: string[] = [];
    for (let i = 0; i < names.length; i += 16) {
      const batch = await Promise.all(
        names
          .slice(i, i + 16)
          .map(cluster =>
            deployments.deploy(
              { entityRef: ENTITY, cluster, image: IMAGES[0], replicas: 5 },
              ACTOR,
            ),
          ),
      );
      firstIds.push(...batch.map(d => d.id));
    }
    const first = await settle(firstIds);
    const notDeployed = [...first.values()].filter(
      d => d.status !== 'DEPLOYED',
    );
    if (notDeployed.length)
      throw new Error(
        `${notDeployed.length} first deploys did not reach DEPLOYED`,
      );
    log(
      `  ${options.database}: ${names.length} clusters (${
        rollout.size
      } with Argo Rollouts, ${names.length - rollout.size} plain), ${
        IMAGES[0]
      } DEPLOYED on each; readiness ${lo}–${hi} ms, tick ${tickMs} ms, deploy poll ${
        options.pollIntervalMs
      } ms`,
    );

    // The reference: a plain deploy of another application on one cluster, deploy() to DEPLOYED.
    const apply: number[] = [];
    const ready: number[] = [];
    for (const cluster of names.slice(0, 5)) {
      const t0 = Date.now();
      const d = await deployments.deploy(
        {
          entityRef: 'component:default/reference',
          cluster,
          image: 'registry.example/reference:1.0.0',
          replicas: 5,
        },
        ACTOR,
      );
      apply.push(Date.now() - t0);
      const done = (await settle([d.id])).get(d.id)!;
      if (done.status !== 'DEPLOYED')
        throw new Error(`reference deploy ${done.status}`);
      ready.push(Date.now() - t0);
    }
    const plainDeploy = {
      applyMs: median(apply),
      readyMs: median(ready),
      samples: ready.length,
    };
    log(
      `  plain deploy on one cluster (median of ${ready.length}): apply ${ms(
        plainDeploy.applyMs,
      )}, deploy() to DEPLOYED ${ms(plainDeploy.readyMs)}`,
    );

    // The orchestrator as the plugin builds it; its progress writes are recorded (pauseUntil).
    const written: Array<{ at: number; progress: ReleaseProgress }> = [];
    const releasesStore = fleet.stores.releases;
    const orchestrator = ReleaseOrchestrator.create({
      stores: {
        ...fleet.stores,
        releases: {
          listActiveReleases: () => releasesStore.listActiveReleases(),
          getRelease: id => releasesStore.getRelease(id),
          updateProgress: async (id, version, progress, extra) => {
            const ok = await releasesStore.updateProgress(
              id,
              version,
              progress,
              extra,
            );
            if (ok)
              written.push({
                at: Date.now(),
                progress: structuredClone(progress),
              });
            return ok;
          },
        },
      },
      deployments,
      traffic: TrafficProviders.create({
        clients: fleet.clients,
        providers: builtInTrafficProviders(),
      }),
      logger: fleet.logger,
      defaultReplicas: 5,
      namespace: NAMESPACE,
      tickMs,
    });
    const releases = ReleaseService.create({
      stores: fleet.stores,
      deployments,
    });

    // The scheduled task: a tick every tickMs from the previous start, at once when one ran late
    // (what the scheduler's next run, greatest(previous + frequency, now), gives).
    const tickDurations: number[] = [];
    ticking = true;
    tickLoop = (async () => {
      let next = Date.now();
      while (ticking) {
        const start = Date.now();
        await orchestrator.tick();
        tickDurations.push(Date.now() - start);
        next = Math.max(next + tickMs, Date.now());
        await sleep(next - Date.now());
      }
    })();

    const application =
      (await fleet.stores.applications.getApplicationByEntityRef(ENTITY))!;
    const until = async (
      id: string,
      done: (r: Release) => boolean,
      timeoutMs: number,
    ): Promise<Release> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const release = await releases.getRelease(id);
        if (done(release)) return release;
        if (Date.now() > deadline)
          throw new Error(
            `release ${id} is still ${release.status}: ${JSON.stringify(
              release.progress?.clusters.filter(c => c.message).slice(0, 3),
            )}`,
          );
        await sleep(100);
      }
    };

    // ------------------------------------------------------------ the release, start to end
    const releaseStart = Date.now();
    const started = await releases.release(
      application.id,
      { image: IMAGES[1], strategy: strategy(sim.prometheusUrl!) },
      ACTOR,
    );
    const waves = started.progress!.waves;
    const done = await until(
      started.id,
      r => r.status !== 'PROGRESSING',
      600_000,
    );
    const wallMs = Date.now() - releaseStart;
    if (done.status !== 'COMPLETED')
      throw new Error(
        `release ended ${done.status}: ${done.progress?.abort?.message}`,
      );
    log(
      `  release over ${names.length} clusters in ${waves.length} waves (${waves
        .map(w => w.length)
        .join(' / ')}): COMPLETED in ${ms(wallMs)}; ${
        tickDurations.length
      } ticks, tick p50 ${ms(percentile(tickDurations, 50))} p95 ${ms(
        percentile(tickDurations, 95),
      )} max ${ms(Math.max(...tickDurations))}`,
    );

    const transitions = measureTransitions({
      sim,
      waves,
      clusters: done.progress!.clusters,
      written: written.filter(w => w.at >= releaseStart),
      releaseCreatedAt: Date.parse(started.createdAt),
      readyDelayMs,
    });
    const kinds = [...new Set(transitions.map(t => t.kind))];
    const byKind = kinds.map(kind => ({
      kind,
      ...stats(transitions.filter(t => t.kind === kind).map(t => t.delayMs)),
    }));
    const perWaveStep: number[] = [];
    for (let w = 0; w < waves.length; w++) {
      for (const kind of kinds) {
        const ds = transitions
          .filter(t => t.wave === w && t.kind === kind)
          .map(t => t.delayMs);
        if (ds.length) perWaveStep.push(Math.max(...ds));
      }
    }
    const overhead = names.map(cluster => {
      const own = transitions.filter(
        t => t.cluster === cluster && t.kind !== START,
      );
      return own.reduce((sum, t) => sum + t.delayMs, 0);
    });
    const result: ReleaseRunResult = {
      database: options.database,
      clusters: names.length,
      rolloutClusters: rollout.size,
      waves: waves.map(w => w.length),
      readyDelayMs: options.readyDelayMs,
      tickMs,
      pollIntervalMs: options.pollIntervalMs,
      wallMs,
      ticks: {
        ...stats(tickDurations),
        mean: tickDurations.reduce((a, b) => a + b, 0) / tickDurations.length,
      },
      transitions,
      all: stats(transitions.map(t => t.delayMs)),
      allButDone: stats(
        transitions.filter(t => t.kind !== DONE).map(t => t.delayMs),
      ),
      byKind,
      perWaveStep: stats(perWaveStep),
      overheadPerCluster: stats(overhead),
      plainDeploy,
      load: loadAverage(),
    };
    for (const k of byKind) {
      log(
        `    ${k.kind.padEnd(52)} n=${String(k.count).padStart(3)}  p50 ${ms(
          k.p50,
        )}  p95 ${ms(k.p95)}  max ${ms(k.max)}`,
      );
    }
    log(
      `    every step transition: n=${result.all.count} p50 ${ms(
        result.all.p50,
      )} p95 ${ms(result.all.p95)} max ${ms(
        result.all.max,
      )}; per wave and step, the slowest cluster: n=${
        result.perWaveStep.count
      } p95 ${ms(result.perWaveStep.p95)} max ${ms(
        result.perWaveStep.max,
      )}; without the DONE transition p95 ${ms(result.allButDone.p95)}; load ${
        result.load
      }`,
    );

    // ------------------------------------------------------------ abort in the middle of wave 3
    if (options.abort) {
      const second = await releases.release(
        application.id,
        { image: IMAGES[2], strategy: strategy(sim.prometheusUrl!) },
        ACTOR,
      );
      // The middle of wave 3: its clusters are past their first pause, on their way to 50 %.
      const mid = await until(
        second.id,
        r =>
          r.status !== 'PROGRESSING' ||
          (r.progress!.currentWave === 2 &&
            r.progress!.clusters.some(c => c.wave === 2 && c.stepIndex >= 2)),
        600_000,
      );
      if (mid.status !== 'PROGRESSING')
        throw new Error(`second release ended ${mid.status} before wave 3`);
      const abortAt = Date.now();
      const aborting = await releases.steer(second.id, 'abort', ACTOR);
      const statesAtAbort: Record<string, number> = {};
      for (const c of mid.progress!.clusters) {
        const key = `wave ${c.wave + 1} ${c.state}${
          c.state === 'RUNNING' ? ` step ${c.stepIndex + 1}` : ''
        }`;
        statesAtAbort[key] = (statesAtAbort[key] ?? 0) + 1;
      }
      const touched = aborting.progress!.clusters.filter(
        c => c.state === 'ROLLING_BACK' || c.state === 'ROLLBACK_PENDING',
      );
      const skipped = aborting.progress!.clusters.filter(
        c => c.state === 'SKIPPED',
      );
      // Back: the deployment DEPLOYED on a rollback revision of the previous image, and in the
      // cluster the Deployment on that image with its replicas available and no canary left.
      const backAt = new Map<string, number>();
      const isBack = async (c: CanaryClusterProgress) => {
        const d = await fleet.stores.deployments.getDeployment(c.deploymentId!);
        if (!d || d.status !== 'DEPLOYED' || d.image !== IMAGES[1])
          return false;
        if (d.revision <= (c.previousRevision ?? 0)) return false;
        const objects = sim
          .objects(c.cluster)
          .filter(o => (o.metadata as any).namespace === NAMESPACE);
        const live = objects.find(
          o => o.kind === 'Deployment' && (o.metadata as any).name === APP,
        ) as any;
        if (live?.spec.template.spec.containers[0].image !== IMAGES[1])
          return false;
        if ((live.status?.availableReplicas ?? 0) < live.spec.replicas)
          return false;
        return !objects.some(
          o =>
            o.kind === 'Rollout' ||
            ((o.kind === 'Deployment' || o.kind === 'Service') &&
              (o.metadata as any).name === CANARY),
        );
      };
      const deadline = abortAt + 600_000;
      while (backAt.size < touched.length) {
        for (const c of touched) {
          if (!backAt.has(c.cluster) && (await isBack(c)))
            backAt.set(c.cluster, Date.now());
        }
        if (Date.now() > deadline)
          throw new Error(`${touched.length - backAt.size} clusters not back`);
        await sleep(50);
      }
      const allBackMs = Math.max(...backAt.values()) - abortAt;
      const end = await until(
        second.id,
        r => r.status === 'ROLLED_BACK',
        600_000,
      );
      const events = await fleet.stores.events.listEvents({
        subjectKind: 'release',
        subject: second.id,
        limit: 20,
      });
      const rolledBack = events.find(
        e => e.reason === 'ABORTED' && e.to === 'ROLLED_BACK',
      );
      const rolledBackMs = rolledBack
        ? Date.parse(rolledBack.createdAt) - abortAt
        : Date.parse(end.progress!.updatedAt) - abortAt;
      // Wave 4 untouched.
      for (const c of skipped) {
        const writes = sim.history(c.cluster, { namespace: NAMESPACE });
        if (writes.some(h => Date.parse(h.at) >= Date.parse(second.createdAt)))
          throw new Error(`${c.cluster} (skipped) was written to`);
      }
      result.abort = {
        touched: touched.length,
        skipped: skipped.length,
        statesAtAbort,
        rolledBackMs,
        allBackMs,
        perCluster: stats([...backAt.values()].map(t => t - abortAt)),
        reconcileIntervalMs: options.reconcileIntervalMs,
        budgetMs: options.reconcileIntervalMs + plainDeploy.readyMs,
      };
      log(
        `  abort in wave 3 (${Object.entries(statesAtAbort)
          .map(([k, v]) => `${v} ${k}`)
          .join(', ')}): ${touched.length} touched clusters all back on ${
          IMAGES[1]
        } in ${ms(allBackMs)} (per cluster p50 ${ms(
          result.abort.perCluster.p50,
        )}, p95 ${ms(
          result.abort.perCluster.p95,
        )}); release ROLLED_BACK after ${ms(rolledBackMs)}; ${
          skipped.length
        } wave-4 clusters never written; budget (reconcile interval ${ms(
          options.reconcileIntervalMs,
        )} + plain deploy ${ms(plainDeploy.readyMs)}) ${ms(
          result.abort.budgetMs,
        )}`,
      );
    }
    return result;
  } finally {
    ticking = false;
    await tickLoop?.catch(() => undefined);
    await deployments.stop();
    fleet.clients.dispose?.();
    await db.close();
    await sim.stop();
  }
}

const START = 'wave started -> first write on the cluster';
const DONE = 'new revision available -> canary removed (DONE)';

/**
 * The step transitions of every cluster, from the simulator's write history (Fleet's writes; the
 * simulated controllers' own status updates are not in it) and the progress Fleet wrote.
 */
function measureTransitions(input: {
  sim: Awaited<ReturnType<typeof startSimulator>>;
  waves: string[][];
  clusters: CanaryClusterProgress[];
  written: Array<{ at: number; progress: ReleaseProgress }>;
  releaseCreatedAt: number;
  readyDelayMs: (cluster: string) => number;
}): Transition[] {
  const { sim, waves, written, readyDelayMs } = input;
  const out: Transition[] = [];
  const add = (
    kind: string,
    cluster: string,
    wave: number,
    conditionAt: number,
    appliedAt: number | undefined,
  ) => {
    if (appliedAt === undefined || !Number.isFinite(conditionAt))
      throw new Error(`${cluster}: no time for "${kind}"`);
    out.push({
      kind,
      cluster,
      wave,
      conditionAt,
      appliedAt,
      delayMs: appliedAt - conditionAt,
    });
  };
  const writesOf = (cluster: string) =>
    sim
      .history(cluster, { namespace: NAMESPACE })
      .map(h => ({ ...h, t: Date.parse(h.at) }))
      .filter(h => h.t >= input.releaseCreatedAt);
  const pauseUntil = (cluster: string, stepIndex: number) => {
    for (const w of written) {
      const c = w.progress.clusters.find(x => x.cluster === cluster);
      if (c?.stepIndex === stepIndex && c.pauseUntil)
        return Date.parse(c.pauseUntil);
    }
    return NaN;
  };
  let waveStart = input.releaseCreatedAt;
  for (let w = 0; w < waves.length; w++) {
    let waveEnd = 0;
    for (const cluster of waves[w]) {
      const mode = input.clusters.find(c => c.cluster === cluster)!.mode;
      const rd = readyDelayMs(cluster);
      const H = writesOf(cluster);
      if (!H.length) throw new Error(`${cluster}: no write`);
      waveEnd = Math.max(waveEnd, H[H.length - 1].t);
      add(START, cluster, w, waveStart, H[0].t);
      const isCanary = (h: (typeof H)[number]) =>
        h.verb !== 'delete' &&
        (h.kind === 'Rollout' ||
          (h.kind === 'Deployment' && h.name === CANARY));
      const lastBefore = (
        t: number,
        pick: (h: (typeof H)[number]) => boolean,
      ) => H.filter(h => h.t <= t && pick(h)).at(-1)?.t;
      const firstAfter = (
        t: number,
        pick: (h: (typeof H)[number]) => boolean = () => true,
      ) => H.find(h => h.t >= t && pick(h))?.t;
      if (mode === 'rollout') {
        // The Rollout is created on the stable revision; once it is available, Fleet moves the
        // Deployment's pods to it and starts the canary.
        const created = H.find(
          h => h.kind === 'Rollout' && h.verb === 'create',
        )!.t;
        add(
          'Rollout available -> canary started',
          cluster,
          w,
          created + rd,
          firstAfter(created + 1, h => !(h.verb === 'create')),
        );
      }
      const p1 = pauseUntil(cluster, 1);
      const p2 = pauseUntil(cluster, 3);
      add(
        'weight 20 % available -> pause 1 started',
        cluster,
        w,
        lastBefore(p1 - PAUSE_MS, isCanary)! + rd,
        p1 - PAUSE_MS,
      );
      add('pause 1 over -> weight 50 applied', cluster, w, p1, firstAfter(p1));
      add(
        'weight 50 % available -> pause 2 started',
        cluster,
        w,
        lastBefore(p2 - PAUSE_MS, isCanary)! + rd,
        p2 - PAUSE_MS,
      );
      add('pause 2 over -> weight 100 applied', cluster, w, p2, firstAfter(p2));
      if (mode === 'rollout') {
        // At 100 % the Rollout finishes on its own; then the stable Deployment takes the revision.
        const deployed = firstAfter(
          p2,
          h => h.kind === 'Deployment' && h.name === APP,
        );
        add(
          'Rollout at 100 % -> stable takes the revision',
          cluster,
          w,
          lastBefore(
            deployed! - 1,
            h => h.kind === 'Rollout' && h.verb !== 'delete',
          )! + rd,
          deployed,
        );
      }
      // The new revision on the stable Deployment available -> the canary removed (DONE).
      const cleanup = H.find(h => h.verb === 'delete')!.t;
      add(
        DONE,
        cluster,
        w,
        lastBefore(
          cleanup,
          h => h.kind === 'Deployment' && h.name === APP && h.verb !== 'delete',
        )! + rd,
        cleanup,
      );
    }
    waveStart = waveEnd;
  }
  return out;
}
