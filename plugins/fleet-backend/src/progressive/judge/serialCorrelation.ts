/*
 * Prometheus answers a range query with one point per step, and a point is usually a rate or a
 * quantile over a window longer than the step (`rate(...[5m])` read every minute): neighbouring
 * points share most of their data. Ranked as if independent, such samples look like far more
 * evidence than they are, and two series of the same distribution differ "significantly" most of
 * the time (a lag-one autocorrelation of 0.5 turns a 5 % test into about 25 %, 0.9 into about
 * 65 %). The judgment therefore estimates the series' serial correlation and widens the test's
 * variance by what it costs.
 */

/** The largest serial correlation counted: beyond it a series holds almost no independent point. */
export const MAX_SERIAL_CORRELATION = 0.95;

/** Average ranks, 1-based, of `values` among themselves (tied values share theirs). */
function ranks(values: readonly number[]): number[] {
  const order = values.map((_, i) => i).sort((a, b) => values[a] - values[b]);
  const out = new Array<number>(values.length);
  for (let i = 0; i < order.length; ) {
    let j = i;
    while (j + 1 < order.length && values[order[j + 1]] === values[order[i]])
      j++;
    for (let k = i; k <= j; k++) out[order[k]] = (i + j) / 2 + 1;
    i = j + 1;
  }
  return out;
}

/** What is left of a series once the straight line fitted to it (least squares) is taken out. */
function detrended(series: readonly number[]): number[] {
  const n = series.length;
  const meanT = (n - 1) / 2;
  const meanY = series.reduce((a, b) => a + b, 0) / n;
  let covariance = 0;
  let variance = 0;
  for (let i = 0; i < n; i++) {
    covariance += (i - meanT) * (series[i] - meanY);
    variance += (i - meanT) ** 2;
  }
  const slope = variance > 0 ? covariance / variance : 0;
  return series.map((y, i) => y - meanY - slope * (i - meanT));
}

/**
 * The lag-one autocorrelation of a series, or undefined when it cannot be told: under 3 points,
 * or no variation at all.
 */
export function lagOneAutocorrelation(
  series: readonly number[],
): number | undefined {
  const n = series.length;
  if (n < 3) return undefined;
  const mean = series.reduce((a, b) => a + b, 0) / n;
  let lagged = 0;
  let total = 0;
  for (let i = 0; i < n; i++) {
    total += (series[i] - mean) ** 2;
    if (i > 0) lagged += (series[i] - mean) * (series[i - 1] - mean);
  }
  // Rounding leaves a straight line's residuals at about 1e-15, not 0.
  return total > 1e-9 * n ? lagged / total : undefined;
}

/**
 * The serial correlation of a series in time order, 0 to `MAX_SERIAL_CORRELATION`, erring high:
 * the lag-one autocorrelation of its ranks (an outlier moves it by one rank, as it moves the
 * test) once their straight trend is taken out (a rise both sides share, such as traffic growing
 * over the step, is not noise that lingers), with its small-sample bias added back (about
 * (2 + 4 r) / n once a line is fitted), then one standard error, sqrt((1 - r^2) / n), above it:
 * from 30 points the estimate scatters widely, and one that falls short makes the test fail
 * healthy canaries, where one too high only makes it slower to fail a bad one. Never below 0 (a
 * series never counts as more than independent); 0 when it cannot be told.
 */
export function serialCorrelation(series: readonly number[]): number {
  const n = series.length;
  const r = lagOneAutocorrelation(detrended(ranks(series)));
  if (r === undefined) return 0;
  const unbiased = Math.min(1, r + (2 + 4 * r) / n);
  const high = unbiased + Math.sqrt(Math.max(0, 1 - unbiased * unbiased) / n);
  return Math.min(MAX_SERIAL_CORRELATION, Math.max(0, high));
}

/**
 * How much a serial correlation `r` widens the variance of a sum of the series' points (for a
 * first-order autoregressive series): (1 + r) / (1 - r); 1 when `r` is 0. The series then counts
 * as about n (1 - r) / (1 + r) independent points.
 */
export function varianceInflation(r: number): number {
  const bounded = Math.min(MAX_SERIAL_CORRELATION, Math.max(0, r));
  return (1 + bounded) / (1 - bounded);
}
