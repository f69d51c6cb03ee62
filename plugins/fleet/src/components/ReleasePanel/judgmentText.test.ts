import type { CanaryJudgment } from '@cnp/plugin-fleet-common';
import {
  changeText,
  judgmentsByCluster,
  pText,
  verdictText,
  type JudgedMetric,
} from './judgmentText';

function metric(canaryMedian: number | null, baselineMedian: number | null) {
  return { canaryMedian, baselineMedian } as JudgedMetric;
}

describe('judgment texts', () => {
  it('says the change of the median in percent, signed, one decimal under 10 %', () => {
    expect(changeText(metric(130, 100))).toBe('+30 %');
    expect(changeText(metric(88, 100))).toBe('-12 %');
    expect(changeText(metric(1.025, 1))).toBe('+2.5 %');
    expect(changeText(metric(100.01, 100))).toBe('0 %');
    // Against a negative baseline, a rise is still a rise.
    expect(changeText(metric(-5, -10))).toBe('+50 %');
    expect(changeText(metric(0, 0))).toBe('0 %');
    expect(changeText(metric(3, 0))).toBe('—');
    expect(changeText(metric(null, 100))).toBe('—');
  });

  it('says p to 3 significant digits, "< 0.001" under that', () => {
    expect(pText(0.41234)).toBe('0.412');
    expect(pText(0.05)).toBe('0.0500');
    expect(pText(0.001)).toBe('0.00100');
    expect(pText(0.00099)).toBe('< 0.001');
    expect(pText(1)).toBe('1.00');
    expect(pText(null)).toBe('—');
  });

  it('says the score rounded and what the verdict does', () => {
    const judged = (score: number, verdict: CanaryJudgment['verdict']) =>
      ({ score, verdict } as CanaryJudgment);
    expect(verdictText(judged(200 / 3, 'Marginal'))).toBe(
      'Score 67 — Marginal: paused for a human',
    );
    expect(verdictText(judged(100, 'Pass'))).toBe('Score 100 — Pass: goes on');
    expect(verdictText(judged(20, 'Fail'))).toBe(
      'Score 20 — Fail: fails the step',
    );
  });

  it("groups the judgments by cluster in the waves' order, newest first", () => {
    const j = (cluster: string, stepIndex: number, at: string) =>
      ({ cluster, stepIndex, at } as CanaryJudgment);
    const list = [
      j('b', 0, '2026-01-01T00:00:00Z'),
      j('a', 0, '2026-01-01T00:00:00Z'),
      j('a', 1, '2026-01-01T00:01:00Z'),
      j('z', 0, '2026-01-01T00:00:00Z'),
    ];
    const grouped = judgmentsByCluster(list, ['a', 'b', 'c']);
    expect(grouped.map(([c, js]) => [c, js.map(x => x.stepIndex)])).toEqual([
      ['a', [1, 0]],
      ['b', [0]],
      ['z', [0]],
    ]);
  });
});
