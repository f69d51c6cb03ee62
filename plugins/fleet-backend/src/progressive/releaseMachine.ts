import type {
  AnalysisMeasurement,
  CanaryClusterProgress,
  ReleaseAbortReason,
  ReleaseProgress,
  ReleaseStrategy,
} from '@cnp/plugin-fleet-common';
import type { NewEvent } from '../database/types';
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

/** Records a measurement on a cluster; answers the abort it calls for, if any. */
export function recordMeasurement(
  t: Transition,
  c: CanaryClusterProgress,
  m: AnalysisMeasurement,
  limits: { failureLimit: number; inconclusiveLimit: number },
): Omit<ReleaseAbortReason, 'at'> | undefined {
  const p = t.progress;
  p.analysis = [
    ...p.analysis.filter(
      a => !(a.cluster === m.cluster && a.template === m.template),
    ),
    m,
  ];
  t.changed = true;
  const value =
    m.value === null || m.value === undefined ? 'no value' : String(m.value);
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
    if (c.failures > limits.failureLimit) {
      return {
        reason: 'ANALYSIS_FAILED',
        message: `Analysis ${m.template} failed on ${c.cluster}: ${value} does not meet ${m.condition}`,
        cluster: c.cluster,
        metric: m.template,
        value: m.value ?? null,
        condition: m.condition,
      };
    }
    return undefined;
  }
  c.inconclusive += 1;
  t.event(
    'ANALYSIS_INCONCLUSIVE',
    `${m.template} on ${c.cluster}: inconclusive (${
      m.message ?? 'no result'
    }; ${c.inconclusive} in a row, limit ${limits.inconclusiveLimit})`,
    { reason: 'ANALYSIS_INCONCLUSIVE' },
  );
  if (c.inconclusive > limits.inconclusiveLimit) {
    return {
      reason: 'ANALYSIS_FAILED',
      message: `Analysis ${m.template} on ${c.cluster} was inconclusive ${
        c.inconclusive
      } times in a row: ${m.message ?? 'no result'}`,
      cluster: c.cluster,
      metric: m.template,
      value: m.value ?? null,
      condition: m.condition,
    };
  }
  return undefined;
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
