import type {
  AnalysisMeasurement,
  CanaryClusterProgress,
  ReleaseAbortReason,
  ReleaseProgress,
  ReleaseStrategy,
} from '@cnp/plugin-fleet-common';
import type { NewEvent } from '../database/types';
import { isNoResult } from './analysis';
import { parseDuration } from './strategy';

/*
 * The pure part of a progressive release: the transitions of its state, with the event each one
 * writes. Nothing here talks to a cluster or a database, so every rule is tested on its own.
 */

export const DEFAULT_ROLLBACK_TIMEOUT_MS = 15 * 60_000;
export const DEFAULT_ANALYSIS_INTERVAL_MS = 60_000;

/** The states in which a cluster's live objects belong to the release (reconcile keeps off). */
export const HELD_STATES = new Set(['RUNNING', 'COMPLETING', 'ROLLING_BACK']);

/** A state being changed, and the events its transitions wrote. */
export class Transition {
  readonly events: NewEvent[] = [];
  changed = false;

  constructor(
    readonly releaseId: string,
    readonly progress: ReleaseProgress,
    readonly now: number,
  ) {}

  /**
   * Records a transition as an event of the release: its reason says what happened
   * (`WEIGHT_SET`, `CLUSTER_DONE`…, `name` unless given), `to` is the release's phase after it.
   */
  event(
    name: string,
    message: string,
    options: { reason?: string; from?: string; actor?: string } = {},
  ) {
    this.changed = true;
    this.events.push({
      subjectKind: 'release',
      subject: this.releaseId,
      actor: options.actor ?? 'fleet-release',
      from: options.from,
      to: this.progress.phase,
      reason: options.reason ?? name,
      message,
    });
  }

  get iso() {
    return new Date(this.now).toISOString();
  }
}

export function initialProgress(waves: string[][], now: Date): ReleaseProgress {
  return {
    phase: 'PROGRESSING',
    currentWave: 0,
    waves,
    clusters: waves.flatMap((names, wave) =>
      names.map(cluster => ({
        cluster,
        wave,
        state: 'WAITING' as const,
        stepIndex: 0,
        weight: 0,
        failures: 0,
        inconclusive: 0,
        passed: [],
      })),
    ),
    analysis: [],
    abort: null,
    updatedAt: now.toISOString(),
  };
}

export function rollbackTimeoutMs(strategy: ReleaseStrategy): number {
  const timeout = strategy.rollback?.timeout;
  return (
    (timeout !== undefined && parseDuration(timeout)) ||
    DEFAULT_ROLLBACK_TIMEOUT_MS
  );
}

export function pauseMs(step: {
  pause: { duration?: string | number };
}): number | undefined {
  const { duration } = step.pause;
  return duration === undefined ? undefined : parseDuration(duration);
}

/** Moves a cluster to its next step. */
export function nextStep(
  t: Transition,
  c: CanaryClusterProgress,
  message: string,
) {
  c.stepIndex += 1;
  c.stepStartedAt = t.iso;
  c.pauseUntil = null;
  c.pauseRemainingMs = null;
  c.awaitingPromote = false;
  c.message = message;
  t.changed = true;
}

/**
 * Aborts the release: every cluster it touched goes back (or waits for its cluster to come back
 * to go back), the clusters of later waves are never touched.
 */
export function abortRelease(
  t: Transition,
  reason: Omit<ReleaseAbortReason, 'at'>,
  isOnline: (cluster: string) => boolean,
  actor?: string,
) {
  const p = t.progress;
  if (
    p.phase === 'ABORTING' ||
    p.phase === 'ROLLED_BACK' ||
    p.phase === 'COMPLETED'
  )
    return;
  const from = p.phase;
  p.phase = 'ABORTING';
  p.abort = { ...reason, at: t.iso };
  for (const c of p.clusters) {
    if (c.state === 'WAITING') {
      c.state = 'SKIPPED';
      c.message = 'never touched: the release aborted before its wave';
    } else if (
      c.state === 'RUNNING' ||
      c.state === 'COMPLETING' ||
      c.state === 'DONE'
    ) {
      c.state = isOnline(c.cluster) ? 'ROLLING_BACK' : 'ROLLBACK_PENDING';
      c.stage = 'traffic';
      c.pauseUntil = null;
      c.awaitingPromote = false;
      c.message =
        c.state === 'ROLLBACK_PENDING'
          ? 'cluster is not ONLINE: goes back to its previous revision when it returns'
          : 'going back to its previous revision';
    }
  }
  t.event('ABORTING', reason.message, { reason: reason.reason, from, actor });
}

/** How many measurements a template tolerates, by their phase. */
export interface AnalysisLimits {
  /** Failed measurements tolerated over the release; one more aborts it. */
  failureLimit: number;
  /** Inconclusive measurements in a row tolerated; one more pauses the release. */
  inconclusiveLimit: number;
  /** Measurements in a row that could not be taken tolerated; one more aborts the release. */
  consecutiveErrorLimit: number;
}

/** Argo Rollouts' default: a provider may fail to answer four times in a row, not five. */
export const DEFAULT_CONSECUTIVE_ERROR_LIMIT = 4;

/** What a measurement calls for: an abort (and rollback), or a pause for a human. */
export type MeasurementVerdict =
  | { kind: 'abort'; reason: Omit<ReleaseAbortReason, 'at'> }
  | { kind: 'pause'; message: string; pauseReason?: string };

/**
 * Why a measurement could not be taken, in Fleet's words only (`unreachable`, `error`): what a
 * provider said names hosts and credentials, and is never stored with a release.
 */
function errorWord(message: string | undefined): string {
  return isNoResult(message) ? message : 'error';
}

function valueText(m: AnalysisMeasurement): string {
  return m.value === null || m.value === undefined
    ? 'no value'
    : String(m.value);
}

/** A measurement was taken: its template's count of errors in a row starts over. */
function clearErrors(c: CanaryClusterProgress, template: string) {
  if (!c.errors || !(template in c.errors)) return;
  const { [template]: _cleared, ...rest } = c.errors;
  c.errors = rest;
}

/**
 * Records a measurement on a cluster, with Argo Rollouts' semantics; answers what it calls for:
 * - `Failed`: counted over the release; more than `failureLimit` aborts it.
 * - `Error` (the measurement could not be taken): counted in a row per template; more than
 *   `consecutiveErrorLimit` aborts the release. Any measurement taken starts the count over.
 * - `Inconclusive` (no data): counted in a row; more than `inconclusiveLimit` pauses the release
 *   for a human to resume or abort: no data is no reason to roll a fleet back.
 */
export function recordMeasurement(
  t: Transition,
  c: CanaryClusterProgress,
  m: AnalysisMeasurement,
  limits: AnalysisLimits,
): MeasurementVerdict | undefined {
  const p = t.progress;
  p.analysis = [
    ...p.analysis.filter(
      a => !(a.cluster === m.cluster && a.template === m.template),
    ),
    m,
  ];
  t.changed = true;
  if (m.phase === 'Error') return recordError(t, c, m, limits);
  clearErrors(c, m.template);
  const value = valueText(m);
  if (m.phase === 'Successful') {
    c.inconclusive = 0;
    if (!c.passed?.includes(m.template))
      c.passed = [...(c.passed ?? []), m.template];
    return undefined;
  }
  if (m.phase === 'Failed') {
    c.inconclusive = 0;
    c.failures += 1;
    t.event(
      'ANALYSIS_FAILED',
      `${m.template} on ${c.cluster}: ${value} does not meet ${m.condition} (${c.failures} failed, limit ${limits.failureLimit})`,
      { reason: 'ANALYSIS_FAILED' },
    );
    if (c.failures <= limits.failureLimit) return undefined;
    return {
      kind: 'abort',
      reason: {
        reason: 'ANALYSIS_FAILED',
        message: `Analysis ${m.template} failed on ${c.cluster}: ${value} does not meet ${m.condition}`,
        cluster: c.cluster,
        metric: m.template,
        value: m.value ?? null,
        condition: m.condition,
      },
    };
  }
  c.inconclusive += 1;
  const why = isNoResult(m.message) ? m.message : 'no data';
  t.event(
    'ANALYSIS_INCONCLUSIVE',
    `${m.template} on ${c.cluster}: inconclusive (${why}; ${c.inconclusive} in a row, limit ${limits.inconclusiveLimit})`,
    { reason: 'ANALYSIS_INCONCLUSIVE' },
  );
  if (c.inconclusive <= limits.inconclusiveLimit) return undefined;
  return {
    kind: 'pause',
    message: `Analysis ${m.template} on ${c.cluster} was inconclusive ${c.inconclusive} times in a row (limit ${limits.inconclusiveLimit}): ${value} (${why}); the release is paused: resume it to measure again, or abort it`,
  };
}

/** A measurement that could not be taken: counted in a row for its cluster and template. */
function recordError(
  t: Transition,
  c: CanaryClusterProgress,
  m: AnalysisMeasurement,
  limits: AnalysisLimits,
): MeasurementVerdict | undefined {
  const count = (c.errors?.[m.template] ?? 0) + 1;
  c.errors = { ...c.errors, [m.template]: count };
  const word = errorWord(m.message);
  t.event(
    'ANALYSIS_ERROR',
    `${m.template} on ${c.cluster}: could not be measured (${word}; ${count} in a row, limit ${limits.consecutiveErrorLimit})`,
    { reason: 'ANALYSIS_ERROR' },
  );
  if (count <= limits.consecutiveErrorLimit) return undefined;
  return {
    kind: 'abort',
    reason: {
      reason: 'ANALYSIS_FAILED',
      message: `Analysis ${m.template} on ${c.cluster} could not be measured ${count} times in a row (limit ${limits.consecutiveErrorLimit}): ${word}`,
      cluster: c.cluster,
      metric: m.template,
      value: m.value ?? null,
      condition: m.condition,
    },
  };
}

/**
 * Pauses a release whose analysis was inconclusive: its timed pauses freeze, nothing goes
 * back, and a human resumes it (it measures again) or aborts it.
 */
export function pauseForAnalysis(
  t: Transition,
  message: string,
  reason = 'INCONCLUSIVE',
) {
  const p = t.progress;
  if (p.phase !== 'PROGRESSING') return;
  p.phase = 'PAUSED';
  p.pausedBy = 'fleet-release';
  freezePauses(t);
  t.event('PAUSED', message, { reason, from: 'PROGRESSING' });
}

/**
 * A resumed release's analysis starts over: the counts of inconclusive measurements and of
 * errors in a row are zero, and each template that was inconclusive or could not be measured
 * is measured again at the next tick, not an interval after its last measurement. Failed
 * measurements stay counted against `failureLimit`.
 */
export function restartAnalysis(t: Transition) {
  const p = t.progress;
  for (const c of p.clusters) {
    c.inconclusive = 0;
    c.errors = {};
  }
  p.analysis = p.analysis.filter(
    m => m.phase === 'Successful' || m.phase === 'Failed',
  );
}

/** When the next measurement of `template` on `cluster` is due (now if never measured). */
export function measurementDue(
  p: ReleaseProgress,
  cluster: string,
  template: { name: string; interval?: string | number },
  now: number,
): boolean {
  const last = p.analysis.find(
    a => a.cluster === cluster && a.template === template.name,
  );
  if (!last) return true;
  const interval =
    (template.interval !== undefined && parseDuration(template.interval)) ||
    DEFAULT_ANALYSIS_INTERVAL_MS;
  return Date.parse(last.at) + interval <= now;
}

/** Freezes the timed pauses of a release being paused: they resume with what was left. */
export function freezePauses(t: Transition) {
  for (const c of t.progress.clusters) {
    if (c.pauseUntil) {
      c.pauseRemainingMs = Math.max(0, Date.parse(c.pauseUntil) - t.now);
      c.pauseUntil = null;
    }
  }
}

/** Restarts frozen pauses, and the step clocks, of a release being resumed. */
export function thawPauses(t: Transition) {
  for (const c of t.progress.clusters) {
    if (c.pauseRemainingMs !== undefined && c.pauseRemainingMs !== null) {
      c.pauseUntil = new Date(t.now + c.pauseRemainingMs).toISOString();
      c.pauseRemainingMs = null;
    }
    // The step clocks restart too: time spent paused is not a step past its timeout.
    if (
      c.state === 'RUNNING' ||
      c.state === 'COMPLETING' ||
      (c.state === 'WAITING' && c.stepStartedAt)
    )
      c.stepStartedAt = t.iso;
  }
}
