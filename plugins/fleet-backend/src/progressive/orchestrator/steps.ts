import type {
  AnalysisMeasurement,
  AnalysisTemplate,
  CanaryClusterProgress,
} from '@cnp/plugin-fleet-common';
import { asError } from '../../util/errors';
import { measure as measurePrometheus } from '../analysis';
import {
  DEFAULT_CONSECUTIVE_ERROR_LIMIT,
  measurementDue,
  nextStep,
  pauseMs,
  recordMeasurement,
} from '../releaseMachine';
import { targetFor } from './canaryTarget';
import { judge, judgedInStep, thresholdTemplates } from './judging';
import { fail, type Tick } from './tick';

export async function runStep(tick: Tick, c: CanaryClusterProgress) {
  const { t, strategy } = tick;
  const steps = strategy.canary.steps;
  if (c.stepIndex >= steps.length) {
    await toCompletion(tick, c);
    return;
  }
  const step = steps[c.stepIndex];
  if ('pause' in step) {
    const duration = pauseMs(step);
    if (duration === undefined) {
      if (!c.awaitingPromote) {
        c.awaitingPromote = true;
        c.message = 'paused: waiting for promote';
        t.event(
          'PAUSE_STARTED',
          `${c.cluster}: step ${c.stepIndex + 1} waits for promote at ${
            c.weight
          }%`,
          { reason: 'PAUSE_STARTED' },
        );
      }
      return;
    }
    if (
      !c.pauseUntil &&
      (c.pauseRemainingMs === undefined || c.pauseRemainingMs === null)
    ) {
      c.pauseUntil = new Date(
        Date.parse(c.stepStartedAt ?? t.iso) + duration,
      ).toISOString();
      c.message = `timed pause of ${step.pause.duration}`;
      t.event(
        'PAUSE_STARTED',
        `${c.cluster}: step ${c.stepIndex + 1} pauses ${
          step.pause.duration
        } at ${c.weight}%`,
        { reason: 'PAUSE_STARTED' },
      );
    }
    if (c.pauseUntil && Date.parse(c.pauseUntil) <= t.now) {
      // A timed pause is where the canary is judged against its baseline at its weight: it
      // ends once a judgment of this step passed.
      if (!judgedInStep(tick, c)) {
        const message = `pause over: waiting for a passing judgment against the baseline at ${c.weight}%`;
        if (c.message !== message) {
          c.message = message;
          t.changed = true;
        }
        return;
      }
      nextStep(t, c, 'pause over');
      t.event('STEP_DONE', `${c.cluster}: pause of step ${c.stepIndex} over`, {
        reason: 'STEP_DONE',
      });
      await runStep(tick, c);
    }
    return;
  }
  const weight = step.setWeight;
  const provider = tick.deps.traffic.byId(c.mode);
  if (weight >= 100 && !provider.stepsToFull) {
    await toCompletion(tick, c);
    return;
  }
  const target = await targetFor(tick, c);
  if (!target) return;
  const weightIndex = target.weights.indexOf(weight);
  const outcome = await provider.step(target, { weight, weightIndex });
  if (outcome.kind === 'failed') {
    fail(tick, {
      reason: outcome.reason ?? 'STEP_FAILED',
      message: `${c.cluster}: ${outcome.message}`,
      cluster: c.cluster,
    });
    return;
  }
  if (outcome.kind === 'waiting') {
    if (c.message !== outcome.message) {
      c.message = outcome.message;
      t.changed = true;
    }
    return;
  }
  c.weight = weight;
  nextStep(t, c, outcome.message);
  t.event(
    'WEIGHT_SET',
    `${c.cluster}: step ${c.stepIndex} set weight ${weight}% (${outcome.message})`,
    { reason: 'WEIGHT_SET' },
  );
  if (weight >= 100) {
    await toCompletion(tick, c);
    return;
  }
  await runStep(tick, c);
}

/** Past the last step: analysis must have passed; then the stable workload takes the revision. */
export async function toCompletion(tick: Tick, c: CanaryClusterProgress) {
  const { t, strategy } = tick;
  const templates = strategy.analysis?.templates ?? [];
  const missing = templates
    .filter(tp => !c.passed?.includes(tp.name))
    .map(tp => tp.name);
  if (missing.length) {
    const message = `at 100%: waiting for a successful analysis (${missing.join(
      ', ',
    )})`;
    if (c.message !== message) {
      c.message = message;
      t.changed = true;
    }
    if (c.weight > 0) await analyse(tick, c);
    return;
  }
  const provider = tick.deps.traffic.byId(c.mode);
  if (provider.stepsToFull && c.stepIndex >= strategy.canary.steps.length) {
    // A provider that carries the traffic to 100 % itself (a Rollout, once promoted past its
    // last pause) finishes its last steps.
    const target = await targetFor(tick, c);
    if (!target) return;
    const weights = target.weights;
    if (weights[weights.length - 1] < 100) {
      const outcome = await provider.step(target, {
        weight: 100,
        weightIndex: weights.length,
      });
      if (outcome.kind !== 'reached') {
        if (outcome.kind === 'failed')
          fail(tick, {
            reason: outcome.reason ?? 'STEP_FAILED',
            message: `${c.cluster}: ${outcome.message}`,
            cluster: c.cluster,
          });
        return;
      }
    }
  }
  c.state = 'COMPLETING';
  c.stage = 'deploy';
  c.weight = 100;
  c.stepIndex = strategy.canary.steps.length;
  c.stepStartedAt = t.iso;
  c.message = 'at 100%: the stable workload takes the new revision';
  t.event(
    'CLUSTER_PROMOTED',
    `${c.cluster}: promoted to 100%; the stable workload takes the new revision`,
    { reason: 'CLUSTER_PROMOTED' },
  );
}

export async function analyse(tick: Tick, c: CanaryClusterProgress) {
  const { t, strategy } = tick;
  await judge(tick, c);
  if (tick.failure) return;
  const templates = thresholdTemplates(strategy);
  const due = templates.filter(tp =>
    measurementDue(t.progress, c.cluster, tp, t.now),
  );
  if (!due.length) return;
  const target = await targetFor(tick, c);
  if (!target?.analysis) return;
  const measure = tick.deps.measure ?? measurePrometheus;
  const context = target.analysis.context;
  const results: Array<[AnalysisTemplate, AnalysisMeasurement]> =
    await Promise.all(
      due.map(async tp => {
        const m = await measure(tp, context, {
          timeoutMs: tick.deps.analysisTimeoutMs ?? 5_000,
        }).catch((error): AnalysisMeasurement => {
          // A measurement that rejects could not be taken: an error, counted against
          // `consecutiveErrorLimit` like any other, never a tick that fails (and tries again)
          // for ever; its text stays in the log.
          tick.deps.logger.warn(
            `Release ${tick.record.id}: ${tp.name} on ${
              c.cluster
            } could not be measured: ${asError(error).message}`,
          );
          return {
            template: tp.name,
            cluster: c.cluster,
            condition: tp.successCondition,
            at: new Date().toISOString(),
            phase: 'Error',
            value: null,
            message: 'error',
          };
        });
        return [tp, m] as [AnalysisTemplate, AnalysisMeasurement];
      }),
    );
  for (const [tp, m] of results) {
    const failureLimit = tp.failureLimit ?? 0;
    const verdict = recordMeasurement(t, c, m, {
      failureLimit,
      inconclusiveLimit: tp.inconclusiveLimit ?? failureLimit,
      consecutiveErrorLimit:
        tp.consecutiveErrorLimit ?? DEFAULT_CONSECUTIVE_ERROR_LIMIT,
    });
    if (verdict?.kind === 'abort' && t.progress.phase === 'PROGRESSING') {
      fail(tick, verdict.reason);
      return;
    }
    // A pause waits for the wave to settle: a failure found in the same tick aborts instead.
    if (verdict?.kind === 'pause') tick.pause ??= verdict.message;
  }
}
