/*
 * What judging a canary against its baseline costs per step over a fleet: for every cluster of
 * a wave, each compared template read twice with `GET /api/v1/query_range` (canary and
 * baseline, Fleet's `queryRange`: allow-list, timeout, refused redirects, size bound), then each
 * metric judged with the Mann-Whitney U test (`judgeMetric`) and the step scored
 * (`scoreJudgment`), as `orchestrator/judging.ts` does on each judged cluster of a tick. The
 * Prometheus is the kube simulator's, in this process, answering series drawn from normal
 * distributions (the canary 30 % slower on latency, equal on the others), so the ranks are real
 * work. Measured: queries, wall time of the whole wave at the orchestrator's fan-out (16
 * clusters at once), the CPU of this process split into judging (exact: it is synchronous) and
 * the rest, reading (Fleet's HTTP client and JSON, and the simulated Prometheus answering, which
 * runs in this process), and the samples read. Not measured: the baseline Deployment's upkeep (one apply per tick, as the
 * canary's), the database write of the judgment.
 */
import pLimit from 'p-limit';
import { KubeSimulator } from '@cnp/kube-simulator';
import type { AnalysisTemplate } from '@cnp/plugin-fleet-common';
import {
  judgeMetric,
  queryRange,
  rangeWindow,
  scoreJudgment,
} from './lib/judgmentParts';

export interface JudgmentRunResult {
  clusters: number;
  templates: number;
  pointsPerSide: number;
  concurrency: number;
  queries: number;
  wallMs: number;
  readCpuMsPerCluster: number;
  judgeCpuMsPerCluster: number;
  bytesPerCluster: number;
  verdicts: Record<string, number>;
}

const TEMPLATES: Array<{ name: string; query: string; direction: string }> = [
  {
    name: 'latency-p99',
    query:
      'histogram_quantile(0.99, sum(rate(http_request_duration_seconds_bucket{app="{{app}}",cluster="{{cluster}}",variant="{{variant}}",metric="latency"}[1m])) by (le))',
    direction: 'increase',
  },
  {
    name: 'success-rate',
    query:
      'sum(rate(http_requests_total{app="{{app}}",cluster="{{cluster}}",variant="{{variant}}",metric="success"}[1m]))',
    direction: 'decrease',
  },
  {
    name: 'cpu',
    query:
      'sum(rate(container_cpu_usage_seconds_total{app="{{app}}",cluster="{{cluster}}",variant="{{variant}}",metric="cpu"}[1m]))',
    direction: 'increase',
  },
];

const cpuMs = (from: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1000;
};

/** One judged step on `clusters` clusters, `points` samples per side and template. */
export async function benchJudgment(options: {
  clusters: number;
  points: number;
  concurrency: number;
  log: (line: string) => void;
}): Promise<JudgmentRunResult> {
  const { clusters, points, concurrency } = options;
  const sim = await KubeSimulator.start({ clusters: 1, prometheus: true });
  try {
    const address = sim.prometheusUrl!;
    const distributions: Record<string, [number, number]> = {
      'metric="latency",variant="canary"': [0.13, 0.01],
      'metric="latency",variant="baseline"': [0.1, 0.01],
      'metric="success",variant="canary"': [0.995, 0.002],
      'metric="success",variant="baseline"': [0.995, 0.002],
      'metric="cpu",variant="canary"': [0.25, 0.03],
      'metric="cpu",variant="baseline"': [0.25, 0.03],
    };
    let seed = 1;
    for (const [match, [mean, sd]] of Object.entries(distributions)) {
      sim.setPrometheusRule(match, {
        distribution: { kind: 'normal', mean, sd },
        seed: seed++,
      });
    }
    const templates = TEMPLATES.map(
      t =>
        ({
          name: t.name,
          interval: '15s',
          compare: { baseline: true, direction: t.direction, minSamples: 30 },
          provider: { prometheus: { address, query: t.query } },
        } as unknown as AnalysisTemplate),
    );
    const endMs = Date.now();
    const window = rangeWindow(templates[0], endMs - points * 15_000, endMs);
    let queries = 0;
    let bytes = 0;
    let judgeCpu = 0;
    const verdicts: Record<string, number> = {};
    const limit = pLimit(concurrency);
    const started = performance.now();
    const cpuStart = process.cpuUsage();
    await Promise.all(
      Array.from({ length: clusters }, (_, i) =>
        limit(async () => {
          const context = {
            cluster: `c${i}`,
            app: 'payments',
            namespace: 'payments',
            revision: 2,
            version: '1.6.0',
          };
          const sides = await Promise.all(
            templates.map(async tp => {
              const [canary, baseline] = await Promise.all(
                (['canary', 'baseline'] as const).map(v =>
                  queryRange(tp, v, context, window, { timeoutMs: 10_000 }),
                ),
              );
              queries += 2;
              return { tp, canary, baseline };
            }),
          );
          const judgeStart = process.cpuUsage();
          const metrics = sides.map(({ tp, canary, baseline }) => {
            const values = (r: typeof canary) =>
              r.kind === 'values' ? r.values : [];
            bytes += 2 * 24 * values(canary).length;
            const judged = judgeMetric({
              canary: values(canary),
              baseline: values(baseline),
              direction: tp.compare!.direction,
              alpha: 0.05,
              minSamples: 30,
            });
            return { weight: 1, result: judged.result };
          });
          const { verdict } = scoreJudgment(metrics, {});
          judgeCpu += cpuMs(judgeStart);
          verdicts[verdict] = (verdicts[verdict] ?? 0) + 1;
        }),
      ),
    );
    const wallMs = performance.now() - started;
    // The judging is synchronous, so its own CPU is exact; the rest is the reads: Fleet's HTTP
    // client and JSON, and the simulator's Prometheus answering them (in this process).
    const readCpu = cpuMs(cpuStart) - judgeCpu;
    const result: JudgmentRunResult = {
      clusters,
      templates: templates.length,
      pointsPerSide: points,
      concurrency,
      queries,
      wallMs,
      readCpuMsPerCluster: readCpu / clusters,
      judgeCpuMsPerCluster: judgeCpu / clusters,
      bytesPerCluster: bytes / clusters,
      verdicts,
    };
    options.log(
      `${clusters} clusters x ${
        templates.length
      } templates x ${points} points a side, ${concurrency} at a time: ${queries} query_range reads in ${wallMs.toFixed(
        0,
      )} ms; per cluster: reads ${result.readCpuMsPerCluster.toFixed(
        2,
      )} ms CPU (with the simulated Prometheus' answers), judging ${result.judgeCpuMsPerCluster.toFixed(
        2,
      )} ms CPU, ~${Math.round(
        result.bytesPerCluster / 1024,
      )} KiB of samples; verdicts ${JSON.stringify(verdicts)}`,
    );
    return result;
  } finally {
    await sim.stop();
  }
}
