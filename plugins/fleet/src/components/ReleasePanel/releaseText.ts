import type {
  AnalysisMeasurement,
  CanaryClusterProgress,
  CanaryMode,
  Release,
} from '@cnp/plugin-fleet-common';
import { formatRelative } from '../RelativeTime/RelativeTime';

/** Statuses of a release still under way. */
export const RUNNING_STATUSES: ReadonlyArray<Release['status']> = [
  'PROGRESSING',
  'PAUSED',
  'ABORTING',
];

/** Statuses of a finished release. */
export const FINISHED_STATUSES: ReadonlyArray<Release['status']> = [
  'COMPLETED',
  'FAILED',
  'ROLLED_BACK',
  'REJECTED',
];

/**
 * What a release puts out, short: `version v2` for a version of the component's own manifests,
 * else its image; undefined when it names neither (the current image).
 */
export function releasedText(
  release: Pick<Release, 'image' | 'version'>,
): string | undefined {
  if (release.version) return `version ${release.version}`;
  return release.image ?? undefined;
}

const modeLabels: Record<string, string> & Record<CanaryMode, string> = {
  rollout: 'Rollout',
  istio: 'Istio',
  replicas: 'Replicas',
};

/** How the cluster runs its canary, in words: a traffic provider a module added, by its id. */
export function modeText(
  mode?: CanaryClusterProgress['mode'],
): string | undefined {
  return mode ? modeLabels[mode] ?? mode : undefined;
}

/** "Step 2 / 5": the step being run, 1-based, at most the last. */
export function stepText(progress: CanaryClusterProgress, steps: number) {
  if (steps === 0) return undefined;
  return `Step ${Math.min(progress.stepIndex + 1, steps)} / ${steps}`;
}

/**
 * What a cluster waits for: promote, the end of a timed pause ("pause ends in 25 seconds"), the
 * rest of a pause a paused release holds, or nothing. A timed pause that is over, or that a
 * paused release froze, never shows its old end.
 */
export function waitText(
  progress: CanaryClusterProgress,
  releaseStatus: Release['status'] = 'PROGRESSING',
  now: number = Date.now(),
): string | undefined {
  if (progress.state !== 'RUNNING') return undefined;
  if (progress.awaitingPromote) return 'waiting for promote';
  if (progress.pauseRemainingMs)
    return `pause held, ${Math.ceil(progress.pauseRemainingMs / 1000)} s left`;
  if (
    progress.pauseUntil &&
    releaseStatus !== 'PAUSED' &&
    Date.parse(progress.pauseUntil) > now
  )
    return `pause ends ${formatRelative(progress.pauseUntil, now)}`;
  return undefined;
}

/** Words of a cluster's own message that `waitText` says better (its pause, its end). */
const PAUSE_MESSAGE = /^(paused\b|timed pause\b)/;

/**
 * What holds a cluster of a progressive release now, in words: its own message (what the
 * orchestrator last said), else for one whose wave has not started, the wave it waits for.
 * Undefined when nothing holds it, or when `waitText` says it (a pause).
 */
export function blockingText(
  progress: CanaryClusterProgress,
  release: { status: Release['status']; currentWave: number },
): string | undefined {
  if (progress.message && !PAUSE_MESSAGE.test(progress.message))
    return progress.message;
  if (progress.state !== 'WAITING') return undefined;
  if (release.status === 'PAUSED') return 'the release is paused';
  return progress.wave > release.currentWave
    ? `starts once wave ${release.currentWave + 1} is done`
    : 'starting';
}

const waveWords: Partial<Record<Release['status'], string>> = {
  PROGRESSING: 'running',
  PAUSED: 'paused',
  ABORTING: 'rolling back',
  COMPLETED: 'done',
  ROLLED_BACK: 'rolled back',
  FAILED: 'failed',
};

/**
 * A wave's state in words, from the release's status (one source): a wave before the current one
 * is done (rolling back or rolled back with an aborted release); the current one is running, paused, rolling back… as the release is; a later one is
 * waiting, or not started once the release ended or is rolling back.
 */
export function waveText(
  index: number,
  currentWave: number,
  status: Release['status'],
): string {
  const undone = status === 'ABORTING' || status === 'ROLLED_BACK';
  if (index < currentWave)
    return undone ? waveWords[status] ?? 'rolled back' : 'done';
  if (index === currentWave) return waveWords[status] ?? 'running';
  return status === 'PROGRESSING' || status === 'PAUSED'
    ? 'waiting'
    : 'not started';
}

/** A measured value, short: 4 significant digits at most (0.981, 0.9953, 1234). */
export function valueText(value?: number | null): string {
  if (value === undefined || value === null || Number.isNaN(value))
    return 'no value';
  if (Math.abs(value) >= 1000) return String(Math.round(value));
  return String(Number(value.toPrecision(4)));
}

const phaseMarks: Record<AnalysisMeasurement['phase'], string> = {
  Successful: '✓',
  Failed: '✗',
  Inconclusive: '?',
  Error: '!',
};

/** "0.981 ✗ result[0] >= 0.995": the value against its condition (the phase is said apart). */
export function measurementText(measurement: AnalysisMeasurement): string {
  return `${valueText(measurement.value)} ${phaseMarks[measurement.phase]} ${
    measurement.condition
  }`;
}

/** The latest measurement of each analysis template on `cluster`. */
export function latestMeasurements(
  analysis: AnalysisMeasurement[],
  cluster: string,
): AnalysisMeasurement[] {
  const latest = new Map<string, AnalysisMeasurement>();
  for (const m of analysis) {
    if (m.cluster !== cluster) continue;
    const seen = latest.get(m.template);
    if (!seen || Date.parse(m.at) > Date.parse(seen.at))
      latest.set(m.template, m);
  }
  return [...latest.values()];
}
