import { errorFunction, wilcoxonRankSum } from 'simple-statistics';

/**
 * Which difference the test looks for: `two-sided` any, `greater` x above y, `less` x below y.
 * The names are R's `alternative`.
 */
export type Alternative = 'two-sided' | 'greater' | 'less';

/** The outcome of a Mann-Whitney U test of x against y. */
export interface MannWhitneyResult {
  /** U of x (R's W): the pairs (xi, yj) with xi above yj, a tie counting one half. */
  u: number;
  /** The normal deviate, continuity-corrected unless asked otherwise; 0 when every value ties. */
  z: number;
  /** The p-value for the alternative asked. */
  p: number;
}

/**
 * The Mann-Whitney U test (Wilcoxon rank-sum) of x against y, with R's normal approximation:
 * what `wilcox.test(x, y, exact = FALSE, correct = TRUE)` computes (`correct: false` gives
 * `correct = FALSE`). Tied values take the average of their ranks, and the variance is reduced
 * for the ties:
 *
 *   U = R_x - n_x (n_x + 1) / 2, R_x the sum of x's ranks in the pooled sample
 *   sigma = sqrt(n_x n_y / 12 * ((N + 1) - sum(t^3 - t) / (N (N - 1)))), t each tie's size
 *   z = (U - n_x n_y / 2 - c) / sigma, c = sign(U - n_x n_y / 2) / 2 two-sided,
 *       1/2 for greater, -1/2 for less (0 without the correction)
 *   p = 2 min(Phi(z), 1 - Phi(z)) two-sided, 1 - Phi(z) greater, Phi(z) less
 *
 * One departure from R: when every value is the same, sigma is 0 and R's two-sided p is NaN;
 * here p is 1, as the samples show no difference at all.
 *
 * Phi comes from simple-statistics' `errorFunction` (relative error under 1.2e-7), not its
 * `cumulativeStdNormalProbability`, a table at steps of 0.01 in z to four decimals: too coarse
 * to match R, and a p-value compared with an alpha of 0.05 must not jump by table steps.
 *
 * Throws a RangeError when a sample is empty or holds a value that is not a finite number.
 */
export function mannWhitneyU(
  x: readonly number[],
  y: readonly number[],
  options: {
    alternative?: Alternative;
    correct?: boolean;
    /**
     * What the variance of U is multiplied by: 1 (the default) for independent samples, more
     * for samples of a serially correlated series (see `serialCorrelation.ts`).
     */
    varianceInflation?: number;
  } = {},
): MannWhitneyResult {
  const alternative = options.alternative ?? 'two-sided';
  const correct = options.correct ?? true;
  const inflation = options.varianceInflation ?? 1;
  if (!(Number.isFinite(inflation) && inflation >= 1)) {
    throw new RangeError(
      `the variance inflation must be a number of at least 1, not ${inflation}`,
    );
  }
  if (x.length === 0 || y.length === 0) {
    throw new RangeError('the Mann-Whitney U test needs two non-empty samples');
  }
  if (![...x, ...y].every(Number.isFinite)) {
    throw new RangeError('the Mann-Whitney U test takes finite numbers only');
  }
  const nx = x.length;
  const ny = y.length;
  const n = nx + ny;
  const u = wilcoxonRankSum([...x], [...y]) - (nx * (nx + 1)) / 2;
  const sigma = Math.sqrt(
    inflation *
      ((nx * ny) / 12) *
      (n + 1 - tieSum([...x, ...y]) / (n * (n - 1))),
  );
  if (!(sigma > 0)) return { u, z: 0, p: 1 };
  const shift = u - (nx * ny) / 2;
  let correction = 0;
  if (correct) {
    if (alternative === 'two-sided') correction = Math.sign(shift) * 0.5;
    else correction = alternative === 'greater' ? 0.5 : -0.5;
  }
  const z = (shift - correction) / sigma;
  let p: number;
  if (alternative === 'greater') p = upperTail(z);
  else if (alternative === 'less') p = upperTail(-z);
  else p = Math.min(1, 2 * Math.min(upperTail(z), upperTail(-z)));
  return { u, z, p };
}

/** sum(t^3 - t) over the groups of tied values, t the size of each group. */
function tieSum(values: number[]): number {
  const sorted = values.sort((a, b) => a - b);
  let sum = 0;
  let run = 1;
  for (let i = 1; i <= sorted.length; i++) {
    if (i < sorted.length && sorted[i] === sorted[i - 1]) {
      run++;
    } else {
      sum += run * run * run - run;
      run = 1;
    }
  }
  return sum;
}

/** 1 - Phi(z), the standard normal's upper tail. */
function upperTail(z: number): number {
  const erf = errorFunction(Math.abs(z) / Math.SQRT2);
  const tail = (1 - erf) / 2;
  return z >= 0 ? tail : 1 - tail;
}
