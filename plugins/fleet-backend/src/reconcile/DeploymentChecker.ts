import { DeploymentReasons, type Application } from '@cnp/plugin-fleet-common';
import type { KubernetesObject } from '@kubernetes/client-node';
import pLimit from 'p-limit';
import type { DeploymentState, DeploymentSyncUpdate } from '../database/types';
import { ignoresReplicas } from '../deploy/DeploymentService';
import type { AutoscalerCache } from '../deploy/ManifestApplier';
import type { ObjectSetApplyResult } from '../deploy/objectSetTypes';
import { asError } from '../util/errors';
import {
  compareLive,
  type CheckBatch,
  type CheckerOptions,
  type CheckOne,
  type Compared,
  type WorkloadHealth,
} from './liveComparison';
import {
  RECONCILE_ACTOR as ACTOR,
  type ReconcileSummary,
} from './reconcileTypes';

export type { CheckBatch } from './liveComparison';

/**
 * Drift, self-heal and workload health: compares a deployment's live objects with the desired
 * ones on the fields Fleet owns (SYNCED / OUT_OF_SYNC with what differs / UNKNOWN when it cannot
 * know), re-applies drifted ones whose application asks for selfHeal, and turns workload health
 * into DEGRADED / WORKLOAD_UNHEALTHY and back.
 */
export class DeploymentChecker {
  /** When each deployment was last healed (event-driven heals are limited by it). */
  private readonly healedAt = new Map<string, number>();
  /** Deployments an event found drifted but could not heal yet: the next run checks them. */
  readonly recheck = new Set<string>();

  constructor(private readonly options: CheckerOptions) {}

  /** Forgets heals older than a reconcile interval (as of a run that started at `started`). */
  forgetHealsBefore(started: number): void {
    for (const [id, at] of this.healedAt) {
      if (started - at >= this.options.reconcile.intervalMs)
        this.healedAt.delete(id);
    }
  }

  /** Compares each deployment with bounded concurrency; one failing never stops the others. */
  async checkAll(batch: CheckBatch): Promise<void> {
    const limit = pLimit(this.options.reconcile.concurrency);
    // One HPA list per cluster and namespace for the whole run, not one per deployment.
    const autoscalers: AutoscalerCache = new Map();
    await Promise.all(
      batch.deployments.map(deployment =>
        limit(async () => {
          try {
            await this.check(deployment, batch, autoscalers);
          } catch (error) {
            batch.summary.errors.push({
              deployment: deployment.id,
              cluster: deployment.cluster,
              message: asError(error).message,
            });
            this.options.logger
              .child({
                deployment: deployment.id,
                cluster: deployment.cluster,
              })
              .warn(
                `Reconcile of deployment ${deployment.id} on ${deployment.cluster} failed`,
                asError(error),
              );
          }
        }),
      ),
    );
  }

  private async check(
    deployment: DeploymentState,
    batch: CheckBatch,
    autoscalers: AutoscalerCache,
  ): Promise<void> {
    const { stores, deployments } = this.options;
    const { summary } = batch;
    const cluster = batch.clustersByName.get(deployment.cluster);
    const application = batch.apps.get(deployment.applicationId);
    if (deployment.status === 'REMOVING') {
      // Never healed: its objects go as soon as its cluster is ONLINE.
      if (cluster?.status === 'ONLINE')
        await deployments.finishRemoval(deployment.id);
      return;
    }
    if (
      !application ||
      deployment.status === 'PENDING' ||
      deployment.status === 'PROGRESSING'
    )
      return;
    summary.checked += 1;
    if (!cluster || cluster.status !== 'ONLINE') {
      summary.unknown += 1;
      await stores.deployments.recordSync(
        deployment.id,
        {
          syncStatus: 'UNKNOWN',
          reason: 'CLUSTER_NOT_ONLINE',
          message: `Cluster ${deployment.cluster} is ${
            cluster?.status ?? 'gone'
          }`,
        },
        ACTOR,
      );
      return;
    }
    const one: CheckOne = {
      deployment,
      revision: batch.revisionOf.get(deployment.id),
      application,
      cluster,
      summary,
      autoscalers,
      fromEvent: batch.fromEvent ?? false,
    };
    const compared = await this.compare(one);
    if (!compared) return;
    const judge = await this.recordCompare(one, compared);
    if (judge) await this.judgeWorkload(deployment, compared.health, summary);
  }

  /** Reads the live objects and diffs them; undefined (recorded UNKNOWN) when unreadable. */
  private async compare(one: CheckOne): Promise<Compared | undefined> {
    const compared = await compareLive(this.options, one);
    if ('unreadable' in compared) {
      one.summary.unknown += 1;
      await this.options.stores.deployments.recordSync(
        one.deployment.id,
        {
          syncStatus: 'UNKNOWN',
          reason: 'READ_FAILED',
          message: compared.unreadable,
        },
        ACTOR,
      );
      return undefined;
    }
    return compared;
  }

  /**
   * Records SYNCED, or heals the drift (selfHeal), or records OUT_OF_SYNC; answers whether the
   * workload's health is to be judged now (not right after a heal: it is rolling out again).
   */
  private async recordCompare(
    one: CheckOne,
    compared: Compared,
  ): Promise<boolean> {
    const { stores } = this.options;
    const { deployment, application, summary } = one;
    const { differences, described } = compared;
    const now = new Date();
    if (differences.length === 0) {
      summary.synced += 1;
      await stores.deployments.recordSync(
        deployment.id,
        { syncStatus: 'SYNCED', lastSyncedAt: now, reason: 'IN_SYNC' },
        ACTOR,
      );
    } else if (
      application.spec.selfHeal &&
      deployment.placed &&
      deployment.status !== 'FAILED' &&
      this.mayHeal(deployment.id, one.fromEvent) &&
      (await this.unchangedSince(deployment, application))
    ) {
      return this.heal(one, compared, now);
    } else {
      await this.recordDrift(one, compared, {
        reason: 'DRIFT_DETECTED',
        message: described,
      });
    }
    return true;
  }

  /** Records the drift `compared` found as OUT_OF_SYNC, for `why`. */
  private async recordDrift(
    one: CheckOne,
    compared: Compared,
    why: Pick<DeploymentSyncUpdate, 'reason' | 'message' | 'forceEvent'>,
  ): Promise<void> {
    one.summary.outOfSync += 1;
    await this.options.stores.deployments.recordSync(
      one.deployment.id,
      {
        syncStatus: 'OUT_OF_SYNC',
        syncDifferences: compared.differences,
        ...why,
      },
      ACTOR,
    );
  }

  /** Re-applies the desired objects over the drift; answers whether to judge health now. */
  private async heal(
    one: CheckOne,
    compared: Compared,
    now: Date,
  ): Promise<boolean> {
    const { stores, applier } = this.options;
    const { deployment, application, summary } = one;
    const { described, desired } = compared;
    this.healedAt.set(deployment.id, Date.now());
    const result = desired.objects
      ? await this.healObjects(one, desired.objects)
      : await applier.apply(one.cluster, desired.namespace, desired.manifests, {
          autoscalers: one.autoscalers,
          ignoreReplicas: compared.autoscaled || ignoresReplicas(application),
        });
    if (result.kind === 'applied') {
      summary.healed += 1;
      summary.synced += 1;
      await stores.deployments.recordSync(
        deployment.id,
        {
          syncStatus: 'SYNCED',
          lastSyncedAt: now,
          lastAppliedAt: now,
          reason: 'SELF_HEALED',
          message: `Re-applied to undo drift: ${described}`,
          forceEvent: true,
        },
        ACTOR,
      );
      return false; // the workload is rolling out again: judge its health next time
    }
    await this.recordDrift(one, compared, {
      reason: 'SELF_HEAL_FAILED',
      message: `${result.message} (drift: ${described})`,
      // once per failure, not once per reconcile while it keeps failing
      forceEvent: deployment.syncStatus !== 'OUT_OF_SYNC',
    });
    return true;
  }

  /** Re-applies a component's own objects, unless its project refuses them now. */
  private async healObjects(
    one: CheckOne,
    objects: KubernetesObject[],
  ): Promise<ObjectSetApplyResult> {
    const refused = await this.objectsRefusal(one.application, objects);
    if (refused) return { kind: 'failed', message: refused };
    return this.options.objectApplier!.apply(one.cluster, {
      entityRef: one.application.entityRef,
      objects,
    });
  }

  /**
   * Why a self-heal may not re-apply a component's own objects as its revision recorded them:
   * its project refuses them now (narrowed since), or cannot be read.
   */
  private async objectsRefusal(
    application: Application,
    objects: KubernetesObject[],
  ): Promise<string | undefined> {
    try {
      const refusal = await this.options.objectsRefusal?.({
        entityRef: application.entityRef,
        appName: application.name,
        objects,
      });
      return (
        refusal && `Not re-applied, the project refuses it now: ${refusal}`
      );
    } catch (error) {
      return `Not re-applied, the project cannot be read: ${
        asError(error).message
      }`;
    }
  }

  /**
   * A change seen by a watch heals a deployment at most once per `reconcile.intervalMs`, as
   * often as runs would: a heal that does not stick (another controller setting the field back)
   * would otherwise be undone and redone at the pace of the events. One held back is recorded
   * OUT_OF_SYNC and checked again by the next run.
   */
  private mayHeal(id: string, fromEvent: boolean): boolean {
    if (!fromEvent) return true;
    const at = this.healedAt.get(id);
    if (
      at === undefined ||
      Date.now() - at >= this.options.reconcile.intervalMs
    )
      return true;
    this.recheck.add(id);
    return false;
  }

  /**
   * True while the deployment is still as this run read it: a deploy that came in meanwhile
   * (new revision, new spec) must not be "healed" back to what this run thought was desired.
   */
  private async unchangedSince(
    deployment: DeploymentState,
    application: Application,
  ): Promise<boolean> {
    const { stores } = this.options;
    const [now, app] = await Promise.all([
      stores.deployments.getDeployment(deployment.id),
      stores.applications.getApplication(application.id),
    ]);
    return (
      app?.updatedAt === application.updatedAt &&
      now !== undefined &&
      now.revision === deployment.revision &&
      now.status === deployment.status &&
      (now.status === 'DEPLOYED' || now.status === 'DEGRADED')
    );
  }

  /** DEPLOYED -> DEGRADED / WORKLOAD_UNHEALTHY when replicas are missing, and back when they return. */
  private async judgeWorkload(
    deployment: DeploymentState,
    health: WorkloadHealth,
    summary: ReconcileSummary,
  ): Promise<void> {
    const { stores } = this.options;
    const { healthy } = health;
    const condition = {
      status: deployment.status,
      revision: deployment.revision,
    };
    if (!healthy && deployment.status === 'DEPLOYED') {
      const moved = await stores.deployments.updateDeploymentStatus(
        deployment.id,
        {
          status: 'DEGRADED',
          statusReason: DeploymentReasons.WORKLOAD_UNHEALTHY,
          message: health.unhealthy,
        },
        ACTOR,
        condition,
      );
      if (moved) {
        summary.degraded += 1;
        // A revision that turns unhealthy soon after its apply is rolled back.
        await this.options.deployments.rollBackDegraded(deployment.id);
      }
    } else if (
      healthy &&
      deployment.status === 'DEGRADED' &&
      deployment.statusReason === DeploymentReasons.WORKLOAD_UNHEALTHY
    ) {
      const moved = await stores.deployments.updateDeploymentStatus(
        deployment.id,
        {
          status: 'DEPLOYED',
          statusReason: null,
          message: health.recovered,
        },
        ACTOR,
        condition,
      );
      if (moved) summary.recovered += 1;
    }
  }
}
