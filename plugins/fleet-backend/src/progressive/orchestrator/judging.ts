import type {
  AnalysisTemplate,
  CanaryClusterProgress,
  CanaryJudgment,
  ReleaseStrategy,
} from '@cnp/plugin-fleet-common';
import { asError } from '../../util/errors';
import { judgeMetric, scoreJudgment } from '../judge/judgment';
import {
  pointsIn,
  queryRange as queryPrometheusRange,
  rangeWindow,
  type RangeResult,
  type Variant,
} from '../judge/rangeQuery';
import { judgmentVerdict } from '../judge/recordJudgment';
import { DEFAULT_MIN_SAMPLES } from '../judge/judgment';
import {
  DEFAULT_CONSECUTIVE_ERROR_LIMIT,
  measurementDue,
  recordMeasurement,
  type MeasurementVerdict,
} from '../releaseMachine';
import { syncBaseline } from '../traffic/baselineObjects';
import type { CanaryTarget } from '../traffic/canaryObjects';
import { targetFor } from './canaryTarget';
import { fail, type Tick } from './tick';

/*
 * The canary judged against its baseline: the templates with `compare` are read on both sides
 * over the step's window (from the step's start to now) and judged together into one score.
 */

/** The strategy's templates judged against a baseline. */
export function comparedTemplates(strategy: ReleaseStrategy) {
  return (strategy.analysis?.templates ?? []).filter(tp => tp.compare);
}

/** The strategy's threshold templates, measured one by one. */
export function thresholdTemplates(strategy: ReleaseStrategy) {
  return (strategy.analysis?.templates ?? []).filter(tp => !tp.compare);
}

/** The modes whose baseline takes traffic: the Service's selection, or a third route. */
const BASELINE_MODES = new Set(['replicas', 'istio', 'gateway-api']);

/**
 * Why the canary cannot be judged against a baseline on a cluster, if it cannot: the baseline
 * takes its share of the traffic where the application's Service selects it beside the stable
 * and canary pods (the replicas mode) or where Istio or a Gateway API HTTPRoute routes it the
 * canary's share; a Rollout's routes (or a provider a module added) would leave it without any,
 * and every judgment would be of no data.
 */
export function baselineRefusal(
  strategy: ReleaseStrategy,
  provider: { id: string; description: string },
): string | undefined {
  if (!comparedTemplates(strategy).length || BASELINE_MODES.has(provider.id))
    return undefined;
  return `a canary judged against a baseline runs with a canary Deployment (replicas), Istio route weights or Gateway API backend weights only, and this cluster would steer it through ${provider.description}`;
}

/**
 * Whether the cluster's step has a judgment that passed: a judgment taken since the step
 * started (a resume starts the step's clock again, and so asks for a new one). Without
 * compared templates, or with no traffic on the canary, there is nothing to wait for.
 */
export function judgedInStep(tick: Tick, c: CanaryClusterProgress): boolean {
  if (!comparedTemplates(tick.strategy).length || c.weight <= 0) return true;
  const since = Date.parse(c.stepStartedAt ?? tick.t.iso);
  return (tick.t.progress.judgments ?? []).some(
    j =>
      j.cluster === c.cluster &&
      j.stepIndex === c.stepIndex &&
      j.verdict === 'Pass' &&
      Date.parse(j.at) >= since,
  );
}

/**
 * A judgment is due once the step's window holds `minSamples` points of every compared
 * template at its resolution (before that it could only be `NoData`), then every interval (the
 * templates' own, as a measurement's): each template's last judgment, or error, is older.
 */
export function judgmentDue(
  tick: Tick,
  c: CanaryClusterProgress,
  templates: readonly AnalysisTemplate[],
): boolean {
  const { t } = tick;
  const start = Date.parse(c.stepStartedAt ?? t.iso);
  const full = templates.every(
    tp =>
      pointsIn(rangeWindow(tp, start, t.now)) >=
      (tp.compare?.minSamples ?? DEFAULT_MIN_SAMPLES),
  );
  return (
    full &&
    templates.every(tp => measurementDue(t.progress, c.cluster, tp, t.now))
  );
}

/** Both sides of one template over the step's window. */
async function readSides(
  tick: Tick,
  target: CanaryTarget,
  tp: AnalysisTemplate,
  startMs: number,
): Promise<Record<Variant, RangeResult>> {
  const query = tick.deps.queryRange ?? queryPrometheusRange;
  const window = rangeWindow(tp, startMs, tick.t.now);
  const options = { timeoutMs: tick.deps.analysisTimeoutMs ?? 5_000 };
  const side = (variant: Variant) =>
    query(tp, variant, target.analysis!.context, window, options).catch(
      (error): RangeResult => {
        // A read that rejects could not be taken: an error, its text only logged.
        tick.deps.logger.warn(
          `Release ${tick.record.id}: ${tp.name} (${variant}) on ${
            target.analysis!.context.cluster
          } could not be read: ${asError(error).message}`,
        );
        return { kind: 'error', message: 'error' };
      },
    );
  const [canary, baseline] = await Promise.all([
    side('canary'),
    side('baseline'),
  ]);
  return { canary, baseline };
}

/** The baseline beside the canary, at its size; an ownership conflict fails the release. */
async function keepBaseline(
  tick: Tick,
  c: CanaryClusterProgress,
  target: CanaryTarget,
) {
  const outcome = await syncBaseline(
    target,
    tick.deps.analysisTimeoutMs ?? 5_000,
  );
  if (outcome.kind === 'failed') {
    fail(tick, {
      reason: outcome.reason ?? 'STEP_FAILED',
      message: `${c.cluster}: the baseline: ${outcome.message}`,
      cluster: c.cluster,
    });
  }
}

/**
 * One tick of the judgment on a running cluster: the baseline kept at the canary's size, then,
 * when due, every compared template read on both sides and judged. A side that could not be
 * read is an `Error` measurement of its template (counted against `consecutiveErrorLimit`),
 * and nothing is judged; every metric without data is `Inconclusive` (counted against
 * `inconclusiveLimit`); otherwise the score's verdict decides: `Fail` aborts, `Marginal` pauses.
 */
export async function judge(tick: Tick, c: CanaryClusterProgress) {
  const { t, strategy } = tick;
  const templates = comparedTemplates(strategy);
  if (!templates.length) return;
  const target = await targetFor(tick, c);
  if (!target?.analysis) return;
  if (c.state === 'RUNNING') await keepBaseline(tick, c, target);
  if (tick.failure || !judgmentDue(tick, c, templates)) return;
  const startMs = Date.parse(c.stepStartedAt ?? t.iso);
  const read = await Promise.all(
    templates.map(async tp => ({
      tp,
      sides: await readSides(tick, target, tp, startMs),
    })),
  );
  const verdicts: MeasurementVerdict[] = [];
  const failed = read.filter(
    r => r.sides.canary.kind === 'error' || r.sides.baseline.kind === 'error',
  );
  if (failed.length) {
    for (const { tp, sides } of failed) {
      const side =
        sides.canary.kind === 'error' ? sides.canary : sides.baseline;
      const verdict = recordMeasurement(
        t,
        c,
        {
          template: tp.name,
          cluster: c.cluster,
          phase: 'Error',
          value: null,
          message: side.kind === 'error' ? side.message : 'error',
          at: t.iso,
        },
        limitsOf(tp),
      );
      if (verdict) verdicts.push(verdict);
    }
  } else {
    const judgment = judgmentOf(tick, c, read);
    if (judgment.metrics.every(m => m.result === 'NoData')) {
      // Nothing to judge is no verdict: a pause past the limit, never a failure.
      for (const { tp } of read) {
        const verdict = recordMeasurement(
          t,
          c,
          {
            template: tp.name,
            cluster: c.cluster,
            phase: 'Inconclusive',
            value: null,
            message: 'no data',
            at: t.iso,
          },
          limitsOf(tp),
        );
        if (verdict) verdicts.push(verdict);
      }
    } else {
      const verdict = judgmentVerdict(
        t,
        c,
        judgment,
        templates,
        strategy.analysis?.judge ?? {},
      );
      if (verdict) verdicts.push(verdict);
    }
  }
  const abort = verdicts.find(v => v.kind === 'abort');
  if (abort?.kind === 'abort' && t.progress.phase === 'PROGRESSING') {
    fail(tick, abort.reason);
    return;
  }
  const pause = verdicts.find(v => v.kind === 'pause');
  if (pause?.kind === 'pause' && !tick.pause) {
    tick.pause = pause.message;
    tick.pauseReason = pause.pauseReason;
  }
}

function limitsOf(tp: AnalysisTemplate) {
  const failureLimit = tp.failureLimit ?? 0;
  return {
    failureLimit,
    inconclusiveLimit: tp.inconclusiveLimit ?? failureLimit,
    consecutiveErrorLimit:
      tp.consecutiveErrorLimit ?? DEFAULT_CONSECUTIVE_ERROR_LIMIT,
  };
}

/**
 * The sequences of tests a release's `alpha` is shared by: each compared template on each step
 * of each of its clusters, and on the wait for completion (a cluster is judged whenever its
 * canary has traffic, in a pause as while a weight is being reached or the completion waits).
 */
export function judgmentFamily(
  strategy: ReleaseStrategy,
  clusters: number,
): number {
  return (
    Math.max(1, clusters) *
    Math.max(1, comparedTemplates(strategy).length) *
    (strategy.canary.steps.length + 1)
  );
}

/**
 * This judgment's look at the cluster's step, from 1: the count kept with the cluster
 * (`judgmentLooks`), started again at a new step and not at a resume (the resumed step's looks
 * spend the same share).
 */
function nextLook(c: CanaryClusterProgress): number {
  const looks = c.judgmentLooks;
  const look = (looks?.stepIndex === c.stepIndex ? looks.count : 0) + 1;
  c.judgmentLooks = { stepIndex: c.stepIndex, count: look };
  return look;
}

/**
 * Every compared template judged, and the step's score over them. The release's `alpha` is
 * shared by its sequences of tests (`judgmentFamily`), and spent over each one's looks.
 */
function judgmentOf(
  tick: Tick,
  c: CanaryClusterProgress,
  read: Array<{ tp: AnalysisTemplate; sides: Record<Variant, RangeResult> }>,
): CanaryJudgment {
  const values = (r: RangeResult) => (r.kind === 'values' ? r.values : []);
  const look = nextLook(c);
  const family = judgmentFamily(tick.strategy, tick.t.progress.clusters.length);
  const metrics = read.map(({ tp, sides }) => {
    const judged = judgeMetric({
      canary: values(sides.canary),
      baseline: values(sides.baseline),
      direction: tp.compare!.direction,
      alpha: tp.compare!.alpha,
      minSamples: tp.compare!.minSamples,
      look,
      family,
    });
    return { template: tp.name, weight: tp.weight ?? 1, ...judged };
  });
  const { score, verdict } = scoreJudgment(
    metrics,
    tick.strategy.analysis?.judge ?? {},
  );
  return {
    at: tick.t.iso,
    cluster: c.cluster,
    stepIndex: c.stepIndex,
    score,
    verdict,
    metrics,
  };
}
