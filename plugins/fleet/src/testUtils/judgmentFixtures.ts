import type { CanaryJudgment, Release } from '@cnp/plugin-fleet-common';
import { progressiveRelease } from './fixtures';

type Metric = CanaryJudgment['metrics'][number];

/** A metric judged with 40 samples a side, unless told. */
function metric(extra: Partial<Metric> & Pick<Metric, 'template'>): Metric {
  return {
    result: 'Pass',
    canaryMedian: 100,
    baselineMedian: 100,
    u: 800,
    p: 1,
    canarySamples: 40,
    baselineSamples: 40,
    weight: 1,
    ...extra,
  };
}

/**
 * The progressive release with sim-1 judged twice: step 1 passed (score 100); step 2, a minute
 * later, is Marginal (score 67): latency-p99 30 % above its baseline (High, p < 0.001),
 * error-rate level (Pass, weight 4), cpu without enough canary samples (NoData).
 */
export function judgedRelease(extra: Partial<Release> = {}): Release {
  const base = progressiveRelease(extra);
  const minute = 60_000;
  const judgments: CanaryJudgment[] = [
    {
      at: new Date(Date.now() - 2 * minute).toISOString(),
      cluster: 'sim-1',
      stepIndex: 0,
      score: 100,
      verdict: 'Pass',
      metrics: [
        metric({ template: 'latency-p99', canaryMedian: 95, p: 0.2 }),
        metric({ template: 'error-rate', weight: 4, p: 0.9 }),
        metric({ template: 'cpu', canaryMedian: 0.5, baselineMedian: 0.5 }),
      ],
    },
    {
      at: new Date(Date.now() - minute).toISOString(),
      cluster: 'sim-1',
      stepIndex: 1,
      score: 200 / 3,
      verdict: 'Marginal',
      metrics: [
        metric({
          template: 'latency-p99',
          result: 'High',
          canaryMedian: 130,
          baselineMedian: 100,
          u: 1450,
          p: 0.00004,
          alpha: 0.0304,
          serialCorrelation: 0.42,
        }),
        metric({
          template: 'error-rate',
          canaryMedian: 0.0102,
          baselineMedian: 0.0101,
          u: 850,
          p: 0.41234,
          weight: 4,
        }),
        metric({
          template: 'cpu',
          result: 'NoData',
          canaryMedian: null,
          baselineMedian: null,
          u: null,
          p: null,
          canarySamples: 12,
        }),
      ],
    },
  ];
  return { ...base, progress: { ...base.progress!, judgments } };
}
