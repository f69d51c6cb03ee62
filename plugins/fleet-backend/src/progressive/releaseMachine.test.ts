import type {
  AnalysisMeasurement,
  ReleaseStrategy,
} from '@cnp/plugin-fleet-common';
import {
  DEFAULT_CONSECUTIVE_ERROR_LIMIT,
  initialProgress,
  measurementDue,
  pauseForAnalysis,
  recordMeasurement,
  Transition,
  type AnalysisLimits,
} from './releaseMachine';
import { applySteering } from './steering';

const T0 = Date.parse('2026-01-01T00:00:00Z');

/** A release of one wave, `east` running its canary. */
function running() {
  const p = initialProgress([['east']], new Date(T0));
  p.clusters[0].state = 'RUNNING';
  p.clusters[0].weight = 20;
  return p;
}

let clock = T0;
/** A measurement of `template` on east, a second after the one before. */
function measured(
  phase: AnalysisMeasurement['phase'],
  over: Partial<AnalysisMeasurement> = {},
): AnalysisMeasurement {
  clock += 1000;
  return {
    template: 'success-rate',
    cluster: 'east',
    condition: 'result[0] >= 0.995',
    at: new Date(clock).toISOString(),
    phase,
    value: phase === 'Successful' ? 0.999 : null,
    ...(phase === 'Error' ? { message: 'unreachable' } : {}),
    ...(phase === 'Inconclusive' ? { message: 'no data' } : {}),
    ...over,
  };
}

const LIMITS: AnalysisLimits = {
  failureLimit: 0,
  inconclusiveLimit: 0,
  consecutiveErrorLimit: DEFAULT_CONSECUTIVE_ERROR_LIMIT,
};

/** Records measurements one transition each, as ticks do; answers each verdict and the state. */
function record(
  progress: ReturnType<typeof running>,
  measurements: AnalysisMeasurement[],
  limits: AnalysisLimits = LIMITS,
) {
  const events: Transition['events'] = [];
  const verdicts = measurements.map(m => {
    const t = new Transition('rel-1', progress, clock);
    const verdict = recordMeasurement(t, progress.clusters[0], m, limits);
    events.push(...t.events);
    return verdict;
  });
  return { verdicts, events, cluster: progress.clusters[0] };
}

describe('recordMeasurement', () => {
  it('takes the default consecutiveErrorLimit from Argo Rollouts: 4', () => {
    expect(DEFAULT_CONSECUTIVE_ERROR_LIMIT).toBe(4);
  });

  it('does not abort on 3 errors then a success: the success starts the count over', () => {
    const p = running();
    const { verdicts, events, cluster } = record(p, [
      measured('Error'),
      measured('Error'),
      measured('Error', { message: 'error' }),
      measured('Successful'),
    ]);
    expect(verdicts).toEqual([undefined, undefined, undefined, undefined]);
    expect(cluster.errors).toEqual({});
    expect(cluster.passed).toEqual(['success-rate']);
    expect(events.map(e => [e.reason, e.message])).toEqual([
      [
        'ANALYSIS_ERROR',
        'success-rate on east: could not be measured (unreachable; 1 in a row, limit 4)',
      ],
      [
        'ANALYSIS_ERROR',
        'success-rate on east: could not be measured (unreachable; 2 in a row, limit 4)',
      ],
      [
        'ANALYSIS_ERROR',
        'success-rate on east: could not be measured (error; 3 in a row, limit 4)',
      ],
    ]);
    // Four more errors after the success are still within the limit.
    const after = record(
      p,
      [1, 2, 3, 4].map(() => measured('Error')),
    );
    expect(after.verdicts.every(v => v === undefined)).toBe(true);
    expect(after.cluster.errors).toEqual({ 'success-rate': 4 });
  });

  it('aborts on the 5th error in a row with the default limit, naming the template, the cluster and the last error in Fleet words', () => {
    const p = running();
    const { verdicts } = record(p, [
      measured('Error'),
      measured('Error'),
      measured('Error'),
      measured('Error'),
      // Whatever a provider said is not repeated: it may name hosts and credentials.
      measured('Error', { message: 'ECONNREFUSED 10.0.0.7:9090 token=s3cr3t' }),
    ]);
    expect(verdicts.slice(0, 4)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(verdicts[4]).toEqual({
      kind: 'abort',
      reason: {
        reason: 'ANALYSIS_FAILED',
        message:
          'Analysis success-rate on east could not be measured 5 times in a row (limit 4): error',
        cluster: 'east',
        metric: 'success-rate',
        value: null,
        condition: 'result[0] >= 0.995',
      },
    });
    expect(JSON.stringify(verdicts)).not.toContain('s3cr3t');
  });

  it('counts errors per template, and a failed or inconclusive measurement starts the count over', () => {
    const p = running();
    const other = { template: 'latency' };
    const limits = { ...LIMITS, failureLimit: 5, inconclusiveLimit: 5 };
    const { verdicts, cluster } = record(
      p,
      [
        measured('Error'),
        measured('Error', other),
        measured('Error'),
        measured('Error', other),
        measured('Error'),
        measured('Error', other),
        measured('Error'),
        measured('Error', other),
        measured('Failed', { value: 0.9 }),
        measured('Inconclusive', other),
      ],
      limits,
    );
    expect(verdicts.every(v => v === undefined)).toBe(true);
    expect(cluster.errors).toEqual({});
    // Four more of each, then a fifth of latency's: only latency's breaks its limit.
    const more = record(
      p,
      [1, 2, 3, 4].flatMap(() => [measured('Error'), measured('Error', other)]),
      limits,
    );
    expect(more.verdicts.every(v => v === undefined)).toBe(true);
    const fifth = record(p, [measured('Error', other)], limits);
    expect(fifth.verdicts[0]).toMatchObject({
      kind: 'abort',
      reason: { metric: 'latency', cluster: 'east' },
    });
  });

  it('keeps failureLimit for failed measurements: counted over the release, one past the limit aborts', () => {
    const p = running();
    const limits = { ...LIMITS, failureLimit: 1 };
    const { verdicts, events } = record(
      p,
      [
        measured('Failed', { value: 0.9 }),
        measured('Successful'),
        measured('Failed', { value: 0.8 }),
      ],
      limits,
    );
    expect(verdicts.slice(0, 2)).toEqual([undefined, undefined]);
    expect(verdicts[2]).toEqual({
      kind: 'abort',
      reason: {
        reason: 'ANALYSIS_FAILED',
        message:
          'Analysis success-rate failed on east: 0.8 does not meet result[0] >= 0.995',
        cluster: 'east',
        metric: 'success-rate',
        value: 0.8,
        condition: 'result[0] >= 0.995',
      },
    });
    expect(events.map(e => e.reason)).toEqual([
      'ANALYSIS_FAILED',
      'ANALYSIS_FAILED',
    ]);
  });

  it('pauses, never aborts, on inconclusive measurements beyond inconclusiveLimit, with reason INCONCLUSIVE', () => {
    const p = running();
    const limits = { ...LIMITS, inconclusiveLimit: 1 };
    const { verdicts } = record(
      p,
      [1, 2, 3, 4, 5, 6].map(() => measured('Inconclusive')),
      limits,
    );
    expect(verdicts[0]).toBeUndefined();
    const message =
      'Analysis success-rate on east was inconclusive 2 times in a row (limit 1): no value (no data); the release is paused: resume it to measure again, or abort it';
    expect(verdicts[1]).toEqual({ kind: 'pause', message });
    expect(verdicts.some(v => v?.kind === 'abort')).toBe(false);

    p.clusters[0].pauseUntil = new Date(clock + 5000).toISOString();
    const t = new Transition('rel-1', p, clock);
    pauseForAnalysis(t, message);
    expect(p).toMatchObject({ phase: 'PAUSED', pausedBy: 'fleet-release' });
    expect(p.abort).toBeNull();
    // A timed pause freezes, as when a human pauses.
    expect(p.clusters[0]).toMatchObject({
      pauseUntil: null,
      pauseRemainingMs: 5000,
      state: 'RUNNING',
    });
    expect(t.events).toEqual([
      expect.objectContaining({
        reason: 'INCONCLUSIVE',
        from: 'PROGRESSING',
        to: 'PAUSED',
        message,
      }),
    ]);
  });

  it("names an inconclusive measurement's value when it has one", () => {
    const p = running();
    const { verdicts } = record(p, [measured('Inconclusive', { value: 0.97 })]);
    expect(verdicts[0]).toMatchObject({
      kind: 'pause',
      message: expect.stringContaining(': 0.97 (no data)'),
    });
  });

  it('starts the analysis over on resume: counters at zero, what paused it measured again', () => {
    const p = running();
    const limits = { ...LIMITS, inconclusiveLimit: 1, failureLimit: 3 };
    record(
      p,
      [
        measured('Failed', { value: 0.9 }),
        measured('Error', { template: 'latency' }),
        measured('Inconclusive'),
        measured('Inconclusive'),
      ],
      limits,
    );
    const paused = new Transition('rel-1', p, clock);
    pauseForAnalysis(paused, 'inconclusive');
    const template = { name: 'success-rate', interval: '1h' };
    expect(measurementDue(p, 'east', template, clock)).toBe(false);

    const strategy = {
      canary: { steps: [{ setWeight: 20 }, { setWeight: 100 }] },
    } as ReleaseStrategy;
    const resumed = new Transition('rel-1', p, clock + 1000);
    applySteering(resumed, strategy, 'resume', 'user:default/ada', () => true);
    expect(p.phase).toBe('PROGRESSING');
    expect(p.clusters[0]).toMatchObject({
      inconclusive: 0,
      errors: {},
      // Failed measurements stay counted against failureLimit.
      failures: 1,
    });
    expect(measurementDue(p, 'east', template, clock + 1000)).toBe(true);
    expect(
      measurementDue(p, 'east', { name: 'latency', interval: '1h' }, clock),
    ).toBe(true);
    // Once resumed, it takes two inconclusive measurements again to pause.
    const again = record(p, [measured('Inconclusive')], limits);
    expect(again.verdicts).toEqual([undefined]);
  });
});
