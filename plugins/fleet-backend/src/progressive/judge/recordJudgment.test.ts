import type {
  CanaryClusterProgress,
  CanaryJudgment,
} from '@cnp/plugin-fleet-common';
import { initialProgress, Transition } from '../releaseMachine';
import {
  judgmentVerdict,
  keepJudgment,
  MAX_JUDGMENTS,
  metricText,
  worstMetric,
} from './recordJudgment';

type Metric = CanaryJudgment['metrics'][number];

const metric = (over: Partial<Metric> = {}): Metric => ({
  template: 'latency-p99',
  result: 'High',
  canaryMedian: 0.13,
  baselineMedian: 0.1,
  u: 390,
  p: 0.0001,
  canarySamples: 20,
  baselineSamples: 20,
  weight: 1,
  ...over,
});

const judgment = (over: Partial<CanaryJudgment> = {}): CanaryJudgment => ({
  at: '2026-01-01T00:00:00.000Z',
  cluster: 'sim-1',
  stepIndex: 1,
  score: 0,
  verdict: 'Fail',
  metrics: [metric()],
  ...over,
});

function world() {
  const p = initialProgress([['sim-1']], new Date(0));
  const t = new Transition('r1', p, Date.parse('2026-01-01T00:00:00.000Z'));
  const c = p.clusters[0] as CanaryClusterProgress;
  c.state = 'RUNNING';
  return { p, t, c };
}

const templates = [
  {
    name: 'latency-p99',
    compare: { baseline: true as const, direction: 'increase' as const },
    provider: { prometheus: { address: 'http://p', query: 'q' } },
  },
];

describe('a judgment kept with its release', () => {
  it('names a metric by its medians and p, or by its samples without data', () => {
    expect(metricText(metric({ alpha: 0.0152 }), 'sim-1')).toBe(
      'latency-p99 on sim-1: canary median 0.130 vs baseline 0.100 (p=0.0001, level 0.0152), High',
    );
    // A judgment kept before its level was recorded.
    expect(metricText(metric(), 'sim-1')).toBe(
      'latency-p99 on sim-1: canary median 0.130 vs baseline 0.100 (p=0.0001), High',
    );
    expect(
      metricText(metric({ p: 2e-7, canaryMedian: 0.00042 }), 'sim-1'),
    ).toBe(
      'latency-p99 on sim-1: canary median 0.000420 vs baseline 0.100 (p=2.0e-7), High',
    );
    expect(
      metricText(
        metric({
          result: 'NoData',
          canaryMedian: null,
          baselineMedian: null,
          p: null,
          u: null,
          canarySamples: 4,
        }),
        'sim-1',
        10,
      ),
    ).toBe(
      'latency-p99 on sim-1: no data (4 canary and 20 baseline samples, 10 needed each)',
    );
  });

  it('blames the heaviest failing metric, a significant change before no data, then the smallest p', () => {
    const noData = metric({ template: 'a', result: 'NoData', p: null });
    const high = metric({ template: 'b', p: 0.01 });
    const higher = metric({ template: 'c', p: 0.001 });
    const heavy = metric({ template: 'd', p: 0.04, weight: 3 });
    expect(worstMetric([noData, high, higher])?.template).toBe('c');
    expect(worstMetric([noData, high, heavy])?.template).toBe('d');
    expect(worstMetric([metric({ result: 'Pass' })])).toBeUndefined();
  });

  it('keeps the newest 50 judgments and each metric as its latest measurement', () => {
    const { p } = world();
    for (let i = 0; i < MAX_JUDGMENTS + 5; i++)
      keepJudgment(p, judgment({ stepIndex: i }));
    expect(p.judgments).toHaveLength(MAX_JUDGMENTS);
    expect(p.judgments![0].stepIndex).toBe(5);
    expect(p.analysis).toEqual([
      {
        template: 'latency-p99',
        cluster: 'sim-1',
        phase: 'Failed',
        value: 0.13,
        at: '2026-01-01T00:00:00.000Z',
      },
    ]);
  });

  it('aborts on Fail naming the worst metric, pauses on Marginal, counts Pass as passed', () => {
    let w = world();
    expect(judgmentVerdict(w.t, w.c, judgment(), templates, {})).toEqual({
      kind: 'abort',
      reason: {
        reason: 'ANALYSIS_FAILED',
        message:
          'Judged against the baseline, score 0: latency-p99 on sim-1: canary median 0.130 vs baseline 0.100 (p=0.0001), High',
        cluster: 'sim-1',
        metric: 'latency-p99',
        value: 0.13,
      },
    });
    expect(w.t.events.map(e => e.reason)).toEqual(['JUDGMENT_FAILED']);

    w = world();
    const marginal = judgmentVerdict(
      w.t,
      w.c,
      judgment({ score: 80, verdict: 'Marginal' }),
      templates,
      { pass: 90 },
    );
    expect(marginal).toMatchObject({
      kind: 'pause',
      pauseReason: 'JUDGMENT_MARGINAL',
    });
    expect(marginal?.kind === 'pause' && marginal.message).toContain(
      'score 80 (passes at 90)',
    );

    w = world();
    w.c.errors = { 'latency-p99': 2, other: 1 };
    expect(
      judgmentVerdict(
        w.t,
        w.c,
        judgment({
          score: 100,
          verdict: 'Pass',
          metrics: [metric({ result: 'Pass' })],
        }),
        templates,
        {},
      ),
    ).toBeUndefined();
    expect(w.c.passed).toEqual(['latency-p99']);
    expect(w.c.errors).toEqual({ other: 1 });
    expect(w.p.judgments).toHaveLength(1);
  });
});
