import { autoregressiveSeries } from '../../testing/autoregressive';
import {
  lagOneAutocorrelation,
  MAX_SERIAL_CORRELATION,
  serialCorrelation,
  varianceInflation,
} from './serialCorrelation';

/** The seeded series of `seed` (11 unless said), from its start. */
const series = (n: number, rho: number, seed = 11) =>
  autoregressiveSeries(seed)(n, rho);

describe('serialCorrelation', () => {
  it('is 0 for a constant series, a short one, or one that alternates', () => {
    expect(serialCorrelation([3, 3, 3, 3, 3])).toBe(0);
    expect(serialCorrelation([1, 2])).toBe(0);
    expect(serialCorrelation([1, 9, 1, 9, 1, 9, 1, 9, 1, 9])).toBe(0);
    expect(lagOneAutocorrelation([1, 9, 1, 9, 1, 9])).toBeLessThan(-0.5);
    expect(lagOneAutocorrelation([4, 4, 4])).toBeUndefined();
  });

  it('finds the correlation of an autoregressive series, near 0 for independent points', () => {
    expect(serialCorrelation(series(400, 0))).toBeLessThan(0.1);
    const r = serialCorrelation(series(400, 0.8));
    expect(r).toBeGreaterThan(0.7);
    expect(r).toBeLessThan(0.9);
  });

  it('is moved by an outlier as by one rank, not by its size', () => {
    const base = series(60, 0.5);
    const outlier = [...base];
    outlier[30] = 1e9;
    expect(
      Math.abs(serialCorrelation(outlier) - serialCorrelation(base)),
    ).toBeLessThan(0.1);
  });

  it('takes a straight trend out, and counts at most MAX_SERIAL_CORRELATION', () => {
    const trend = Array.from({ length: 50 }, (_, i) => i);
    expect(serialCorrelation(trend)).toBe(0);
    const noisy = series(200, 0.5);
    const climbing = noisy.map((v, i) => v + i / 10);
    expect(
      Math.abs(serialCorrelation(climbing) - serialCorrelation(noisy)),
    ).toBeLessThan(0.15);
    // A random walk: its points linger for ever.
    let walk = 0;
    const wandering = series(400, 0).map(step => (walk += step));
    expect(serialCorrelation(wandering)).toBe(MAX_SERIAL_CORRELATION);
  });
});

describe('varianceInflation', () => {
  it('is (1 + r) / (1 - r), 1 for no correlation, bounded', () => {
    expect(varianceInflation(0)).toBe(1);
    expect(varianceInflation(0.5)).toBeCloseTo(3, 12);
    expect(varianceInflation(-0.4)).toBe(1);
    expect(varianceInflation(1)).toBeCloseTo(39, 9);
  });
});
