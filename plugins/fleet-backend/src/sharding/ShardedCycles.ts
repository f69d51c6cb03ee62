import type { LoggerService } from '@backstage/backend-plugin-api';
import type { HealthCycleSummary } from '@cnp/plugin-fleet-common';
import { asError } from '../util/errors';
import { ShardLeases, type ShardLeasesOptions } from './ShardLeases';
import type { LeaseRun, ShardOwnership } from './types';

export interface ShardedCyclesOptions {
  state: ShardLeasesOptions['state'];
  sharding: ShardLeasesOptions['sharding'];
  logger: LoggerService;
  /** The health cycle's interval: a scheduled cycle skips shards a takeover probed within half. */
  intervalMs: number;
  /** One cycle over the clusters of the shards of `runs`, each written under its shard's lease. */
  cycle: (runs: Map<number, LeaseRun>) => Promise<HealthCycleSummary>;
}

/**
 * When the cycles of a replica with shards run: each over the shards it holds (kept between
 * cycles, never taken per run), and, as soon as it takes over a dead replica's shards, one over
 * those alone, so their clusters do not miss a cycle.
 */
export class ShardedCycles {
  private readonly leases: ShardLeases;
  /** The cycle under way in this process, which other callers share. */
  private run?: Promise<HealthCycleSummary>;
  /** When a takeover cycle probed a shard's run (see `cycleOverHeld`). */
  private readonly takeoverProbedAt = new WeakMap<LeaseRun, number>();
  /** The cycle over shards taken over while no cycle ran (`probeTakenOver`). */
  private takeoverRun: Promise<unknown> | undefined;

  private constructor(private readonly options: ShardedCyclesOptions) {
    this.leases = ShardLeases.create({
      state: options.state,
      sharding: options.sharding,
      logger: options.logger,
      onTakenOver: taken => this.probeTakenOver(taken),
    });
  }

  static create(options: ShardedCyclesOptions): ShardedCycles {
    return new ShardedCycles(options);
  }

  /** Starts claiming and renewing shards every third of a shard lease. */
  start(): void {
    this.leases.startKeepAlive();
  }

  /** See `ShardLeases.claimShards`. */
  claimShards(): Promise<number[]> {
    return this.leases.claimShards();
  }

  /** The clusters this replica holds, for the reconcile and the watches. */
  ownership(): ShardOwnership {
    return this.leases.ownership();
  }

  /**
   * A cycle over the shards held; a run asked while one is under way in this process shares it.
   * A `scheduled` one leaves out the shards a takeover cycle probed less than half an interval
   * ago (that was their cycle); a manual run probes them all.
   */
  runCycle(opts: { scheduled: boolean }): Promise<HealthCycleSummary> {
    this.run ??= this.cycleOverHeld(opts.scheduled).finally(() => {
      this.run = undefined;
    });
    return this.run;
  }

  /** Claims shards, then runs a cycle over the clusters of those it holds. */
  private async cycleOverHeld(scheduled: boolean): Promise<HealthCycleSummary> {
    // A cycle over shards just taken over finishes first: the two would probe them together.
    await this.takeoverRun;
    await this.leases.claimShards();
    // The shards held now are this cycle's (one lost meanwhile has its writes refused).
    const now = Date.now();
    const recent = scheduled ? this.options.intervalMs / 2 : 0;
    return this.cycleWithTakeovers(
      new Map(
        [...this.leases.held].filter(
          ([, run]) => !(now - (this.takeoverProbedAt.get(run) ?? 0) < recent),
        ),
      ),
    );
  }

  /**
   * A cycle over the shards of `runs`; then, while this replica is running, over the shards it
   * took over meanwhile from a replica that died, so that their clusters do not wait for the
   * next interval and miss a second cycle.
   */
  private async cycleWithTakeovers(
    runs: Map<number, LeaseRun>,
  ): Promise<HealthCycleSummary> {
    const { leases } = this;
    // The shards held when it starts are covered: this cycle's, and, for a cycle over shards just
    // taken over, the replica's own (its scheduled cycle probes them).
    const covered = new Map([...leases.held, ...runs]);
    leases.cycling = true;
    const renew = setInterval(
      () => leases.renewInTurn(),
      this.options.sharding.leaseMs / 3,
    );
    try {
      const summary = await this.options.cycle(runs);
      // Each round is for shards taken during the one before (bounded for safety).
      for (let round = 0; round < 10 && leases.running; round++) {
        // Only shards whose holder let them lapse (a shard let go by a live replica was probed
        // by it).
        const taken = new Map(
          [...leases.held].filter(
            ([shard, run]) =>
              covered.get(shard) !== run && leases.wasLapsed(run),
          ),
        );
        if (taken.size === 0) break;
        for (const [shard, run] of taken) covered.set(shard, run);
        await this.takeoverRound(taken);
      }
      return summary;
    } finally {
      clearInterval(renew);
      leases.cycling = false;
    }
  }

  private async takeoverRound(taken: Map<number, LeaseRun>): Promise<void> {
    this.options.logger.info(
      `Probing health shard(s) ${[...taken.keys()].join(
        ', ',
      )}, taken over from a replica that stopped`,
    );
    try {
      await this.options.cycle(taken);
      for (const run of taken.values())
        this.takeoverProbedAt.set(run, Date.now());
    } catch (error) {
      this.options.logger.warn(
        'Health cycle over the shards taken over failed',
        asError(error),
      );
    }
  }

  /**
   * Once started, shards just taken over from a replica that died are probed at once, by a cycle
   * over them alone (the dead replica's cycle for them, not an extra one for the others); a cycle
   * under way takes them in after its own (see `cycleWithTakeovers`).
   */
  private probeTakenOver(taken: Map<number, LeaseRun>): void {
    if (
      !this.leases.running ||
      this.leases.cycling ||
      this.run ||
      this.takeoverRun
    )
      return;
    this.takeoverRun = this.cycleWithTakeovers(taken)
      .then(summary => {
        for (const run of taken.values())
          this.takeoverProbedAt.set(run, Date.now());
        return summary;
      })
      .catch(error =>
        this.options.logger.warn(
          'Health cycle over the shards taken over failed',
          asError(error),
        ),
      )
      .finally(() => {
        this.takeoverRun = undefined;
      });
  }

  /**
   * Stops claiming and renewing. With `release`, the shards and the presence are let go at once
   * (a clean shutdown); without, they expire after one shard lease.
   */
  async stop(opts: { release?: boolean } = {}): Promise<void> {
    await this.leases.halt();
    // A cycle over shards taken over is waited for 10 s at most; it may go on after that, its
    // writes fenced by leases no longer renewed.
    await Promise.race([
      this.takeoverRun,
      new Promise(resolve => setTimeout(resolve, 10_000).unref()),
    ]);
    await this.leases.settled();
    if (opts.release) await this.leases.release();
  }
}
