import {
  DeploymentReasons,
  type Application,
  type Deployment,
  type Revision,
} from '@cnp/plugin-fleet-common';
import type { ClusterRecord } from '../database/types';
import { asError } from '../util/errors';
import type { DeploymentServiceOptions } from './deploymentTypes';
import type { RolloutState } from './ManifestApplier';
import { objectSetHealth } from './objectHealth';

/** A revision whose rollout failed its deadline, for the automatic rollback to judge. */
export interface FailedRollout {
  failed: Deployment;
  revision: Revision;
  application: Application;
}

/**
 * Follows rollouts: polls the live Deployment of each PROGRESSING deployment until it is DEPLOYED,
 * or FAILED with PROGRESS_DEADLINE_EXCEEDED (then `onRolloutFailed` may roll it back). Only the
 * deployment's current revision is followed: a newer deploy takes over.
 */
export class RolloutFollower {
  private readonly timers = new Map<
    string,
    { revision: number; timer: NodeJS.Timeout }
  >();
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly options: Pick<
      DeploymentServiceOptions,
      'stores' | 'applier' | 'logger' | 'deploy' | 'objectApplier' | 'listener'
    > & {
      onRolloutFailed: (rollout: FailedRollout) => Promise<void>;
    },
  ) {}

  private get pollMs() {
    return this.options.deploy.pollIntervalMs ?? 2_000;
  }

  /** Keeps `work` until `stop`, which waits for it. */
  keep(work: Promise<unknown>): void {
    const kept: Promise<void> = work
      .then(() => undefined)
      .finally(() => this.inFlight.delete(kept));
    this.inFlight.add(kept);
  }

  /** Follows a rollout until DEPLOYED or FAILED; only while it is still this revision. */
  track(deploymentId: string, revision: number): void {
    if (this.stopped) return;
    const current = this.timers.get(deploymentId);
    if (current && current.revision > revision) return; // a newer deploy is followed already
    if (current) clearTimeout(current.timer);
    this.timers.set(deploymentId, {
      revision,
      timer: setTimeout(() => {
        this.keep(
          this.poll(deploymentId, revision).catch(error => {
            this.options.logger
              .child({ deployment: deploymentId })
              .warn(
                `Readiness check of deployment ${deploymentId} failed, retrying`,
                asError(error),
              );
            this.track(deploymentId, revision);
          }),
        );
      }, this.pollMs),
    });
  }

  /**
   * Checks a rollout now rather than at the next poll (a progressive release waiting on it):
   * the same check, and the deployment is followed on as before when it is not done.
   */
  async checkRollout(deploymentId: string, revision: number): Promise<void> {
    const pending = this.timers.get(deploymentId);
    if (!pending || pending.revision !== revision) return;
    clearTimeout(pending.timer);
    this.timers.delete(deploymentId);
    try {
      await this.poll(deploymentId, revision);
    } catch {
      this.track(deploymentId, revision);
    }
  }

  private async poll(deploymentId: string, revision: number): Promise<void> {
    const { stores, applier, deploy } = this.options;
    if (this.timers.get(deploymentId)?.revision === revision)
      this.timers.delete(deploymentId);
    const deployment = await stores.deployments.getDeployment(deploymentId);
    if (
      !deployment ||
      deployment.status !== 'PROGRESSING' ||
      deployment.revision !== revision
    )
      return;
    const application = await stores.applications.getApplication(
      deployment.applicationId,
    );
    if (!application) return;
    const cluster = await stores.clusters.getCluster(deployment.cluster);
    if (!cluster) return;

    const current = await stores.revisions.getRevision(
      deployment.id,
      deployment.revision,
    );
    const state = current?.source
      ? await this.objectsState(cluster, current)
      : await applier.rolloutState(
          cluster,
          current?.namespace ?? deploy.namespace,
          application.name,
        );
    const appliedAt = deployment.lastAppliedAt
      ? Date.parse(deployment.lastAppliedAt)
      : Date.now();
    const overdue = Date.now() - appliedAt > deploy.progressDeadlineMs;
    if (state.kind === 'ready') {
      await this.complete(deploymentId, revision, current);
      return;
    }
    if (
      state.kind === 'deadline-exceeded' ||
      state.kind === 'degraded' ||
      overdue
    ) {
      await this.fail({ deploymentId, revision, state, current, application });
      return;
    }
    // What the rollout waits for, on the card until it completes or its deadline passes: only
    // the workload's own progress, never why the cluster could not be read (a connection or
    // kubeconfig error is the cluster's, for its admins).
    const noted =
      state.kind === 'progressing'
        ? await stores.deployments.noteRolloutProgress(
            deploymentId,
            revision,
            state.message,
          )
        : undefined;
    if (noted) {
      this.options.listener?.deploymentProgressed({
        deploymentId,
        entityRef: noted.entityRef,
        cluster: noted.cluster,
      });
    }
    this.track(deploymentId, revision);
  }

  /**
   * Where the rollout of a component's own objects stands, by each object's health: ready once
   * all are healthy, degraded when one is degraded, else progressing, naming the first object
   * that is not healthy.
   */
  private async objectsState(
    cluster: ClusterRecord,
    current: Revision,
  ): Promise<RolloutState> {
    const { stores, objectApplier } = this.options;
    const objects = await stores.revisions.getRevisionObjects(
      current.deploymentId,
      current.revision,
    );
    if (!objects || !objectApplier) {
      return {
        kind: 'unreachable',
        message: 'The objects of this revision cannot be read',
      };
    }
    const live = await objectApplier.readLive(cluster, objects);
    if (live.kind !== 'read')
      return { kind: 'unreachable', message: live.message };
    const health = objectSetHealth(
      objects.map((object, i) => ({
        kind: object.kind ?? '',
        name: object.metadata?.name ?? '',
        namespace: object.metadata?.namespace,
        live: live.live[i],
      })),
    );
    const message = health.message ?? health.status;
    if (health.status === 'Healthy') return { kind: 'ready' };
    if (health.status === 'Degraded') return { kind: 'degraded', message };
    return { kind: 'progressing', message };
  }

  /** The rollout is complete: DEPLOYED. */
  private async complete(
    deploymentId: string,
    revision: number,
    current: Revision | undefined,
  ) {
    // The cluster may have gone OFFLINE during the rollout: then this is what the cascade
    // would have done (DEGRADED / CLUSTER_OFFLINE), so that targeted recovery restores it with
    // the cluster. The store reads the cluster in the transaction of the write.
    await this.options.stores.deployments.completeRollout(
      deploymentId,
      revision,
      {
        status: 'DEPLOYED',
        // An automatic rollback that completed says so until the next change.
        statusReason:
          current?.cause === 'auto-rollback'
            ? DeploymentReasons.ROLLED_BACK
            : null,
        message: 'Rollout complete: all replicas updated and available',
      },
      'fleet-rollout',
    );
  }

  /** The rollout did not complete in time: FAILED, and perhaps rolled back. */
  private async fail(rollout: {
    deploymentId: string;
    revision: number;
    state: RolloutState;
    current: Revision | undefined;
    application: Application;
  }) {
    const { stores, deploy } = this.options;
    const detail = rolloutDetail(rollout.state);
    const failed = await stores.deployments.updateDeploymentStatus(
      rollout.deploymentId,
      rollout.state.kind === 'degraded'
        ? {
            status: 'FAILED',
            statusReason: DeploymentReasons.WORKLOAD_UNHEALTHY,
            message: `Rollout failed: ${detail}`,
          }
        : {
            status: 'FAILED',
            statusReason: DeploymentReasons.PROGRESS_DEADLINE_EXCEEDED,
            message: `Rollout not complete after ${Math.round(
              deploy.progressDeadlineMs / 1000,
            )} s${detail ? `: ${detail}` : ''}`,
          },
      'fleet-rollout',
      { status: 'PROGRESSING', revision: rollout.revision },
    );
    if (failed && rollout.current) {
      await this.options.onRolloutFailed({
        failed,
        revision: rollout.current,
        application: rollout.application,
      });
    }
  }

  /**
   * Follows the rollouts of deployments left PROGRESSING (by a restart, or by another replica
   * that stopped), and fails those left PENDING for longer than the progress deadline: their
   * apply was interrupted. Runs at startup and on every reconcile (with health shards, on every
   * placement run).
   */
  async adoptUnfinished(): Promise<number> {
    const { stores, deploy } = this.options;
    let adopted = 0;
    for (const d of await stores.deployments.listDeployments({
      statuses: ['PROGRESSING', 'PENDING'],
    })) {
      if (d.status === 'PROGRESSING') {
        if (!this.timers.has(d.id)) {
          this.track(d.id, d.revision);
          adopted += 1;
        }
      } else if (
        d.status === 'PENDING' &&
        Date.now() - Date.parse(d.updatedAt) > deploy.progressDeadlineMs
      ) {
        await stores.deployments.updateDeploymentStatus(
          d.id,
          {
            status: 'FAILED',
            statusReason: DeploymentReasons.APPLY_FAILED,
            message: 'The apply was interrupted; deploy again',
          },
          'fleet-rollout',
          { status: 'PENDING', revision: d.revision },
        );
        adopted += 1;
      }
    }
    return adopted;
  }

  /** Stops following rollouts; resolves once no readiness check is still talking to a cluster. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await Promise.all([...this.inFlight]);
  }
}

/** What a rollout that did not complete in time was last doing, for its FAILED message. */
function rolloutDetail(state: RolloutState): string {
  if (state.kind === 'missing') return 'the Deployment is missing';
  return 'message' in state ? state.message : '';
}
