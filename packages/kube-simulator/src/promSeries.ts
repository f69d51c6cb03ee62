/**
 * Series of samples drawn from a distribution a test sets, for the simulated
 * Prometheus: what lets a canary analysis run real statistics on the
 * simulator instead of canned verdicts.
 *
 * A sample is a pure function of the rule's seed, the rule's labels and the
 * timestamp (in milliseconds, Prometheus' resolution): two reads of
 * overlapping windows agree on the timestamps they share, a test re-run draws
 * the same values, and two rules with the same seed (a canary's and its
 * baseline's) still draw different samples.
 */
import { isPlainObject } from './util';

/**
 * Where a rule's samples come from:
 * - `normal`: mean and standard deviation `sd`;
 * - `lognormal`: `mu` and `sigma` of the logarithm (the median is e^mu);
 * - `constant`: `value` at every timestamp;
 * - `none`: no data (an empty vector or matrix).
 */
export type PrometheusDistribution =
  | { kind: 'normal'; mean: number; sd: number }
  | { kind: 'lognormal'; mu: number; sigma: number }
  | { kind: 'constant'; value: number }
  | { kind: 'none' };

/** A rule's answer drawn from `distribution` with a PRNG seeded by `seed` (default 1). */
export interface PrometheusSeries {
  distribution: PrometheusDistribution;
  seed?: number;
}

export const DEFAULT_SEED = 1;

const SHAPES =
  '{"kind":"normal","mean":n,"sd":n}, {"kind":"lognormal","mu":n,"sigma":n}, {"kind":"constant","value":n} or {"kind":"none"}';

function finite(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** The distribution `input` describes, or why it is not one. */
export function parseDistribution(
  input: unknown,
): PrometheusDistribution | string {
  if (!isPlainObject(input)) return `distribution must be ${SHAPES}`;
  switch (input.kind) {
    case 'normal':
      if (!finite(input.mean) || !finite(input.sd) || input.sd < 0)
        return 'a normal distribution needs a finite mean and an sd of 0 or more';
      return { kind: 'normal', mean: input.mean, sd: input.sd };
    case 'lognormal':
      if (!finite(input.mu) || !finite(input.sigma) || input.sigma < 0)
        return 'a lognormal distribution needs a finite mu and a sigma of 0 or more';
      return { kind: 'lognormal', mu: input.mu, sigma: input.sigma };
    case 'constant':
      if (!finite(input.value))
        return 'a constant distribution needs a finite value';
      return { kind: 'constant', value: input.value };
    case 'none':
      return { kind: 'none' };
    default:
      return `distribution must be ${SHAPES}`;
  }
}

/** The series `input` ({ distribution, seed? }) describes, or why it is not one. */
export function parseSeries(input: unknown): PrometheusSeries | string {
  if (!isPlainObject(input)) return `expected {"distribution":${SHAPES}}`;
  const distribution = parseDistribution(input.distribution);
  if (typeof distribution === 'string') return distribution;
  const seed = input.seed ?? DEFAULT_SEED;
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed))
    return 'seed must be an integer';
  return { distribution, seed };
}

/**
 * A 53-bit hash of `text` (cyrb53, public domain): well mixed, so that
 * neighbouring timestamps give unrelated samples.
 */
function hash53(text: string, salt: number): number {
  let h1 = 0xdeadbeef ^ salt;
  let h2 = 0x41c6ce57 ^ salt;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** A uniform number in (0, 1), never 0 (the logarithm below needs that). */
function uniform(text: string, salt: number): number {
  return (hash53(text, salt) + 0.5) / 2 ** 53;
}

/** A standard normal sample for `text` (Box-Muller on two independent uniforms). */
function standardNormal(text: string): number {
  const u1 = uniform(text, 1);
  const u2 = uniform(text, 2);
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/**
 * The sample of `series` at `timeMs` for the rule whose labels' key is
 * `ruleKey`; null for no data.
 */
export function sampleAt(
  series: PrometheusSeries,
  ruleKey: string,
  timeMs: number,
): number | null {
  const d = series.distribution;
  const text = `${
    series.seed ?? DEFAULT_SEED
  }\u0000${ruleKey}\u0000${Math.round(timeMs)}`;
  switch (d.kind) {
    case 'none':
      return null;
    case 'constant':
      return d.value;
    case 'normal':
      return d.mean + d.sd * standardNormal(text);
    case 'lognormal':
      return Math.exp(d.mu + d.sigma * standardNormal(text));
    default:
      return null;
  }
}
