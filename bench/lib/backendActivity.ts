/*
 * What a backend ran in the background while something was measured, read from the database it
 * writes (polled every second): its health cycles (the summary each cycle stores in `fleet_state`,
 * `lastCycle`, with its start and end; a cycle under way, scheduled or run on demand, from its
 * lease in `fleet_locks`, or from the scheduler's row of `fleet-health-cycle`) and its reconcile runs (the scheduler's row of `fleet-reconcile`: the run
 * under way, `current_run_started_at`, and each run's end, `last_run_ended_at`). A cycle or run
 * counts for a window when it overlaps it: ended after the window's start, or still under way at
 * its end. Unsharded backends only (their tasks are the scheduler's global ones, in the table).
 */
import type { Knex } from 'knex';
import { ms } from '@cnp/fleet-harness';

/** What ran during a window. */
export interface Activity {
  /** Health cycles that overlapped the window (ended in it, or under way at its end). */
  healthCycles: number;
  /** The durations of those that ended, ms. */
  healthCycleMs: number[];
  /** Reconcile runs that overlapped the window. */
  reconcileRuns: number;
  /** Of those, still under way at the window's end: 'health cycle', 'reconcile run'. */
  underWay: string[];
}

interface Run {
  start?: number;
  end?: number;
}

const HEALTH_TASK = 'fleet-health-cycle';
const RECONCILE_TASK = 'fleet-reconcile';

export function watchBackendActivity(knex: Knex, everyMs = 1000) {
  const cycles = new Map<number, Run>();
  const reconciles: Run[] = [];
  let healthRunning: number | undefined;
  /** The holder of the health cycle's lease now, and when it was first seen holding it. */
  let leaseHolder: string | undefined;
  const holderSeen = new Map<string, number>();
  let reconcileRunning: number | undefined;
  /** Runs and claims that began before this were a stopped backend's (see `restartedAt`). */
  let ignoreBefore = 0;
  const time = (v: unknown) =>
    v === null || v === undefined ? undefined : new Date(v as any).getTime();
  const poll = async () => {
    const row = await knex('fleet_state').where({ key: 'lastCycle' }).first();
    if (row) {
      const c = JSON.parse(row.value);
      const start = Date.parse(c.startedAt);
      cycles.set(start, { start, end: Date.parse(c.finishedAt) });
    }
    const lease = await knex('fleet_locks')
      .where({ name: 'health-cycle' })
      .first()
      .catch(() => undefined);
    const held =
      lease && new Date(lease.expires_at).getTime() > Date.now()
        ? String(lease.holder)
        : undefined;
    if (held && !holderSeen.has(held)) holderSeen.set(held, Date.now());
    leaseHolder = held;
    const tasks = await knex('backstage_backend_tasks__tasks')
      .whereIn('id', [HEALTH_TASK, RECONCILE_TASK])
      .select('id', 'current_run_started_at', 'last_run_ended_at');
    for (const t of tasks) {
      const claimed = time(t.current_run_started_at);
      // A claim left by a backend stopped mid-run stays until its timeout: not a run under way.
      const started =
        claimed !== undefined && claimed >= ignoreBefore ? claimed : undefined;
      if (t.id === HEALTH_TASK) {
        healthRunning = started;
        continue;
      }
      reconcileRunning = started;
      const ended = time(t.last_run_ended_at);
      if (ended !== undefined && !reconciles.some(r => r.end === ended)) {
        // The run that ended: the one seen under way, or one too short to be seen.
        const open = reconciles.find(
          r => r.end === undefined && r.start! <= ended,
        );
        if (open) open.end = ended;
        else reconciles.push({ end: ended });
      }
      if (started !== undefined && !reconciles.some(r => r.start === started))
        reconciles.push({ start: started });
    }
  };
  let polling = true;
  const poller = (async () => {
    while (polling) {
      await poll().catch(() => undefined);
      await new Promise(r => setTimeout(r, everyMs));
    }
  })();
  return {
    /** What overlapped [from, now], read afresh. */
    async since(from: number): Promise<Activity> {
      await poll().catch(() => undefined);
      const ended = [...cycles.values()].filter(c => c.end! > from);
      const underWay: string[] = [];
      // A lease held by a run whose summary is not written yet, or a scheduled run under way.
      const leaseRun =
        leaseHolder !== undefined &&
        ![...cycles.values()].some(
          c => c.end! >= holderSeen.get(leaseHolder!)!,
        );
      const scheduledRun =
        healthRunning !== undefined &&
        ![...cycles.values()].some(c => c.start! >= healthRunning!);
      if (leaseRun || scheduledRun) underWay.push('health cycle');
      const runs = reconciles.filter(r =>
        r.end === undefined
          ? r.start === reconcileRunning || r.start! > from
          : r.end > from,
      );
      if (reconcileRunning !== undefined) underWay.push('reconcile run');
      return {
        healthCycles:
          ended.length + (underWay.includes('health cycle') ? 1 : 0),
        healthCycleMs: ended
          .sort((a, b) => a.start! - b.start!)
          .map(c => c.end! - c.start!),
        reconcileRuns: runs.length,
        underWay,
      };
    },
    /**
     * The backend was stopped and another started at `at`: a run the stopped one had claimed is
     * not under way any more (its claim stays in the table until its timeout).
     */
    restartedAt(at: number) {
      ignoreBefore = at;
      for (const r of reconciles) {
        if (r.end === undefined && r.start! < at) r.end = at;
      }
    },
    async stop() {
      polling = false;
      await poller;
    },
  };
}

/** "2 health cycles (4.1 s / 3.9 s) and 3 reconcile runs (1 under way at the end)". */
export function activityLine(a: Activity): string {
  const cycles = `${a.healthCycles} health cycle${
    a.healthCycles === 1 ? '' : 's'
  }${
    a.healthCycleMs.length ? ` (${a.healthCycleMs.map(ms).join(' / ')})` : ''
  }`;
  const runs = `${a.reconcileRuns} reconcile run${
    a.reconcileRuns === 1 ? '' : 's'
  }`;
  return `${cycles} and ${runs}${
    a.underWay.length ? ` (${a.underWay.join(', ')} under way at the end)` : ''
  }`;
}

/** How a backend ran during a measure, to print on the line of each figure. */
export interface MeasureConditions {
  /** A quiet backend (health cycle and reconcile every hour), or one running as a user runs it. */
  quiet: boolean;
  watch: boolean;
  /** Watches the simulator served at the end of the measure. */
  openWatches: number;
  /** Deployments whose objects were applied on the clusters. */
  objectsApplied: number;
  healthIntervalMs: number;
  reconcileIntervalMs: number;
  /** The backend was restarted before the measure. */
  restarted: boolean;
  measureMs: number;
  /** What ran during the whole measure. */
  activity: Activity;
}

export function conditionsLine(c: MeasureConditions): string {
  const every = (v: number) =>
    v >= 3_600_000 ? 'every hour' : `every ${Math.round(v / 1000)} s`;
  return `${c.quiet ? 'quiet backend' : 'running backend'}: watches ${
    c.watch ? `on (${c.openWatches} open)` : 'off'
  }, ${
    c.objectsApplied
      ? `objects of ${c.objectsApplied} deployments applied`
      : 'no objects applied'
  }, health cycle ${every(c.healthIntervalMs)}, reconcile ${every(
    c.reconcileIntervalMs,
  )}${
    c.restarted ? ', backend restarted before the measure' : ''
  }; during the measure (${ms(c.measureMs)}) ${activityLine(c.activity)}`;
}
