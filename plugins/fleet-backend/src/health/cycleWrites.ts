import type { LoggerService } from '@backstage/backend-plugin-api';
import { isErrorWithName } from '@backstage/errors';
import type {
  ClusterStatus,
  HealthCycleSummary,
} from '@cnp/plugin-fleet-common';
import type { ClusterRecord, ClusterStore } from '../database/types';
import type { ProbeOutcome } from '../kubernetes/ClusterClients';
import type { LeaseRun } from '../sharding/types';
import { asError } from '../util/errors';
import type { HealthDecision } from './clusterHealthRules';
import { applyHealthDecision, healthUpdateOf } from './healthWrites';

/** Clusters written per batched statement. */
const BATCH_SIZE = 500;
const LEASE_LOST = 'skipped: the health-cycle lease was lost';

/** The summary's count a status goes to. */
export function countKey(
  status: ClusterStatus,
): 'online' | 'offline' | 'unknown' {
  if (status === 'ONLINE') return 'online';
  if (status === 'OFFLINE') return 'offline';
  return 'unknown';
}

/** What one cycle decided, cluster by cluster (the same index in each list). */
export interface CycleDecisions {
  clusters: ClusterRecord[];
  outcomes: ProbeOutcome[];
  decisions: HealthDecision[];
  /** The lease the writes of cluster `i` go under: its shard's, or the cycle's. */
  runOf(i: number): LeaseRun;
}

export interface CycleWritesOptions {
  clusters: Pick<ClusterStore, 'updateClustersHealth' | 'inClusterTransaction'>;
  logger: LoggerService;
  cycle: CycleDecisions;
  /** Counts, transitions and errors are added to it as clusters are written. */
  summary: HealthCycleSummary;
  /** The mass-outage guard is up. */
  guard: boolean;
  started: Date;
  sharded: boolean;
}

/**
 * Writes a cycle's decisions: clusters whose status stays and that have nothing to cascade (most
 * of them, most cycles) in batches, one statement each (per lease: sharded, one per shard); the
 * others in a transaction of their own. A lease lost stops the writes under it.
 */
export class CycleWrites {
  private constructor(private readonly options: CycleWritesOptions) {}

  static async write(options: CycleWritesOptions): Promise<void> {
    await new CycleWrites(options).writeAll();
  }

  private async writeAll(): Promise<void> {
    const { clusters, decisions, runOf } = this.options.cycle;
    const plainByRun = new Map<LeaseRun, number[]>();
    const changing: number[] = [];
    clusters.forEach((cluster, i) => {
      const quiet =
        !decisions[i].transition &&
        decisions[i].cascade === 'none' &&
        !cluster.cascadeHeldAt;
      if (!quiet) {
        changing.push(i);
        return;
      }
      const group = plainByRun.get(runOf(i));
      if (group) group.push(i);
      else plainByRun.set(runOf(i), [i]);
    });
    for (const [run, plain] of plainByRun) {
      for (let at = 0; at < plain.length; at += BATCH_SIZE) {
        await this.writeBatch(run, plain.slice(at, at + BATCH_SIZE));
      }
    }
    for (const i of changing) {
      if (runOf(i).lost) {
        // Another replica may have taken over: writing decisions made from this cycle's reads
        // could undo its work, so the rest of this cycle is dropped.
        this.failed(i, LEASE_LOST);
        continue;
      }
      await this.applyAlone(i);
    }
  }

  private async writeBatch(run: LeaseRun, batch: number[]): Promise<void> {
    const { clusters, outcomes, decisions } = this.options.cycle;
    if (run.lost) {
      batch.forEach(i => this.failed(i, LEASE_LOST));
      return;
    }
    try {
      await this.options.clusters.updateClustersHealth(
        batch.map(i => ({
          name: clusters[i].name,
          update: healthUpdateOf(
            decisions[i],
            outcomes[i],
            this.options.started,
          ),
        })),
        run.lease,
      );
      batch.forEach(i => this.counted(i));
    } catch (error) {
      if (isErrorWithName(error, 'LeaseLostError')) {
        run.lost = true;
        batch.forEach(i => this.failed(i, LEASE_LOST));
        return;
      }
      // The batch rolled back whole; one transaction per cluster finds the one that fails.
      this.options.logger.warn(
        `Batched health update failed, writing its ${batch.length} clusters one by one`,
        asError(error),
      );
      for (const i of batch) {
        if (run.lost) this.failed(i, LEASE_LOST);
        else await this.applyAlone(i);
      }
    }
  }

  private async applyAlone(i: number): Promise<void> {
    const { clusters, outcomes, decisions, runOf } = this.options.cycle;
    const { guard, started, sharded, logger } = this.options;
    try {
      this.counted(
        i,
        await applyHealthDecision(this.options.clusters, {
          cluster: clusters[i],
          outcome: outcomes[i],
          decision: decisions[i],
          guard,
          now: started,
          lease: runOf(i).lease,
          holdNew: sharded,
        }),
      );
    } catch (error) {
      if (isErrorWithName(error, 'LeaseLostError')) {
        runOf(i).lost = true;
        this.failed(i, LEASE_LOST);
        return;
      }
      // Rule 4: this cluster's transaction rolled back; the others stand and the cycle goes on.
      const cause = asError(error);
      this.failed(i, cause.message);
      logger
        .child({ cluster: clusters[i].name })
        .error(
          `Health update of cluster '${clusters[i].name}' failed and was rolled back`,
          cause,
        );
    }
  }

  private counted(i: number, moved?: { degraded: number; restored: number }) {
    const { summary, logger } = this.options;
    const cluster = this.options.cycle.clusters[i];
    const decision = this.options.cycle.decisions[i];
    summary.degradedDeployments += moved?.degraded ?? 0;
    summary.restoredDeployments += moved?.restored ?? 0;
    if (decision.transition) {
      summary.transitions.push({
        cluster: cluster.name,
        ...decision.transition,
      });
      logger.info(
        `Cluster '${cluster.name}' ${decision.transition.from} -> ${decision.transition.to}: ${decision.statusReason}`,
        {
          cluster: cluster.name,
          from: decision.transition.from,
          to: decision.transition.to,
          reason: decision.statusReason,
        },
      );
    }
    if (
      this.options.cycle.outcomes[i].kind === 'not-probeable' &&
      cluster.statusReason !== decision.statusReason
    ) {
      logger.warn(
        `Cluster '${cluster.name}' is not probeable and stays UNKNOWN: ${decision.statusReason}`,
        { cluster: cluster.name, reason: decision.statusReason },
      );
    }
    summary[countKey(decision.status)] += 1;
  }

  private failed(i: number, message: string) {
    const cluster = this.options.cycle.clusters[i];
    this.options.summary.errors.push({ cluster: cluster.name, message });
    this.options.summary[countKey(cluster.status)] += 1;
  }
}
