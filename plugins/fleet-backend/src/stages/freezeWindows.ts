import type { ClusterSelector, FreezeWindow } from '@cnp/plugin-fleet-common';
import { CronTime } from 'cron';
import {
  matchesSelector,
  parseLabelSelector,
} from '../kubernetes/labelSelector';
import { soakMs } from './stageRules';

/*
 * Freeze windows: times when releases to some clusters wait ("Friday evening is frozen"). A
 * window opens at each occurrence of a cron expression read in a time zone, or once at a given
 * instant, and stays open for a duration of elapsed time. Pure apart from the clock, which is
 * injected so that tests and callers can ask about any instant.
 */

/** A freeze window as the configuration gives it (`fleet.release.freezeWindows`). */
export interface FreezeWindowSpec {
  /** Unique among the windows, non-empty. */
  name: string;
  /** The clusters it freezes, as `kubectl -l` takes a selector; absent: every cluster. */
  clusterSelector?: string;
  /** When it opens: a 5-field cron expression, read in `timeZone`. Exactly one of cron/start. */
  cron?: string;
  /** Or: the ISO 8601 instant (with its offset) it opens once. */
  start?: string;
  /** How long it stays open: `30m`, `2h`, `3d` (the grammar of a stage's soak). */
  duration: string;
  /** The IANA time zone the cron expression is read in (`UTC` when the config gives none). */
  timeZone: string;
}

/** A cluster, as far as windows select it. */
export interface ClusterLabels {
  name: string;
  labels: Record<string, string>;
}

/** An open window and the clusters of a list it freezes. */
export interface FrozenBy {
  name: string;
  clusters: string[];
  closesAt: Date;
}

/** One problem of a list of windows: the window's index, the field (none: the window), what. */
export interface FreezeWindowIssue {
  index: number;
  field?: keyof FreezeWindowSpec;
  message: string;
}

/** An instant with its offset: a start without one would be read in the server's zone. */
const ISO_INSTANT =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * Chained openings (the next one before the current one closes) extend the window at most this
 * many times: a window that never closes (`* * * * *` open for an hour) still answers, with a
 * closesAt that is then the time to ask again (each step costs a cron computation).
 */
const MAX_CHAIN = 100;

function isTimeZone(timeZone: string): boolean {
  try {
    // Throws a RangeError for a zone Intl does not know.
    return !!new Intl.DateTimeFormat('en-US', { timeZone }).resolvedOptions()
      .timeZone;
  } catch {
    return false;
  }
}

/** What is wrong with a cron expression read in `timeZone`, or undefined. */
function cronIssue(cron: string, timeZone: string, now: Date) {
  if (cron.trim().split(/\s+/).length !== 5) {
    return `'${cron}' is not a 5-field cron expression (minute hour day-of-month month day-of-week)`;
  }
  try {
    new CronTime(cron, timeZone).getNextDateFrom(now, timeZone);
    return undefined;
  } catch (error) {
    return `'${cron}' is not a cron expression that ever comes: ${
      (error as Error).message.split('\n')[0]
    }`;
  }
}

/** The problems of one window, apart from its name's uniqueness. */
function specIssues(
  spec: FreezeWindowSpec,
  now: Date,
): Array<Omit<FreezeWindowIssue, 'index'>> {
  const issues: Array<Omit<FreezeWindowIssue, 'index'>> = [];
  const add = (field: keyof FreezeWindowSpec | undefined, message: string) =>
    issues.push(field ? { field, message } : { message });
  if (!spec.name || !spec.name.trim()) add('name', 'must not be empty');
  if ((spec.cron === undefined) === (spec.start === undefined)) {
    add(
      undefined,
      spec.cron === undefined
        ? 'needs cron or start'
        : 'give cron or start, not both',
    );
  }
  const timeZoneOk = isTimeZone(spec.timeZone);
  if (!timeZoneOk) {
    add('timeZone', `'${spec.timeZone}' is not an IANA time zone`);
  }
  if (spec.cron !== undefined) {
    const issue = cronIssue(spec.cron, timeZoneOk ? spec.timeZone : 'UTC', now);
    if (issue) add('cron', issue);
  }
  if (
    spec.start !== undefined &&
    (!ISO_INSTANT.test(spec.start) || Number.isNaN(Date.parse(spec.start)))
  ) {
    add(
      'start',
      `'${spec.start}' is not an ISO 8601 instant with its offset (e.g. 2026-12-24T18:00:00+01:00)`,
    );
  }
  if (!soakMs(spec.duration)) {
    add(
      'duration',
      `'${spec.duration}' is not a positive duration such as 30m, 2h or 3d`,
    );
  }
  if (
    spec.clusterSelector !== undefined &&
    !parseLabelSelector(spec.clusterSelector)
  ) {
    add(
      'clusterSelector',
      `'${spec.clusterSelector}' is not a label selector such as env=prod or env in (prod,dr)`,
    );
  }
  return issues;
}

/**
 * What is wrong with a list of windows: names unique and non-empty; exactly one of cron and
 * start; a cron expression of 5 fields that comes again; a time zone Intl knows; a start with its
 * offset; a positive duration; a selector that reads (an unreadable one must never freeze every
 * cluster, nor none). Empty when the list is good.
 */
export function freezeWindowIssues(
  specs: readonly FreezeWindowSpec[],
  now: Date = new Date(),
): FreezeWindowIssue[] {
  const seen = new Map<string, number>();
  return specs.flatMap((spec, index) => {
    const issues = specIssues(spec, now).map(issue => ({ index, ...issue }));
    const other = seen.get(spec.name);
    if (other !== undefined) {
      issues.push({
        index,
        field: 'name',
        message: `'${spec.name}' is the name of window ${other} already: names must be unique`,
      });
    } else {
      seen.set(spec.name, index);
    }
    return issues;
  });
}

/** A window made ready: its duration, selector and openings. */
interface Window {
  spec: FreezeWindowSpec;
  durationMs: number;
  /** Undefined: every cluster. */
  selector?: ClusterSelector;
  /** Its first opening strictly after `t`; undefined when it never opens again. */
  openingAfter(t: number): number | undefined;
}

/** When a window is open at an instant: since when, and until when. */
interface OpenSpan {
  openedAt: number;
  closesAt: number;
}

function compile(spec: FreezeWindowSpec): Window {
  const durationMs = soakMs(spec.duration) ?? 0;
  const selector =
    spec.clusterSelector === undefined
      ? undefined
      : parseLabelSelector(spec.clusterSelector);
  if (spec.cron !== undefined) {
    const { cron, timeZone } = spec;
    const cronTime = new CronTime(cron, timeZone);
    return {
      spec,
      durationMs,
      selector,
      openingAfter(t) {
        try {
          return cronTime.getNextDateFrom(new Date(t), timeZone).toMillis();
        } catch {
          // The cron package gives up when nothing comes within 8 years.
          return undefined;
        }
      },
    };
  }
  const start = Date.parse(spec.start ?? '');
  return {
    spec,
    durationMs,
    selector,
    openingAfter: t => (start > t ? start : undefined),
  };
}

/**
 * The span a window is open at `t`, if it is: its earliest opening that covers t (after
 * t - duration, at most t), closing a duration later, extended by each next opening that comes
 * before it closes.
 */
function openSpan(window: Window, t: number): OpenSpan | undefined {
  const { durationMs } = window;
  const openedAt = window.openingAfter(t - durationMs);
  if (openedAt === undefined || openedAt > t) return undefined;
  let closesAt = openedAt + durationMs;
  let next = window.openingAfter(openedAt);
  for (
    let i = 0;
    i < MAX_CHAIN && next !== undefined && next <= closesAt;
    i++
  ) {
    closesAt = Math.max(closesAt, next + durationMs);
    next = window.openingAfter(next);
  }
  return { openedAt, closesAt };
}

const iso = (ms: number | undefined) =>
  ms === undefined ? null : new Date(ms).toISOString();

/** The windows of the configuration, asked what they freeze at an instant. */
export class FreezeWindows {
  /** Throws on the first problem of the list (see freezeWindowIssues). */
  static create(
    specs: FreezeWindowSpec[],
    clock: () => Date = () => new Date(),
  ): FreezeWindows {
    const [issue] = freezeWindowIssues(specs, clock());
    if (issue) {
      const field = issue.field ? `.${issue.field}` : '';
      throw new Error(
        `Invalid freeze window [${issue.index}]${field}: ${issue.message}`,
      );
    }
    return new FreezeWindows(specs.map(compile), clock);
  }

  private constructor(
    private readonly windows: Window[],
    private readonly clock: () => Date,
  ) {}

  /**
   * The windows open at `now` (default: the clock) that freeze at least one of `clusters`, each
   * with the clusters of the list it freezes and when it closes; sorted by closesAt, latest
   * first (then by name).
   */
  frozen(clusters: ClusterLabels[], now: Date = this.clock()): FrozenBy[] {
    const t = now.getTime();
    return this.windows
      .flatMap(window => {
        const span = openSpan(window, t);
        const frozen = selected(window, clusters);
        return span && frozen.length > 0
          ? [
              {
                name: window.spec.name,
                clusters: frozen,
                closesAt: new Date(span.closesAt),
              },
            ]
          : [];
      })
      .sort(
        (a, b) =>
          b.closesAt.getTime() - a.closesAt.getTime() ||
          a.name.localeCompare(b.name),
      );
  }

  /**
   * Every window as `GET /freeze-windows` answers it, open ones first (each group in the
   * configuration's order); `clusters`: those of the list it selects. `nextOpensAt` is its next
   * opening after now, and for an open window after it closes (null when none comes).
   */
  list(clusters: ClusterLabels[], now: Date = this.clock()): FreezeWindow[] {
    const t = now.getTime();
    const answers = this.windows.map(window => {
      const { spec } = window;
      const span = openSpan(window, t);
      const answer: FreezeWindow = {
        name: spec.name,
        clusterSelector: spec.clusterSelector ?? null,
        cron: spec.cron ?? null,
        start: spec.start ?? null,
        duration: spec.duration,
        timeZone: spec.timeZone,
        open: span !== undefined,
        openedAt: iso(span?.openedAt),
        closesAt: iso(span?.closesAt),
        nextOpensAt: iso(window.openingAfter(span ? span.closesAt : t)),
        clusters: selected(window, clusters),
      };
      return answer;
    });
    return [...answers.filter(w => w.open), ...answers.filter(w => !w.open)];
  }
}

/** The names of the clusters a window selects (every one without a selector). */
function selected(window: Window, clusters: ClusterLabels[]): string[] {
  const { selector } = window;
  return clusters
    .filter(c => selector === undefined || matchesSelector(c.labels, selector))
    .map(c => c.name);
}
