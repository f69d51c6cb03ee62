/**
 * The parameters of Prometheus' range query API (`/api/v1/query_range`),
 * checked in Prometheus' order and with its messages, so that a client's
 * handling of a 400 `bad_data` answer is tested against what it will meet.
 */

/** Prometheus refuses a range query with more points per series than this (plus one). */
export const MAX_POINTS_PER_SERIES = 11_000;

export interface RangeParams {
  query: string;
  /** Milliseconds since the epoch, as Prometheus keeps timestamps. */
  startMs: number;
  endMs: number;
  stepMs: number;
}

const FLOAT = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;
const RFC3339 =
  /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[-+]\d{2}:\d{2})$/;
const DURATION =
  /^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/;
const UNIT_MS = [
  365 * 86_400_000,
  7 * 86_400_000,
  86_400_000,
  3_600_000,
  60_000,
  1_000,
  1,
];

/** Unix seconds (decimals allowed, kept to the millisecond) or RFC 3339, as milliseconds. */
export function parseTimestampMs(raw: string): number | undefined {
  if (FLOAT.test(raw)) {
    const seconds = Number(raw);
    return Number.isFinite(seconds) ? Math.round(seconds * 1000) : undefined;
  }
  if (!RFC3339.test(raw)) return undefined;
  const ms = Date.parse(raw);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Float seconds or a Prometheus duration (`15s`, `1m`, `1h30m`, `500ms`), as milliseconds. */
export function parseDurationMs(raw: string): number | undefined {
  if (FLOAT.test(raw)) {
    const seconds = Number(raw);
    return Number.isFinite(seconds) ? Math.trunc(seconds * 1000) : undefined;
  }
  const m = DURATION.exec(raw);
  if (!m || raw === '') return undefined;
  return UNIT_MS.reduce(
    (sum, unit, i) => sum + Number(m[i + 1] ?? 0) * unit,
    0,
  );
}

/** The range query of `params`, or the message of Prometheus' 400 `bad_data` answer. */
export function parseRangeParams(
  params: URLSearchParams,
): RangeParams | string {
  const get = (name: string) => params.get(name) ?? '';
  const startMs = parseTimestampMs(get('start'));
  if (startMs === undefined)
    return `invalid parameter "start": cannot parse "${get(
      'start',
    )}" to a valid timestamp`;
  const endMs = parseTimestampMs(get('end'));
  if (endMs === undefined)
    return `invalid parameter "end": cannot parse "${get(
      'end',
    )}" to a valid timestamp`;
  if (endMs < startMs) return 'end timestamp must not be before start time';
  const stepMs = parseDurationMs(get('step'));
  if (stepMs === undefined)
    return `invalid parameter "step": cannot parse "${get(
      'step',
    )}" to a valid duration`;
  // A step under a millisecond is below Prometheus' resolution: no step at all.
  if (stepMs <= 0)
    return 'zero or negative query resolution step widths are not accepted. Try a positive integer';
  if (Math.floor((endMs - startMs) / stepMs) > MAX_POINTS_PER_SERIES)
    return 'exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)';
  const query = get('query');
  if (!query.trim())
    return 'invalid parameter "query": 1:1: parse error: no expression found in input';
  return { query, startMs, endMs, stepMs };
}

/** The timestamps of a range query's points: start, start + step, ... up to end inclusive. */
export function stepTimestamps(range: RangeParams): number[] {
  const out: number[] = [];
  for (let t = range.startMs; t <= range.endMs; t += range.stepMs) out.push(t);
  return out;
}
