import type { AnalysisTemplate } from '@cnp/plugin-fleet-common';
import {
  fillQuery,
  getPrometheus,
  promNumber,
  type AnalysisContext,
  type PrometheusRequestOptions,
} from '../analysis';
import { DEFAULT_ANALYSIS_INTERVAL_MS } from '../releaseMachine';
import { parseDuration } from '../strategy';

/** The two sides a compared template's query is read for. */
export type Variant = 'canary' | 'baseline';

/** The most steps Prometheus answers in one range (11,000, so 11,001 points). */
export const MAX_RANGE_STEPS = 11_000;

/** The samples of one side over a window, or why there are none, in Fleet's words. */
export type RangeResult =
  | { kind: 'values'; values: number[] }
  | { kind: 'error'; message: 'error' | 'unreachable' };

/** A window read: from `startMs` to `endMs`, one point every `stepMs`. */
export interface RangeWindow {
  startMs: number;
  endMs: number;
  stepMs: number;
}

/** How often a compared template's series is sampled: its interval, else 60 s. */
export function resolutionMs(template: AnalysisTemplate): number {
  return (
    (template.interval !== undefined && parseDuration(template.interval)) ||
    DEFAULT_ANALYSIS_INTERVAL_MS
  );
}

/**
 * The window of a step for a template: its resolution, widened when the step is so long that
 * the range would have more steps than Prometheus answers.
 */
export function rangeWindow(
  template: AnalysisTemplate,
  startMs: number,
  endMs: number,
): RangeWindow {
  const span = Math.max(0, endMs - startMs);
  const stepMs = Math.max(
    resolutionMs(template),
    Math.ceil(span / MAX_RANGE_STEPS),
  );
  return { startMs, endMs, stepMs };
}

/** The points a window holds: one at its start, then one per whole step. */
export function pointsIn(window: RangeWindow): number {
  if (window.endMs < window.startMs) return 0;
  return Math.floor((window.endMs - window.startMs) / window.stepMs) + 1;
}

/** The query of one side: `{{variant}}` is `canary` or `baseline`, the rest as measure fills it. */
export function variantQuery(
  query: string,
  variant: Variant,
  context: AnalysisContext,
): string {
  return fillQuery(query.replace(/\{\{\s*variant\s*\}\}/g, variant), context);
}

/**
 * Reads a range answer (`resultType: matrix`): every series' values, in order. An error answer
 * or another shape is an error; an empty matrix is no values (too few samples: `NoData`).
 */
function readMatrix(body: any): RangeResult {
  const data = body?.status === 'success' ? body.data : undefined;
  if (data?.resultType !== 'matrix' || !Array.isArray(data.result))
    return { kind: 'error', message: 'error' };
  const values: number[] = [];
  for (const series of data.result) {
    if (!Array.isArray(series?.values))
      return { kind: 'error', message: 'error' };
    for (const point of series.values) values.push(promNumber(point?.[1]));
  }
  return { kind: 'values', values };
}

/**
 * One side of a compared template over a window, by `GET /api/v1/query_range` on the template's
 * Prometheus, with the same allow-list, timeout, refused redirects, size bound and words as a
 * measurement (see `getPrometheus`).
 */
export async function queryRange(
  template: AnalysisTemplate,
  variant: Variant,
  context: AnalysisContext,
  window: RangeWindow,
  options: PrometheusRequestOptions = {},
): Promise<RangeResult> {
  const prometheus = template.provider.prometheus;
  if (!prometheus) return { kind: 'error', message: 'error' };
  const got = await getPrometheus(
    prometheus.address,
    'api/v1/query_range',
    {
      query: variantQuery(prometheus.query, variant, context),
      start: (window.startMs / 1000).toFixed(3),
      end: (window.endMs / 1000).toFixed(3),
      step: `${window.stepMs / 1000}`,
    },
    options,
  );
  return got.kind === 'body' ? readMatrix(got.body) : got;
}

/** How the orchestrator reads one side (injected in tests, bound to the allow-list in the plugin). */
export type QueryRange = (
  template: AnalysisTemplate,
  variant: Variant,
  context: AnalysisContext,
  window: RangeWindow,
  options: { timeoutMs?: number },
) => Promise<RangeResult>;
