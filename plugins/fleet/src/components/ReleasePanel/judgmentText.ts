import type { CanaryJudgment, CanaryVerdict } from '@cnp/plugin-fleet-common';
import { valueText } from './releaseText';

/** One judged metric of a judgment. */
export type JudgedMetric = CanaryJudgment['metrics'][number];

/** What stands in a cell for a number a metric without data does not have. */
export const NO_VALUE = '—';

/** A median, short (4 significant digits), or a dash when the metric had no data. */
export function medianText(value: number | null): string {
  return value === null ? NO_VALUE : valueText(value);
}

/**
 * The canary's median relative to the baseline's, in percent: "+30 %", "-12 %", "+2.5 %"
 * (one decimal under 10 %, so a small shift does not read as none). A dash without both medians
 * or against a baseline of 0, where a ratio means nothing.
 */
export function changeText(metric: JudgedMetric): string {
  const { canaryMedian: canary, baselineMedian: baseline } = metric;
  if (canary === null || baseline === null) return NO_VALUE;
  if (baseline === 0) return canary === 0 ? '0 %' : NO_VALUE;
  const change = (100 * (canary - baseline)) / Math.abs(baseline);
  const rounded =
    Math.abs(change) < 10 ? Math.round(change * 10) / 10 : Math.round(change);
  if (rounded === 0) return '0 %';
  return `${rounded > 0 ? '+' : ''}${rounded} %`;
}

/** The two-sided p-value to 3 significant digits, "< 0.001" below that, a dash without data. */
export function pText(p: number | null): string {
  if (p === null || Number.isNaN(p)) return NO_VALUE;
  if (p < 0.001) return '< 0.001';
  return p.toPrecision(3);
}

/**
 * What p was held against, for the p cell's title: the level at that look and the serial
 * correlation counted; undefined for a judgment kept before they were recorded, or without data.
 */
export function levelText(metric: {
  p: number | null;
  alpha?: number | null;
  serialCorrelation?: number | null;
}): string | undefined {
  if (metric.p === null || metric.alpha === null || metric.alpha === undefined)
    return undefined;
  const correlation =
    metric.serialCorrelation === null || metric.serialCorrelation === undefined
      ? ''
      : `, counting a serial correlation of ${metric.serialCorrelation.toFixed(
          2,
        )}`;
  return `p held against a level of ${metric.alpha.toPrecision(
    3,
  )} at this look${correlation}`;
}

const verdictMeaning: Record<CanaryVerdict, string> = {
  Pass: 'goes on',
  Marginal: 'paused for a human',
  Fail: 'fails the step',
};

/** "Score 67 — Marginal: paused for a human": the score rounded, what the verdict does. */
export function verdictText(judgment: CanaryJudgment): string {
  const meaning = verdictMeaning[judgment.verdict];
  return `Score ${Math.round(judgment.score)} — ${judgment.verdict}${
    meaning ? `: ${meaning}` : ''
  }`;
}

/**
 * The judgments of each cluster, newest first, clusters in the order given (the waves' order),
 * then any cluster the waves do not name. Newest by time, then by step: the API keeps them
 * oldest first, but a list joined from elsewhere need not be.
 */
export function judgmentsByCluster(
  judgments: CanaryJudgment[],
  clusters: string[],
): Array<[string, CanaryJudgment[]]> {
  const byCluster = new Map<string, CanaryJudgment[]>(
    clusters.map(c => [c, []]),
  );
  for (const j of judgments) {
    const list = byCluster.get(j.cluster) ?? [];
    list.push(j);
    byCluster.set(j.cluster, list);
  }
  return [...byCluster.entries()]
    .filter(([, list]) => list.length > 0)
    .map(([cluster, list]) => [
      cluster,
      [...list].sort(
        (a, b) =>
          Date.parse(b.at) - Date.parse(a.at) || b.stepIndex - a.stepIndex,
      ),
    ]);
}
