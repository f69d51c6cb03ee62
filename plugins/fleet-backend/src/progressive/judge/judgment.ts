import type {
  CanaryMetricResult,
  CanaryVerdict,
  CompareDirection,
} from '@cnp/plugin-fleet-common';
import { median } from 'simple-statistics';
import { mannWhitneyU } from './mannWhitney';
import { serialCorrelation, varianceInflation } from './serialCorrelation';

// The directions, results and verdicts are the API spec's (CompareDirection, CanaryMetricResult,
// CanaryVerdict): `increase` fails a rise, `decrease` a fall, `either` both; a metric is `Pass`,
// `High` or `Low` (significantly above or below the baseline, in a bad direction) or `NoData`
// (too few samples on a side); a step's verdict is `Pass` (go on), `Marginal` (pause for a
// human) or `Fail`.

/** The significance level a metric is judged at unless its template says otherwise. */
export const DEFAULT_ALPHA = 0.05;
/** The samples each side needs, unless the template says otherwise, before it is judged. */
export const DEFAULT_MIN_SAMPLES = 30;
/** The scores a step passes at, and under which it fails, unless the strategy says otherwise. */
export const DEFAULT_JUDGE = { pass: 95, marginal: 75 } as const;

/**
 * The level one judgment is taken at, out of a release's `alpha`: shared by the `family` of
 * sequences of tests the release takes (each compared template on each step of each cluster),
 * and within one sequence spent over its looks, the `look`-th (from 1) at 6 / (pi^2 look^2) of
 * its share. The shares of every look sum to 1 (the sum of 1 / k^2 is pi^2 / 6): a union bound,
 * so with independent points a canary no different from its baseline fails a release at most
 * `alpha` of the time however often its steps are looked at, where a fixed level at every look
 * fails it more the longer a step is watched.
 */
export function lookAlpha(alpha: number, look = 1, family = 1): number {
  const k = Math.max(1, Math.floor(look));
  return (alpha / Math.max(1, family)) * (6 / (Math.PI * Math.PI * k * k));
}

/** A metric's samples and how to judge them. */
export interface MetricSamples {
  /** The canary's samples, in time order. */
  canary: readonly number[];
  /** The baseline's samples, in time order. */
  baseline: readonly number[];
  direction: CompareDirection;
  /** The release's significance level (see `lookAlpha`); 0.05 without one. */
  alpha?: number;
  minSamples?: number;
  /** This judgment's place among its step's on its cluster, from 1 (the default). */
  look?: number;
  /** The sequences of tests the release's `alpha` is shared by (default 1). */
  family?: number;
}

/** One metric judged. Medians, U and p are null when it was not (`NoData`). */
export interface MetricJudgment {
  result: CanaryMetricResult;
  canaryMedian: number | null;
  baselineMedian: number | null;
  /** U of the canary against the baseline (R's W with the canary as x). */
  u: number | null;
  /** The two-sided p-value, the series' serial correlation accounted for. */
  p: number | null;
  /** The level p was held against at this look (see `lookAlpha`). */
  alpha: number | null;
  /** The baseline series' serial correlation the test counted (see `serialCorrelation.ts`). */
  serialCorrelation: number | null;
  /** The samples counted: finite values only. */
  canarySamples: number;
  baselineSamples: number;
}

/**
 * Judges one metric of the canary against the baseline with the two-sided Mann-Whitney U test.
 *
 * Values that are not finite numbers (Prometheus's NaN, +Inf) are dropped first. With fewer than
 * `minSamples` values on either side the result is `NoData`. Otherwise the test's variance is
 * widened by the baseline series' serial correlation (the baseline's: the stable version's
 * series says what the query's overlapping windows cost, where a canary drifting away would
 * pass its drift for correlation), and the metric is `High` (or `Low`) when p is under this
 * look's level (`lookAlpha`), the canary's median is above (below) the baseline's and
 * the direction makes that bad: `increase` fails an increase only, `decrease` a decrease only,
 * `either` both. A significant change the other way is a `Pass`. When the medians are equal but
 * the distributions differ significantly, the side of the ranks (U above or below half of
 * n_canary n_baseline) says which way the canary moved.
 *
 * The test makes no assumption of normal distributions and ranks are not moved by an outlier,
 * which suits latencies and error ratios (Kayenta judges canaries the same way).
 */
export function judgeMetric(samples: MetricSamples): MetricJudgment {
  const canary = samples.canary.filter(Number.isFinite);
  const baseline = samples.baseline.filter(Number.isFinite);
  const alpha = lookAlpha(
    samples.alpha ?? DEFAULT_ALPHA,
    samples.look,
    samples.family,
  );
  const minSamples = Math.max(1, samples.minSamples ?? DEFAULT_MIN_SAMPLES);
  const counts = {
    canarySamples: canary.length,
    baselineSamples: baseline.length,
  };
  if (canary.length < minSamples || baseline.length < minSamples) {
    return {
      result: 'NoData',
      canaryMedian: null,
      baselineMedian: null,
      u: null,
      p: null,
      alpha: null,
      serialCorrelation: null,
      ...counts,
    };
  }
  const correlation = serialCorrelation(baseline);
  const { u, p } = mannWhitneyU(canary, baseline, {
    varianceInflation: varianceInflation(correlation),
  });
  const canaryMedian = median(canary);
  const baselineMedian = median(baseline);
  let moved: 'up' | 'down' | undefined;
  if (p < alpha) {
    const half = (canary.length * baseline.length) / 2;
    const byMedian = Math.sign(canaryMedian - baselineMedian);
    const sign = byMedian !== 0 ? byMedian : Math.sign(u - half);
    if (sign > 0) moved = 'up';
    if (sign < 0) moved = 'down';
  }
  let result: CanaryMetricResult = 'Pass';
  if (moved === 'up' && samples.direction !== 'decrease') result = 'High';
  if (moved === 'down' && samples.direction !== 'increase') result = 'Low';
  return {
    result,
    canaryMedian,
    baselineMedian,
    u,
    p,
    alpha,
    serialCorrelation: correlation,
    ...counts,
  };
}

/** A judged metric as the score counts it: its result and its template's weight (default 1). */
export interface WeightedResult {
  result: CanaryMetricResult;
  weight?: number;
}

/**
 * The release's score at a step: the weighted share, 0 to 100, of the metrics that passed, and
 * the verdict it gives: under `marginal` a `Fail`, under `pass` a `Marginal` (a human decides),
 * else a `Pass`.
 *
 * A `NoData` metric counts as not passing: a canary is promoted on evidence that it is healthy,
 * and a metric that could not be measured gives none. With no metric at all the score is 0 for
 * the same reason. A weight that is not a positive finite number is a RangeError (the strategy's
 * validation refuses one before it gets here).
 */
export function scoreJudgment(
  metrics: readonly WeightedResult[],
  judge: { pass?: number; marginal?: number } = {},
): { score: number; verdict: CanaryVerdict } {
  const pass = judge.pass ?? DEFAULT_JUDGE.pass;
  const marginal = judge.marginal ?? DEFAULT_JUDGE.marginal;
  let total = 0;
  let passed = 0;
  for (const metric of metrics) {
    const weight = metric.weight ?? 1;
    if (!(Number.isFinite(weight) && weight > 0)) {
      throw new RangeError(`a metric's weight must be above 0, not ${weight}`);
    }
    total += weight;
    if (metric.result === 'Pass') passed += weight;
  }
  const score = total > 0 ? Math.min(100, (100 * passed) / total) : 0;
  let verdict: CanaryVerdict = 'Pass';
  if (score < pass) verdict = 'Marginal';
  if (score < marginal) verdict = 'Fail';
  return { score, verdict };
}
