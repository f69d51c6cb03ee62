/**
 * How the simulated Argo Rollouts controller (rollouts.ts) reads a Rollout's spec: replicas,
 * canary steps, pause durations (Argo's DurationSeconds), maxSurge / maxUnavailable.
 */
import { asArray, asObject, JsonObject } from './util';
import { templateHash } from './workloads';

export interface Step {
  setWeight?: number;
  pause?: { seconds?: number };
}

export interface Params {
  name: string;
  replicas: number;
  hash: string;
  steps: Step[];
  stepsKey: string;
  paused: boolean;
  maxSurge: number;
  maxUnavailable: number;
  deadlineMs: number;
  canary: boolean;
}

const GO_DURATION = /^([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+$/;
const UNIT_SECONDS: Record<string, number> = {
  ns: 1e-9,
  us: 1e-6,
  µs: 1e-6,
  μs: 1e-6,
  ms: 1e-3,
  s: 1,
  m: 60,
  h: 3600,
};

/**
 * Argo's RolloutPause.DurationSeconds: an integer is seconds, a string is a
 * bare integer (seconds) or a Go duration truncated to whole seconds; an
 * invalid string is -1.
 */
export function pauseDurationSeconds(duration: unknown): number {
  if (typeof duration === 'number') return Math.trunc(duration);
  if (typeof duration !== 'string') return 0;
  if (/^[-+]?\d+$/.test(duration)) return Number(duration);
  let text = duration;
  let sign = 1;
  if (text.startsWith('-') || text.startsWith('+')) {
    sign = text.startsWith('-') ? -1 : 1;
    text = text.slice(1);
  }
  if (text === '0') return 0;
  if (!GO_DURATION.test(text)) return -1;
  let seconds = 0;
  for (const m of text.matchAll(
    /([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)/g,
  )) {
    if (m[1] === '' || m[1] === '.') return -1;
    seconds += Number(m[1]) * UNIT_SECONDS[m[2]];
  }
  return sign * Math.trunc(seconds + 1e-9);
}

function intOrPercent(value: unknown, total: number, roundUp: boolean) {
  if (typeof value === 'number') return value;
  const m = typeof value === 'string' ? value.match(/^(\d+)%$/) : null;
  if (!m)
    return typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : 0;
  const exact = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

export function params(obj: JsonObject): Params {
  const spec = asObject(obj.spec) ?? {};
  const replicas = typeof spec.replicas === 'number' ? spec.replicas : 1;
  const strategy = asObject(spec.strategy) ?? {};
  const canary = asObject(strategy.canary);
  const rawSteps = canary ? asArray(canary.steps) : [];
  const steps: Step[] = rawSteps.map(raw => {
    const s = asObject(raw) ?? {};
    if (typeof s.setWeight === 'number') return { setWeight: s.setWeight };
    if (s.pause !== undefined) {
      const p = asObject(s.pause) ?? {};
      return p.duration === undefined
        ? { pause: {} }
        : { pause: { seconds: pauseDurationSeconds(p.duration) } };
    }
    return {}; // a step kind not simulated (analysis, experiment...): passes at once
  });
  let maxSurge: number;
  let maxUnavailable: number;
  if (canary || !asObject(strategy.blueGreen)) {
    maxSurge = intOrPercent(canary?.maxSurge ?? '25%', replicas, true);
    maxUnavailable = Math.min(
      intOrPercent(canary?.maxUnavailable ?? 0, replicas, false),
      replicas,
    );
    if (maxSurge === 0 && maxUnavailable === 0) maxSurge = 1;
  } else {
    maxSurge = replicas; // blueGreen: a full preview RS
    maxUnavailable = 0;
  }
  return {
    name: String(asObject(obj.metadata)?.name ?? ''),
    replicas,
    hash: templateHash(spec.template),
    steps,
    stepsKey: JSON.stringify(rawSteps),
    paused: spec.paused === true,
    maxSurge,
    maxUnavailable,
    deadlineMs:
      (typeof spec.progressDeadlineSeconds === 'number'
        ? spec.progressDeadlineSeconds
        : 600) * 1000,
    canary: Boolean(canary),
  };
}
