/*
 * One health cycle over N simulated clusters of which 10 % time out: Fleet's HealthWorker
 * (bounded concurrency) against the sequential baseline (bench/lib/sequentialBaseline.ts), on
 * PostgreSQL, in the same run. Also counts the statements of each cycle.
 */
import {
  createFleet,
  createTempDatabase,
  loadAverage,
  machineCpu,
  median,
  ms,
  type ProbeFn,
  startSimProcess,
  statementCounter,
} from '@cnp/fleet-harness';
import { sequentialBaselineCycle } from './lib/sequentialBaseline';

export interface CycleRun {
  totalMs: number;
  discoveryMs: number;
  probePhaseMs: number;
  afterProbesMs: number;
  statements: number;
  load: string;
  /** CPU seconds used by the prober process (Fleet: discovery, probes, knex) during the cycle. */
  proberCpuS: number;
  /** CPU seconds used by the simulator process (the 1,000 simulated API servers). */
  simulatorCpuS: number;
  /** How busy the whole machine was during the cycle (all processes, all cores), in %. */
  machineBusyPct: number;
}

export interface CycleSizeResult {
  n: number;
  down: number;
  probeTimeoutMs: number;
  simStartMs: number;
  simRssMiB: number;
  firstCycleMs: number;
  rttMs: number;
  fleet: Array<{
    concurrency: number;
    runs: CycleRun[];
    medianMs: number;
    boundMs: number;
    withinBound: number;
  }>;
  baseline: { runs: CycleRun[]; medianMs: number };
  /**
   * Fleet with every pooled connection closed before each cycle: what a cycle costs when the
   * health interval is longer than the clients' 30 s idle timeout (the default interval is 300 s).
   * The other runs go back to back, so they reuse the connections of the cycle before.
   */
  cold?: {
    concurrency: number;
    runs: CycleRun[];
    medianMs: number;
    boundMs: number;
    rttMs: number;
  };
}

/** Wraps the probe to time the probe phase of a cycle (first probe start to last probe end). */
function probeTimer() {
  let first = Infinity;
  let last = 0;
  const wrap =
    (probe: ProbeFn): ProbeFn =>
    async (cluster, timeoutMs) => {
      const start = performance.now();
      first = Math.min(first, start);
      try {
        return await probe(cluster, timeoutMs);
      } finally {
        last = Math.max(last, performance.now());
      }
    };
  return {
    wrap,
    reset() {
      first = Infinity;
      last = 0;
    },
    span: () => ({ first, last }),
  };
}

export async function benchCycle(options: {
  n: number;
  concurrencies: number[];
  fleetRuns: number;
  baselineRuns: number;
  probeTimeoutMs: number;
  downFraction: number;
  /** Also measure cycles on cold connections at this concurrency. */
  coldConcurrency?: number;
  log: (line: string) => void;
}): Promise<CycleSizeResult> {
  const { n, log } = options;
  const db = await createTempDatabase('fleet_bench');
  const sim = await startSimProcess({ clusters: n });
  try {
    const knex = db.knex();
    const counter = statementCounter(knex);
    const timer = probeTimer();
    let discoveryMs = 0;
    const aroundDiscovery = async (run: () => Promise<void>) => {
      const t = performance.now();
      await run();
      discoveryMs = performance.now() - t;
    };
    const fleets = new Map<number, Awaited<ReturnType<typeof createFleet>>>();
    for (const concurrency of options.concurrencies) {
      fleets.set(
        concurrency,
        await createFleet({
          knex,
          kubeconfigDir: sim.kubeconfigDir,
          health: { probeTimeoutMs: options.probeTimeoutMs, concurrency },
          wrapProbe: timer.wrap,
          aroundDiscovery,
        }),
      );
    }
    const first = fleets.get(options.concurrencies[0])!;

    // Registration: the first cycle discovers and inserts every cluster, all healthy.
    let t = performance.now();
    const firstSummary = await first.worker.runCycle();
    const firstCycleMs = performance.now() - t;
    if (firstSummary.online !== n)
      throw new Error(`first cycle: ${firstSummary.online}/${n} ONLINE`);
    log(
      `  N=${n}: simulator started in ${ms(sim.startMs)} (${sim.rssMiB.toFixed(
        0,
      )} MiB RSS); first cycle (registers ${n} clusters) ${ms(firstCycleMs)}`,
    );

    // The probe round trip: one probe of a healthy cluster, warm client cache, nothing else
    // running; sampled before, between and after the measured cycles (median of the samples),
    // so that one busy moment of the machine does not set the bound.
    const clusters = await first.stores.clusters.listClusters();
    // 10 % of the fleet will time out (evenly spread: every 10th cluster).
    const step = Math.round(1 / options.downFraction);
    const downNames = sim.names.filter((_, i) => (i + 1) % step === 0);
    const down = new Set(downNames);
    const rttSamples: number[] = [];
    const sampleRtt = async () => {
      for (const cluster of clusters
        .filter(c => !down.has(c.name))
        .slice(0, 30)) {
        const t0 = performance.now();
        const outcome = await first.clients.probe(
          cluster,
          options.probeTimeoutMs,
        );
        if (outcome.kind === 'success') rttSamples.push(performance.now() - t0);
      }
    };
    await sampleRtt();

    await sim.setFault(downNames, { mode: 'timeout' });
    log(
      `  N=${n}: ${downNames.length} clusters now time out (probe timeout ${options.probeTimeoutMs} ms)`,
    );

    const measure = async (
      label: string,
      run: () => Promise<unknown>,
    ): Promise<CycleRun> => {
      timer.reset();
      discoveryMs = 0;
      const cpu0 = process.cpuUsage();
      const sim0 = await sim.cpuUsage();
      const machine0 = await machineCpu();
      counter.start();
      const start = performance.now();
      await run();
      const end = performance.now();
      const statements = counter.stop().total;
      const cpu1 = process.cpuUsage(cpu0);
      const sim1 = await sim.cpuUsage();
      const machine1 = await machineCpu();
      const span = timer.span();
      const result: CycleRun = {
        totalMs: end - start,
        discoveryMs,
        probePhaseMs: span.last - span.first,
        afterProbesMs: end - span.last,
        statements,
        load: loadAverage(),
        proberCpuS: (cpu1.user + cpu1.system) / 1e6,
        simulatorCpuS:
          (sim1.user - sim0.user + sim1.system - sim0.system) / 1e6,
        machineBusyPct:
          (100 * (machine1.busy - machine0.busy)) /
          Math.max(1, machine1.total - machine0.total),
      };
      log(
        `    ${label}: ${ms(result.totalMs)} (discovery ${ms(
          result.discoveryMs,
        )}, probes ${ms(result.probePhaseMs)}, after probes ${ms(
          result.afterProbesMs,
        )}; ${statements} statements; CPU: Fleet ${result.proberCpuS.toFixed(
          1,
        )} s, simulator ${result.simulatorCpuS.toFixed(
          1,
        )} s, machine ${result.machineBusyPct.toFixed(0)} % busy; load ${
          result.load
        })`,
      );
      return result;
    };

    const fleetRuns = new Map<number, CycleRun[]>();
    for (const concurrency of options.concurrencies) {
      const fleet = fleets.get(concurrency)!;
      // Warm-up: the worker's client cache, and the timed-out clusters' first failure.
      await measure(`Fleet c=${concurrency} warm-up (not counted)`, () =>
        fleet.worker.runCycle(),
      );
      const runs: CycleRun[] = [];
      for (let i = 0; i < options.fleetRuns; i++) {
        runs.push(
          await measure(
            `Fleet c=${concurrency} run ${i + 1}/${options.fleetRuns}`,
            () => fleet.worker.runCycle(),
          ),
        );
      }
      fleetRuns.set(concurrency, runs);
      await sampleRtt();
    }
    const rttMs = median(rttSamples);
    log(
      `  N=${n}: probe round trip ${ms(rttMs)} (median of ${
        rttSamples.length
      } sequential probes of healthy clusters, sampled before, between and after the runs)`,
    );
    const fleetResults: CycleSizeResult['fleet'] = options.concurrencies.map(
      concurrency => {
        const runs = fleetRuns.get(concurrency)!;
        const boundMs =
          Math.ceil(downNames.length / concurrency) * options.probeTimeoutMs +
          Math.ceil(n / concurrency) * rttMs;
        const medianMs = median(runs.map(r => r.totalMs));
        return {
          concurrency,
          runs,
          medianMs,
          boundMs,
          withinBound: medianMs / boundMs,
        };
      },
    );

    let cold: CycleSizeResult['cold'];
    if (options.coldConcurrency) {
      const concurrency = options.coldConcurrency;
      const fleet =
        fleets.get(concurrency) ??
        (await createFleet({
          knex,
          kubeconfigDir: sim.kubeconfigDir,
          health: { probeTimeoutMs: options.probeTimeoutMs, concurrency },
          wrapProbe: timer.wrap,
          aroundDiscovery,
        }));
      // The round trip of a probe on a new connection (TLS session resumed, as in such a cycle).
      const coldRtts: number[] = [];
      for (const cluster of clusters
        .filter(c => !down.has(c.name))
        .slice(0, 30)) {
        fleet.clients.closeIdleConnections();
        const t0 = performance.now();
        const outcome = await fleet.clients.probe(
          cluster,
          options.probeTimeoutMs,
        );
        if (outcome.kind === 'success') coldRtts.push(performance.now() - t0);
      }
      fleet.clients.closeIdleConnections();
      await measure(
        `Fleet c=${concurrency} cold connections warm-up (not counted)`,
        () => fleet.worker.runCycle(),
      );
      const runs: CycleRun[] = [];
      for (let i = 0; i < options.fleetRuns; i++) {
        fleet.clients.closeIdleConnections();
        runs.push(
          await measure(
            `Fleet c=${concurrency} cold connections run ${i + 1}/${
              options.fleetRuns
            }`,
            () => fleet.worker.runCycle(),
          ),
        );
      }
      const coldRtt = median(coldRtts);
      log(
        `  N=${n}: probe round trip on a new connection ${ms(
          coldRtt,
        )} (median of ${coldRtts.length})`,
      );
      cold = {
        concurrency,
        runs,
        medianMs: median(runs.map(r => r.totalMs)),
        rttMs: coldRtt,
        boundMs:
          Math.ceil(downNames.length / concurrency) * options.probeTimeoutMs +
          Math.ceil(n / concurrency) * coldRtt,
      };
    }

    const baselineRuns: CycleRun[] = [];
    for (let i = 0; i < options.baselineRuns; i++) {
      baselineRuns.push(
        await measure(
          `sequential baseline run ${i + 1}/${options.baselineRuns}`,
          () =>
            sequentialBaselineCycle({
              clusters: first.stores.clusters,
              probe: timer.wrap(first.clients.probe.bind(first.clients)),
              health: first.health,
              discover: () =>
                aroundDiscovery(async () => void (await first.discovery.run())),
            }),
        ),
      );
    }
    return {
      n,
      down: downNames.length,
      probeTimeoutMs: options.probeTimeoutMs,
      simStartMs: sim.startMs,
      simRssMiB: sim.rssMiB,
      firstCycleMs,
      rttMs,
      fleet: fleetResults,
      baseline: {
        runs: baselineRuns,
        medianMs: median(baselineRuns.map(r => r.totalMs)),
      },
      cold,
    };
  } finally {
    await sim.stop();
    await db.drop();
  }
}
