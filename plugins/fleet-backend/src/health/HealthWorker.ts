import {
  ConflictError,
  ForwardedError,
  isErrorWithName,
} from '@backstage/errors';
import type { HealthCycleSummary } from '@cnp/plugin-fleet-common';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import pLimit from 'p-limit';
import type { ClusterRecord } from '../database/types';
import type { ProbeOutcome } from '../kubernetes/ClusterClients';
import { describeKubeError } from '../kubernetes/requestOptions';
import { asError } from '../util/errors';
import { ShardedCycles } from '../sharding/ShardedCycles';
import { shardOf } from '../sharding/shardOf';
import type { LeaseRun, ShardOwnership } from '../sharding/types';
import { decideClusterHealth, isMassOutage } from './clusterHealthRules';
import { countKey, CycleWrites, type CycleDecisions } from './cycleWrites';
import { updateMassOutageWarning } from './healthWrites';
import type { HealthWorkerOptions } from './healthWorkerOptions';

export { healthUpdateOf } from './healthWrites';
export type { HealthStores, HealthWorkerOptions } from './healthWorkerOptions';

export const HEALTH_TASK_ID = 'fleet-health-cycle';

const LEASE_NAME = 'health-cycle';
const LEASE_TTL_MS = 60_000;

/**
 * One run of the cycle: the lease it took (its fencing token goes with every write) and whether it
 * lost it, after which it writes nothing more.
 */
type CycleRun = LeaseRun;

/** Which clusters a cycle probes, under which lease each one's writes go. */
type CycleScope =
  | { kind: 'fleet'; run: CycleRun }
  | { kind: 'shards'; shards: number; runs: Map<number, CycleRun> };

/** A cycle's decisions, and what the mass-outage guard counted over the whole fleet. */
interface CycleAssessment {
  cycle: CycleDecisions;
  /** Sharded, the clusters of the shards other replicas hold (none without shards). */
  others: ClusterRecord[];
  newlyOffline: ClusterRecord[];
  probeable: number;
  guard: boolean;
}

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

/**
 * Probes every cluster, applies the health rules of `clusterHealthRules`, one transaction per
 * cluster, and keeps the mass-outage warning. Cycles never overlap, across replicas too: both the
 * scheduled task and a manual run take the same database lease.
 */
export class HealthWorker {
  private readonly instance = `${os.hostname()}-${process.pid}`;
  /** The manual run under way in this process: callers asking meanwhile share its result. */
  private manualRun?: Promise<HealthCycleSummary>;
  /** With shards: the shard leases and when this replica's cycles run over them. */
  private readonly sharded?: ShardedCycles;

  private constructor(private readonly options: HealthWorkerOptions) {
    const { sharding, intervalMs } = options.health;
    if (sharding) {
      this.sharded = ShardedCycles.create({
        state: options.stores.state,
        sharding,
        logger: options.logger,
        intervalMs,
        cycle: runs =>
          this.cycle({ kind: 'shards', shards: sharding.shards, runs }),
      });
    }
  }

  static create(options: HealthWorkerOptions): HealthWorker {
    return new HealthWorker(options);
  }

  /**
   * Schedules the cycle: first run at startup, then every `health.intervalMs`. With shards,
   * every replica runs its own cycle over the shards it holds, and claims and renews shards
   * every third of a shard lease, so a stopped replica's shards are taken over within one.
   */
  async start(): Promise<void> {
    const { scheduler, health, logger } = this.options;
    if (!scheduler) throw new Error('HealthWorker.start needs a scheduler');
    const sharded = this.sharded;
    sharded?.start();
    await scheduler.scheduleTask({
      id: HEALTH_TASK_ID,
      // With shards each replica runs its own cycle; without, one replica at a time runs it,
      // skipping a run while another cycle is going.
      scope: sharded ? 'local' : 'global',
      frequency: { milliseconds: health.intervalMs },
      timeout: { milliseconds: Math.max(health.intervalMs, 10 * 60_000) },
      initialDelay: { seconds: 0 },
      fn: async () => {
        try {
          await (sharded ? this.runCycle() : this.runCycle({ wait: false }));
        } catch (error) {
          if (!sharded && isErrorWithName(error, 'ConflictError')) {
            logger.info(
              'Skipping scheduled health cycle: another one is running',
            );
            return;
          }
          throw new ForwardedError('Fleet health cycle failed', error);
        }
      },
    });
  }

  /**
   * With shards: the clusters this replica holds (those of its shards whose lease it has not
   * lost), for the reconcile and the watches to follow the same split. `current()` is a view
   * of that moment. Undefined without shards.
   */
  shardOwnership(): ShardOwnership | undefined {
    return this.sharded?.ownership();
  }

  /**
   * A manual run (`POST /health/run`), at most one per `health.manualMinIntervalMs` across
   * replicas: callers during a run in this process share its result; a run asked less than
   * manualMinInterval after the last cycle finished (here or on another replica, or while it
   * waited for one) answers that cycle's summary, marked `reused`, and probes nothing.
   */
  async runManualCycle(): Promise<HealthCycleSummary> {
    this.manualRun ??= this.manualCycle().finally(() => {
      this.manualRun = undefined;
    });
    return this.manualRun;
  }

  private async manualCycle(): Promise<HealthCycleSummary> {
    const recent = await this.recentCycle();
    if (recent) return recent;
    return this.runCycle({ wait: true, reuseRecent: true });
  }

  /** The last cycle's summary when it finished less than manualMinInterval ago, marked so. */
  private async recentCycle(): Promise<HealthCycleSummary | undefined> {
    const { stores, health } = this.options;
    if (health.manualMinIntervalMs <= 0) return undefined;
    const last = await stores.state.getLastCycle();
    const finished = last ? Date.parse(last.finishedAt) : NaN;
    const nextRunAt = finished + health.manualMinIntervalMs;
    if (!last || !(nextRunAt > Date.now())) return undefined;
    return {
      ...last,
      reused: {
        nextRunAt: new Date(nextRunAt).toISOString(),
        message: `The last health cycle finished at ${
          last.finishedAt
        }, less than ${
          health.manualMinIntervalMs / 1000
        } s ago (fleet.health.manualMinInterval): this is its summary; a manual run probes again from ${new Date(
          nextRunAt,
        ).toISOString()}`,
      },
    };
  }

  /**
   * Runs one cycle now. With `wait`, waits for a running cycle to end first (a manual run);
   * without it, throws a ConflictError when one is running. With `reuseRecent`, a cycle that
   * finished less than manualMinInterval ago (one waited for, typically) is answered instead.
   */
  async runCycle(
    opts: { wait?: boolean; reuseRecent?: boolean } = {},
  ): Promise<HealthCycleSummary> {
    if (this.sharded) {
      // Shards are held between cycles, not taken per run: a run asked while one is under way
      // in this process shares it.
      return this.sharded.runCycle({ scheduled: !opts.wait });
    }
    const { state } = this.options.stores;
    const deadline =
      Date.now() + (opts.wait ? this.options.manualWaitMs ?? 120_000 : 0);
    // A holder per run, not per process: a manual run while this process's scheduled cycle
    // holds the lease must wait for it like any other, not renew it and run alongside.
    const holder = `${this.instance}-${randomUUID().slice(0, 8)}`;
    let lease = await state.takeLease(LEASE_NAME, holder, LEASE_TTL_MS);
    while (!lease) {
      if (Date.now() >= deadline) {
        throw new ConflictError(
          'A health cycle is already running; try again when it has finished',
        );
      }
      await sleep(250);
      lease = await state.takeLease(LEASE_NAME, holder, LEASE_TTL_MS);
    }
    if (opts.reuseRecent) {
      const recent = await this.recentCycle().catch(async error => {
        await state.releaseLease(LEASE_NAME, holder).catch(() => undefined);
        throw error;
      });
      if (recent) {
        await state.releaseLease(LEASE_NAME, holder).catch(() => undefined);
        return recent;
      }
    }
    const run: CycleRun = { lease, lost: false };
    const renew = setInterval(() => {
      // A renewal refused, or one that failed (the lease may expire before the next one), ends
      // this run's writes; the fencing token refuses any that would still be under way.
      state
        .takeLease(LEASE_NAME, holder, LEASE_TTL_MS)
        .then(renewed => {
          if (renewed?.token !== run.lease.token) run.lost = true;
        })
        .catch(() => {
          run.lost = true;
        });
    }, LEASE_TTL_MS / 3);
    try {
      return await this.cycle({ kind: 'fleet', run });
    } finally {
      clearInterval(renew);
      await state.releaseLease(LEASE_NAME, holder).catch(() => undefined);
    }
  }

  /**
   * With shards: renews this replica's presence and its shards, then takes free or expired
   * shards up to its fair share, ceil(shards / live replicas); with more than its share (a
   * replica joined), it lets the extra ones go for the others to take. Answers the shards held.
   */
  async claimShards(): Promise<number[]> {
    return this.sharded?.claimShards() ?? [];
  }

  /**
   * With shards: stops claiming and renewing. With `release`, its shards and presence are let
   * go at once (a clean shutdown); without, they expire after one shard lease.
   */
  async stop(opts: { release?: boolean } = {}): Promise<void> {
    await this.sharded?.stop(opts);
  }

  private async probeAll(clusters: ClusterRecord[]): Promise<ProbeOutcome[]> {
    const { clients, health } = this.options;
    const limit = pLimit(health.concurrency);
    return Promise.all(
      clusters.map(cluster =>
        limit(async (): Promise<ProbeOutcome> => {
          try {
            return await clients.probe(cluster, health.probeTimeoutMs);
          } catch (error) {
            return {
              kind: 'failure',
              latencyMs: 0,
              message: describeKubeError(error, health.probeTimeoutMs),
            };
          }
        }),
      ),
    );
  }

  private async cycle(scope: CycleScope): Promise<HealthCycleSummary> {
    const { stores, logger, discover } = this.options;
    const started = new Date();
    const sharded = scope.kind === 'shards';
    // The fleet-wide outputs are written under the cycle's lease, or shard 0's.
    const fleetRun = scope.kind === 'shards' ? scope.runs.get(0) : scope.run;
    if (discover && (!sharded || fleetRun)) {
      try {
        await discover();
      } catch (error) {
        logger.warn(
          'Cluster discovery failed, probing the known clusters',
          asError(error),
        );
      }
    }
    const assessed = await this.probeAndDecide(scope, started);
    const { cycle, others, guard } = assessed;
    const summary: HealthCycleSummary = {
      startedAt: started.toISOString(),
      finishedAt: '',
      durationMs: 0,
      probed: cycle.clusters.length,
      online: 0,
      offline: 0,
      unknown: 0,
      transitions: [],
      degradedDeployments: 0,
      restoredDeployments: 0,
      errors: [],
      massOutage: { active: guard, clusters: [] },
    };
    // The counts are the fleet's: the other shards' clusters as their replicas left them.
    for (const cluster of others) {
      summary.probed += 1;
      summary[countKey(cluster.status)] += 1;
    }
    await CycleWrites.write({
      clusters: stores.clusters,
      logger,
      cycle,
      summary,
      guard,
      started,
      sharded,
    });
    return this.finishCycle({ ...assessed, summary, started, fleetRun });
  }

  /**
   * Lists the fleet, probes the clusters of the scope (sharded, those of the shards held) and
   * decides each one's health; the mass-outage guard counts over the whole fleet.
   */
  private async probeAndDecide(
    scope: CycleScope,
    started: Date,
  ): Promise<CycleAssessment> {
    const { stores, health } = this.options;
    const sharded = scope.kind === 'shards';
    // The lease a cluster's writes go under: its shard's, or the cycle's.
    const shardRun = (name: string) =>
      scope.kind === 'shards'
        ? scope.runs.get(shardOf(name, scope.shards))
        : scope.run;
    const fleet = await stores.clusters.listClusters();
    // Sharded, only the clusters of the shards this replica holds are probed.
    const clusters = sharded
      ? fleet.filter(cluster => shardRun(cluster.name) !== undefined)
      : fleet;
    // Sharded, the clusters of the shards other replicas hold (none without shards).
    const others = sharded
      ? fleet.filter(cluster => shardRun(cluster.name) === undefined)
      : [];
    // Clients of every registered cluster stay: sharded, the other shards' clusters are still
    // this replica's to deploy to (a deploy goes through the replica that answers it).
    this.options.clients.retainOnly?.(fleet.map(c => c.name));
    const outcomes = await this.probeAll(clusters);
    const decisions = clusters.map((cluster, i) =>
      decideClusterHealth(
        cluster,
        outcomes[i],
        {
          failureThreshold: cluster.failureThreshold ?? health.failureThreshold,
          recoveryThreshold: health.recoveryThreshold,
          minOutageMs: health.minOutageMs,
        },
        started,
      ),
    );

    // Clusters that would newly go OFFLINE, counting those whose cascade an earlier guard cycle
    // held and that are still OFFLINE: a prober outage that lasts several cycles keeps the guard
    // up instead of releasing every held cascade at the second cycle.
    const newlyOffline = clusters.filter(
      (cluster, i) =>
        decisions[i].transition?.to === 'OFFLINE' ||
        (cluster.cascadeHeldAt !== undefined &&
          decisions[i].status === 'OFFLINE'),
    );
    let probeable = outcomes.filter(o => o.kind !== 'not-probeable').length;
    if (sharded) {
      // The guard counts over the whole fleet, never over a shard: the clusters of the other
      // shards still OFFLINE with a held cascade (as their replicas wrote them) count too, and
      // those ever probed are probeable.
      for (const cluster of others) {
        if (
          cluster.status === 'OFFLINE' &&
          cluster.cascadeHeldAt !== undefined
        ) {
          newlyOffline.push(cluster);
        }
        if (cluster.lastProbeAt) probeable += 1;
      }
    }
    const guard = isMassOutage(
      newlyOffline.length,
      probeable,
      health.massOutage,
    );
    return {
      cycle: {
        clusters,
        outcomes,
        decisions,
        runOf: i => shardRun(clusters[i].name)!,
      },
      others,
      newlyOffline,
      probeable,
      guard,
    };
  }

  /**
   * Writes the fleet-wide outputs (the mass-outage warning, the last cycle's summary) and tells
   * the listener. They are the current holder's to write: a run that lost its lease leaves them
   * to the one that took over. Sharded, they are the holder of shard 0's.
   */
  private async finishCycle(
    opts: CycleAssessment & {
      summary: HealthCycleSummary;
      started: Date;
      fleetRun: CycleRun | undefined;
    },
  ): Promise<HealthCycleSummary> {
    const { stores, logger, health } = this.options;
    const { cycle, summary, started, fleetRun } = opts;
    let massOutageRaised = false;
    try {
      if (fleetRun && !fleetRun.lost) {
        const outage = await updateMassOutageWarning({
          state: stores.state,
          logger,
          health,
          guard: opts.guard,
          newlyOffline: opts.newlyOffline,
          probeable: opts.probeable,
          now: started,
          lease: fleetRun.lease,
        });
        summary.massOutage = outage.warning;
        massOutageRaised = outage.raised;
      }
      const finished = new Date();
      summary.finishedAt = finished.toISOString();
      summary.durationMs = finished.getTime() - started.getTime();
      if (fleetRun && !fleetRun.lost) {
        await stores.state.setLastCycle(summary, fleetRun.lease);
      }
    } catch (error) {
      if (!isErrorWithName(error, 'LeaseLostError')) throw error;
      if (fleetRun) fleetRun.lost = true;
    }
    // Its transitions are those committed (a failed cluster is in `errors` instead).
    const reasons = new Map(
      cycle.clusters.map((cluster, i) => [
        cluster.name,
        cycle.decisions[i].statusReason,
      ]),
    );
    this.options.listener?.healthCycleFinished?.({
      summary,
      transitions: summary.transitions.map(t => ({
        ...t,
        reason: reasons.get(t.cluster) ?? '',
      })),
      massOutageRaised,
      probes: cycle.outcomes.filter(
        (o): o is Exclude<ProbeOutcome, { kind: 'not-probeable' }> =>
          o.kind !== 'not-probeable',
      ),
    });
    return summary;
  }
}
