import type { LoggerService } from '@backstage/backend-plugin-api';
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import type { FleetConfig } from '../config/FleetConfig';
import type { FleetStateStore } from '../database/types';
import { asError } from '../util/errors';
import { shardOf } from './shardOf';
import type { LeaseRun, ShardOwnership } from './types';

/** Each shard is a lease of its own: `health-cycle:shard-<i>`. */
export const SHARD_LEASE_PREFIX = 'health-cycle:shard-';
/** Each replica holds one of these while it runs, so replicas count each other. */
export const PRESENCE_LEASE_PREFIX = 'health-presence:';
/** A claim meant for a lease's expiry runs this long after it (`takeLease` wants it past). */
const EXPIRY_MARGIN_MS = 25;

export interface ShardLeasesOptions {
  state: Pick<
    FleetStateStore,
    'takeLease' | 'releaseLease' | 'listLeases' | 'deleteExpiredLeases'
  >;
  sharding: NonNullable<FleetConfig['health']['sharding']>;
  logger: LoggerService;
  /** Hears the shards a claim took over from a replica that let them lapse (it died). */
  onTakenOver?: (taken: Map<number, LeaseRun>) => void;
}

/**
 * The shard leases of one replica: claims free or expired shards up to its fair share, renews
 * those it holds, lets extra ones go when a replica joins, takes over a dead replica's as soon
 * as their leases run out, and releases them all on a clean stop.
 */
export class ShardLeases {
  /** The holder of this replica's shard and presence leases, for its lifetime. */
  readonly replica = `${os.hostname()}-${process.pid}-${randomUUID().slice(
    0,
    8,
  )}`;
  /** The shards this replica holds, each with its lease. */
  private readonly heldRuns = new Map<number, LeaseRun>();
  /** Claims run one at a time (the keep-alive timer, a cycle's own claim, renewals). */
  private claiming: Promise<unknown> = Promise.resolve();
  private keepAlive?: NodeJS.Timeout;
  /** A claim set for when another replica's lease runs out (it stopped renewing). */
  private expiryClaim?: NodeJS.Timeout;
  private expiryClaimAt = 0;
  private stopped = false;
  /** A cycle is writing under the shards it claimed; none is let go meanwhile. */
  cycling = false;
  /** The runs of shards taken from a replica that let them lapse (it died). */
  private readonly lapsedTaken = new WeakSet<LeaseRun>();

  private constructor(private readonly options: ShardLeasesOptions) {}

  static create(options: ShardLeasesOptions): ShardLeases {
    return new ShardLeases(options);
  }

  /** Claims and renews every third of a shard lease, so a stopped replica's are taken within one. */
  startKeepAlive(): void {
    this.keepAlive = setInterval(() => {
      this.claimShards().catch(error =>
        this.options.logger.warn(
          'Claiming health shards failed',
          asError(error),
        ),
      );
    }, this.options.sharding.leaseMs / 3);
    this.keepAlive.unref?.();
  }

  /** Started and not stopped: claiming, renewing and taking over. */
  get running(): boolean {
    return Boolean(this.keepAlive) && !this.stopped;
  }

  /** The shards held, each with its run. */
  get held(): ReadonlyMap<number, LeaseRun> {
    return this.heldRuns;
  }

  /** Whether a shard's run was taken from a replica that let its lease lapse. */
  wasLapsed(run: LeaseRun): boolean {
    return this.lapsedTaken.has(run);
  }

  /** The clusters of the shards held whose lease was not lost; none once stopped. */
  ownership(): ShardOwnership {
    const { shards } = this.options.sharding;
    return {
      current: () => {
        const held = new Set(
          this.stopped
            ? []
            : [...this.heldRuns].filter(([, run]) => !run.lost).map(([s]) => s),
        );
        return {
          holdsCluster: cluster => held.has(shardOf(cluster, shards)),
        };
      },
    };
  }

  /**
   * Renews this replica's presence and its shards, then takes free or expired shards up to its
   * fair share, ceil(shards / live replicas); with more than its share (a replica joined), it
   * lets the extra ones go for the others to take. Answers the shards held.
   */
  async claimShards(): Promise<number[]> {
    const claim = this.claiming.then(() => this.claimOnce());
    this.claiming = claim.catch(() => undefined);
    return claim;
  }

  /** Renews the shards held after the claims under way (during a cycle). */
  renewInTurn(): void {
    this.claiming = this.claiming
      .then(() => this.renewHeld())
      .catch(() => undefined);
  }

  private async claimOnce(): Promise<number[]> {
    const { state } = this.options;
    if (this.stopped) return [...this.heldRuns.keys()];
    const { shards, leaseMs } = this.options.sharding;
    await state.takeLease(
      `${PRESENCE_LEASE_PREFIX}${this.replica}`,
      this.replica,
      leaseMs,
    );
    await this.renewHeld();
    // Each process has a presence of its own: those of replicas gone for a lease period and more
    // are deleted, so restarts and rolling deploys do not pile rows up.
    await state.deleteExpiredLeases(PRESENCE_LEASE_PREFIX, leaseMs);
    // Whether a lease has run out is the database's word (its `remainingMs`), never a
    // comparison with this replica's clock, which may be off; this clock only measures the time
    // since the listing, to know when each lease runs out from here.
    const listedAt = Date.now();
    const shardLeases = (await state.listLeases(SHARD_LEASE_PREFIX)).map(
      lease => ({ ...lease, runsOutAt: listedAt + lease.remainingMs }),
    );
    const presences = await state.listLeases(PRESENCE_LEASE_PREFIX);
    // A replica renews its presence before its shards, so a dead one's presence runs out no
    // later than its shard leases.
    const live = presences.filter(
      lease => lease.holder === this.replica || lease.remainingMs > 0,
    ).length;
    const fairShare = Math.ceil(shards / Math.max(1, live));
    if (!this.cycling) await this.releaseExtra(fairShare);
    const leases = new Map(shardLeases.map(l => [l.name, l]));
    const tookOver = new Map<number, LeaseRun>();
    for (
      let shard = 0;
      shard < shards && this.heldRuns.size < fairShare;
      shard++
    ) {
      if (this.heldRuns.has(shard)) continue;
      const name = `${SHARD_LEASE_PREFIX}${shard}`;
      const current = leases.get(name);
      // The time now, not the claim's start: a lease may run out while the ones before it
      // are taken (a dead replica's leases run out a few milliseconds apart).
      if (
        current &&
        current.holder !== this.replica &&
        current.runsOutAt > Date.now()
      ) {
        continue;
      }
      const taken = await state.takeLease(name, this.replica, leaseMs);
      if (!taken) continue;
      const run = { lease: taken, lost: false };
      this.heldRuns.set(shard, run);
      // Another holder's row is taken only once run out: one not let go (epoch) had lapsed.
      if (
        current &&
        current.holder !== this.replica &&
        Date.parse(current.expiresAt) > 0
      ) {
        tookOver.set(shard, run);
        this.lapsedTaken.add(run);
        this.options.logger.info(
          `Took over health shard ${shard} of ${shards} from ${current.holder}, whose lease had expired`,
          { shard, previousHolder: current.holder },
        );
      }
    }
    if (tookOver.size > 0) this.options.onTakenOver?.(tookOver);
    this.claimAtExpiry(
      [...leases.values()]
        .filter(
          lease =>
            lease.holder !== this.replica &&
            !this.heldRuns.has(
              Number(lease.name.slice(SHARD_LEASE_PREFIX.length)),
            ),
        )
        .map(lease => lease.runsOutAt),
      this.heldRuns.size < fairShare,
    );
    return [...this.heldRuns.keys()].sort((a, b) => a - b);
  }

  /** Lets the shards above the fair share go, the highest first (never during a cycle). */
  private async releaseExtra(fairShare: number): Promise<void> {
    const extra = [...this.heldRuns.keys()]
      .sort((a, b) => b - a)
      .slice(0, Math.max(0, this.heldRuns.size - fairShare));
    for (const shard of extra) {
      this.heldRuns.get(shard)!.lost = true;
      this.heldRuns.delete(shard);
      await this.options.state.releaseLease(
        `${SHARD_LEASE_PREFIX}${shard}`,
        this.replica,
      );
    }
  }

  /**
   * Once started: when another replica's shard lease runs out before this one's next claim, that
   * replica stopped renewing (a live one renews every third of a lease, so its leases always run
   * a third of one past the next claim): it died or stalls. Claims again as soon as the lease
   * runs out, so its shards are taken one lease period after its last renewal at most, not up to
   * a third of one later at the next periodic claim.
   */
  private claimAtExpiry(expiries: number[], belowShare: boolean): void {
    const { leaseMs } = this.options.sharding;
    if (!this.running) return;
    const now = Date.now();
    // Below its share, a lease that ran out during the claim (after its turn) is claimed at once.
    const soon = expiries.filter(
      t =>
        t <= now + leaseMs / 3 &&
        (t > now || (belowShare && t > now - leaseMs / 3)),
    );
    if (soon.length === 0) return;
    const due = Math.max(now, Math.min(...soon)) + EXPIRY_MARGIN_MS;
    // One claim armed at a time, the earliest.
    if (this.expiryClaim && this.expiryClaimAt <= due) return;
    clearTimeout(this.expiryClaim);
    this.expiryClaimAt = due;
    this.expiryClaim = setTimeout(() => {
      this.expiryClaim = undefined;
      this.claimShards().catch(error =>
        this.options.logger.warn(
          'Claiming health shards failed',
          asError(error),
        ),
      );
    }, due - now);
    this.expiryClaim.unref?.();
  }

  /** Renews the shards held; one refused (taken over) or that failed to renew is lost. */
  private async renewHeld(): Promise<void> {
    const { state } = this.options;
    const { leaseMs } = this.options.sharding;
    for (const [shard, run] of [...this.heldRuns]) {
      if (this.stopped) return; // stopped: nothing is renewed, released leases stay released
      const renewed = await state
        .takeLease(`${SHARD_LEASE_PREFIX}${shard}`, this.replica, leaseMs)
        .catch(() => undefined);
      if (renewed?.token !== run.lease.token) {
        run.lost = true;
        this.heldRuns.delete(shard);
      }
    }
  }

  /** Stops claiming and renewing; answers once the claim under way is done. */
  async halt(): Promise<void> {
    this.stopped = true;
    clearInterval(this.keepAlive);
    clearTimeout(this.expiryClaim);
    await this.claiming;
  }

  /** The claims and renewals under way, done. */
  async settled(): Promise<void> {
    await this.claiming;
  }

  /** Lets every shard and the presence go at once, for the others to take (a clean stop). */
  async release(): Promise<void> {
    const { state } = this.options;
    for (const [shard, run] of this.heldRuns) {
      run.lost = true;
      await state
        .releaseLease(`${SHARD_LEASE_PREFIX}${shard}`, this.replica)
        .catch(() => undefined);
    }
    this.heldRuns.clear();
    await state
      .releaseLease(`${PRESENCE_LEASE_PREFIX}${this.replica}`, this.replica)
      .catch(() => undefined);
  }
}
