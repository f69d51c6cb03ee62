import type {
  AnalysisMeasurement,
  AnalysisTemplate,
  CanaryClusterProgress,
  CanaryJudgment,
  ReleaseProgress,
} from '@cnp/plugin-fleet-common';
import type { MeasurementVerdict, Transition } from '../releaseMachine';
import { DEFAULT_JUDGE, DEFAULT_MIN_SAMPLES } from './judgment';

/** The judgments a release keeps: the newest, oldest first. */
export const MAX_JUDGMENTS = 50;

type JudgedMetric = CanaryJudgment['metrics'][number];

/** A number as a judgment's message shows it: three decimals, or three digits when smaller. */
function num(value: number): string {
  const size = Math.abs(value);
  if (size >= 1000) return value.toFixed(0);
  return size >= 0.01 || size === 0 ? value.toFixed(3) : value.toPrecision(3);
}

function pText(p: number): string {
  return p < 0.0001 ? p.toExponential(1) : p.toFixed(4);
}

/**
 * What one metric's judgment says, e.g. `latency-p99 on sim-1: canary median 0.130 vs baseline
 * 0.100 (p=0.0001, level 0.0152), High`: p and the level it was held against at that look.
 */
export function metricText(
  m: JudgedMetric,
  cluster: string,
  minSamples?: number,
): string {
  if (m.canaryMedian === null || m.baselineMedian === null || m.p === null) {
    return `${m.template} on ${cluster}: no data (${
      m.canarySamples
    } canary and ${m.baselineSamples} baseline samples, ${
      minSamples ?? DEFAULT_MIN_SAMPLES
    } needed each)`;
  }
  // Judgments kept before the level was recorded have none.
  const level =
    m.alpha === null || m.alpha === undefined
      ? ''
      : `, level ${pText(m.alpha)}`;
  return `${m.template} on ${cluster}: canary median ${num(
    m.canaryMedian,
  )} vs baseline ${num(m.baselineMedian)} (p=${pText(m.p)}${level}), ${
    m.result
  }`;
}

/**
 * The metric a failed or marginal judgment is named by: the heaviest that did not pass, a
 * significant change (High, Low) before a metric without data, then the smallest p.
 */
export function worstMetric(metrics: readonly JudgedMetric[]) {
  const rank = (m: JudgedMetric) => (m.result === 'NoData' ? 1 : 0);
  return [...metrics]
    .filter(m => m.result !== 'Pass')
    .sort(
      (a, b) =>
        b.weight - a.weight || rank(a) - rank(b) || (a.p ?? 1) - (b.p ?? 1),
    )[0];
}

/** The phase a judged metric is kept as among the release's latest measurements. */
function phaseOf(m: JudgedMetric): AnalysisMeasurement['phase'] {
  if (m.result === 'Pass') return 'Successful';
  if (m.result === 'NoData') return 'Inconclusive';
  return 'Failed';
}

/**
 * Keeps a judgment with the release: in `judgments` (the newest `MAX_JUDGMENTS`), and each
 * metric as its template's latest measurement (the canary's median its value), so that the next
 * judgment is due an interval later, as a measurement's is.
 */
export function keepJudgment(
  p: ReleaseProgress,
  judgment: CanaryJudgment,
): void {
  p.judgments = [...(p.judgments ?? []), judgment].slice(-MAX_JUDGMENTS);
  const judged = new Set(judgment.metrics.map(m => m.template));
  p.analysis = [
    ...p.analysis.filter(
      a => !(a.cluster === judgment.cluster && judged.has(a.template)),
    ),
    ...judgment.metrics.map(
      (m): AnalysisMeasurement => ({
        template: m.template,
        cluster: judgment.cluster,
        phase: phaseOf(m),
        value: m.canaryMedian,
        at: judgment.at,
        ...(m.result === 'NoData' ? { message: 'no data' } : {}),
      }),
    ),
  ];
}

/**
 * Applies a judgment's verdict to its cluster: `Pass` counts the templates as passed (the canary
 * may be promoted past its last step) and the step may go on; `Marginal` pauses the release for
 * a human; `Fail` aborts it as a failed analysis does, naming the worst metric.
 */
export function judgmentVerdict(
  t: Transition,
  c: CanaryClusterProgress,
  judgment: CanaryJudgment,
  templates: readonly AnalysisTemplate[],
  judge: { pass?: number; marginal?: number },
): MeasurementVerdict | undefined {
  keepJudgment(t.progress, judgment);
  t.changed = true;
  // A judgment was taken: each template's count of errors in a row starts over.
  const judged = new Set(judgment.metrics.map(m => m.template));
  c.errors = Object.fromEntries(
    Object.entries(c.errors ?? {}).filter(([name]) => !judged.has(name)),
  );
  c.inconclusive = 0;
  if (judgment.verdict === 'Pass') {
    c.passed = [...new Set([...(c.passed ?? []), ...judged])];
    return undefined;
  }
  const worst = worstMetric(judgment.metrics);
  const minSamples = templates.find(tp => tp.name === worst?.template)?.compare
    ?.minSamples;
  const what = worst ? metricText(worst, c.cluster, minSamples) : '';
  const score = Math.round(judgment.score * 10) / 10;
  const step = `step ${judgment.stepIndex + 1}`;
  if (judgment.verdict === 'Marginal') {
    const passAt = judge.pass ?? DEFAULT_JUDGE.pass;
    t.event(
      'JUDGMENT_MARGINAL',
      `${c.cluster} at ${step}: score ${score} (passes at ${passAt}): ${what}`,
      { reason: 'JUDGMENT_MARGINAL' },
    );
    return {
      kind: 'pause',
      message: `Judgment against the baseline on ${c.cluster} at ${step} is marginal: score ${score} (passes at ${passAt}): ${what}; the release is paused: resume it to judge again over a new window, or abort it`,
      pauseReason: 'JUDGMENT_MARGINAL',
    };
  }
  t.event(
    'JUDGMENT_FAILED',
    `${c.cluster} at ${step}: score ${score} (fails under ${
      judge.marginal ?? DEFAULT_JUDGE.marginal
    }): ${what}`,
    { reason: 'JUDGMENT_FAILED' },
  );
  return {
    kind: 'abort',
    reason: {
      reason: 'ANALYSIS_FAILED',
      message: what
        ? `Judged against the baseline, score ${score}: ${what}`
        : `Judged against the baseline on ${c.cluster}, score ${score}`,
      cluster: c.cluster,
      metric: worst?.template,
      value: worst?.canaryMedian ?? null,
    },
  };
}
