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
];

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

/** What a cluster waits for: promote, the end of a timed pause, or nothing. */
export function waitText(
  progress: CanaryClusterProgress,
  now: number = Date.now(),
): string | undefined {
  if (progress.awaitingPromote) return 'waiting for promote';
  if (progress.pauseUntil)
    return `pause until ${formatRelative(progress.pauseUntil, now)}`;
  if (progress.pauseRemainingMs)
    return `pause held, ${Math.ceil(progress.pauseRemainingMs / 1000)} s left`;
  return undefined;
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
