/*
 * How often the canary judge fails a healthy step, and how often it fails a worse one, on
 * seeded series: a canary and a baseline of first-order autoregressive points (one standard
 * deviation of noise, serial correlation 0 to 0.9), a step judged from its 30th point at every
 * new one up to its 90th (61 looks), with `direction: increase`. Beside it, the judge as it was
 * before: a level of 0.05 at every look, the points counted as independent. The figures of
 * docs/progressive-delivery.md ("What that gives"); judge/judgment.test.ts asserts bounds on
 * fewer steps of another seed.
 *
 *   node -r @backstage/cli/config/nodeTransform.cjs bench/judgeLevels.ts [steps 600] [seed 99]
 *
 * (after `source scripts/toolchain.sh`; about 30 s at 600 steps on one core).
 */
import {
  autoregressiveSeries,
  judgeMetric,
  mannWhitneyU,
} from './lib/judgmentParts';

const steps = Number(process.argv[2] ?? 600);
const seed = Number(process.argv[3] ?? 99);
if (!(Number.isInteger(steps) && steps > 0) || !Number.isInteger(seed)) {
  console.error('usage: judgeLevels.ts [steps, a whole number] [seed]');
  process.exit(2);
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** The judge before: p under 0.05 at any look, the canary's median above the baseline's. */
function failedBefore(canary: number[], baseline: number[]): boolean {
  return (
    mannWhitneyU(canary, baseline).p < 0.05 && median(canary) > median(baseline)
  );
}

type Judge = 'now' | 'before';

function shareFailed(
  judge: Judge,
  rho: number,
  shift: number,
  family: number,
): number {
  const series = autoregressiveSeries(seed);
  let failed = 0;
  for (let step = 0; step < steps; step++) {
    const canary = series(90, rho, shift);
    const baseline = series(90, rho, 0);
    for (let n = 30, look = 1; n <= 90; n++, look++) {
      const c = canary.slice(0, n);
      const b = baseline.slice(0, n);
      const fails =
        judge === 'before'
          ? failedBefore(c, b)
          : judgeMetric({
              canary: c,
              baseline: b,
              direction: 'increase',
              look,
              family,
            }).result === 'High';
      if (fails) {
        failed++;
        break;
      }
    }
  }
  return failed / steps;
}

const pct = (share: number) => `${(100 * share).toFixed(1)} %`;
const correlations = [0, 0.3, 0.5, 0.8, 0.9];
const rows: Array<[string, (rho: number) => number]> = [
  ['healthy steps failed, one sequence', rho => shareFailed('now', rho, 0, 1)],
  [
    "healthy steps failed at a twentieth's share, x 20",
    rho => 20 * shareFailed('now', rho, 0, 20),
  ],
  [
    'healthy steps failed, 0.05 at every look (before)',
    rho => shareFailed('before', rho, 0, 1),
  ],
  [
    'one standard deviation worse, failed, one sequence',
    rho => shareFailed('now', rho, 1, 1),
  ],
  [
    "two standard deviations worse, failed, twentieth's share",
    rho => shareFailed('now', rho, 2, 20),
  ],
];
console.log(
  `canary judge levels: ${steps} steps of 61 looks each, seed ${seed}, alpha 0.05`,
);
console.log(
  [
    'serial correlation'.padEnd(58),
    ...correlations.map(r => String(r).padStart(8)),
  ].join(''),
);
for (const [label, measure] of rows) {
  console.log(
    [
      label.padEnd(58),
      ...correlations.map(r => pct(measure(r)).padStart(8)),
    ].join(''),
  );
}
