import fc from 'fast-check';
import { judgeMetric, scoreJudgment } from './judgment';

const range = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => from + i);

describe('judgeMetric', () => {
  it('is NoData, with the counts, when a side has fewer than minSamples values', () => {
    expect(
      judgeMetric({
        canary: [1, 2, NaN],
        baseline: range(1, 40),
        direction: 'increase',
        minSamples: 3,
      }),
    ).toEqual({
      result: 'NoData',
      canaryMedian: null,
      baselineMedian: null,
      u: null,
      p: null,
      canarySamples: 2,
      baselineSamples: 40,
    });
  });

  it('finds a higher canary High when an increase is bad, a Pass when a decrease is', () => {
    const samples = { canary: range(100, 30), baseline: range(1, 30) };
    const high = judgeMetric({ ...samples, direction: 'increase' });
    expect(high).toMatchObject({
      result: 'High',
      canaryMedian: 114.5,
      baselineMedian: 15.5,
      u: 900,
      canarySamples: 30,
      baselineSamples: 30,
    });
    expect(high.p).toBeLessThan(1e-9);
    expect(judgeMetric({ ...samples, direction: 'either' }).result).toBe(
      'High',
    );
    expect(judgeMetric({ ...samples, direction: 'decrease' }).result).toBe(
      'Pass',
    );
  });

  it('finds a lower canary Low when a decrease is bad, a Pass when an increase is', () => {
    const samples = { canary: range(1, 30), baseline: range(100, 30) };
    expect(judgeMetric({ ...samples, direction: 'decrease' }).result).toBe(
      'Low',
    );
    expect(judgeMetric({ ...samples, direction: 'either' }).result).toBe('Low');
    expect(judgeMetric({ ...samples, direction: 'increase' }).result).toBe(
      'Pass',
    );
  });

  it('passes a difference that is not significant at alpha', () => {
    // p = 0.2446 (see mannWhitney.test.ts): a Pass at 0.05, High at 0.3.
    const x = [0.8, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46];
    const y = [1.15, 0.88, 0.9, 0.74, 1.21];
    const base = { canary: x, baseline: y, direction: 'increase' as const };
    expect(judgeMetric({ ...base, minSamples: 5 }).result).toBe('Pass');
    expect(judgeMetric({ ...base, minSamples: 5, alpha: 0.3 }).result).toBe(
      'High',
    );
  });

  it('tells the side from the ranks when the medians are equal', () => {
    // Same median (5), but the canary's upper half is far above the baseline's.
    const canary = [...Array(20).fill(1), 5, ...Array(20).fill(100)];
    const baseline = [...Array(20).fill(1), 5, ...Array(20).fill(6)];
    const judged = judgeMetric({ canary, baseline, direction: 'increase' });
    expect(judged.canaryMedian).toBe(judged.baselineMedian);
    expect(judged.result).toBe('High');
  });

  const sample = fc.array(fc.double({ min: 1, max: 100, noNaN: true }), {
    minLength: 30,
    maxLength: 80,
  });
  const direction = fc.constantFrom(
    'increase' as const,
    'decrease' as const,
    'either' as const,
  );

  it('always passes a canary identical to its baseline', () => {
    fc.assert(
      fc.property(sample, direction, (values, dir) => {
        const judged = judgeMetric({
          canary: values,
          baseline: [...values],
          direction: dir,
        });
        return judged.result === 'Pass' && judged.p === 1;
      }),
    );
  });

  it('never passes a canary moved far in the bad direction', () => {
    fc.assert(
      fc.property(sample, direction, (values, dir) => {
        // Every value moved by a factor of 200: the samples no longer overlap (1-100 against
        // 200-20000, or 0.005-0.5).
        const up = values.map(v => v * 200);
        const down = values.map(v => v / 200);
        const results = [];
        if (dir !== 'decrease') {
          results.push(
            judgeMetric({ canary: up, baseline: values, direction: dir }),
          );
        }
        if (dir !== 'increase') {
          results.push(
            judgeMetric({ canary: down, baseline: values, direction: dir }),
          );
        }
        return results.every(judged => judged.result !== 'Pass');
      }),
    );
  });
});

describe('scoreJudgment', () => {
  it('scores the weighted share of passing metrics, NoData counting as not passing', () => {
    expect(
      scoreJudgment([
        { result: 'Pass', weight: 3 },
        { result: 'NoData' },
        { result: 'Pass' },
        { result: 'High', weight: 0.5 },
        { result: 'Low', weight: 0.5 },
      ]),
    ).toEqual({ score: (100 * 4) / 6, verdict: 'Fail' });
  });

  it('passes at `pass`, pauses from `marginal` to under `pass`, fails under `marginal`', () => {
    const metrics = (passing: number) =>
      range(0, 20).map(i => ({
        result: i < passing ? ('Pass' as const) : ('High' as const),
      }));
    expect(scoreJudgment(metrics(19))).toEqual({ score: 95, verdict: 'Pass' });
    expect(scoreJudgment(metrics(18))).toEqual({
      score: 90,
      verdict: 'Marginal',
    });
    expect(scoreJudgment(metrics(15)).verdict).toBe('Marginal');
    expect(scoreJudgment(metrics(14))).toEqual({ score: 70, verdict: 'Fail' });
    expect(scoreJudgment(metrics(14), { pass: 80, marginal: 70 }).verdict).toBe(
      'Marginal',
    );
    expect(scoreJudgment(metrics(16), { pass: 80, marginal: 70 }).verdict).toBe(
      'Pass',
    );
  });

  it('scores no metric at all 0, and refuses a weight that is not above 0', () => {
    expect(scoreJudgment([])).toEqual({ score: 0, verdict: 'Fail' });
    expect(() => scoreJudgment([{ result: 'Pass', weight: 0 }])).toThrow(
      RangeError,
    );
  });

  it('keeps the score within 0 to 100', () => {
    const metric = fc.record({
      result: fc.constantFrom(
        'Pass' as const,
        'High' as const,
        'Low' as const,
        'NoData' as const,
      ),
      weight: fc.double({ min: 0.001, max: 1e6, noNaN: true }),
    });
    fc.assert(
      fc.property(fc.array(metric, { maxLength: 30 }), metrics => {
        const { score } = scoreJudgment(metrics);
        return score >= 0 && score <= 100;
      }),
    );
  });
});
