import {
  ConflictError,
  NotAllowedError,
  NotFoundError,
} from '@backstage/errors';
import {
  DeploymentReasons,
  reasonWords,
  type Deployment,
  type Revision,
} from '@cnp/plugin-fleet-common';
import type { KubernetesObject } from '@kubernetes/client-node';
import { assertClusterAcceptsDeployments } from '../health/clusterHealthRules';
import { asError } from '../util/errors';
import type { DeploymentServiceOptions } from './deploymentTypes';
import type { Deployer } from './Deployer';
import { copyOf } from './DesiredStates';
import { deploymentOr404 } from './lookups';
import type { FailedRollout } from './RolloutFollower';
import { assertNoRunningRelease } from './runningRelease';

/** How a rollback is asked for. */
export interface RollbackRequest {
  deploymentId: string;
  /** The revision to copy; by default the newest earlier one that reached DEPLOYED. */
  toRevision?: number;
  actor: string;
  /** The rollback of a release's own abort: the running release is the one asking. */
  byRelease?: boolean;
}

/**
 * Rollbacks: asked for (a copy of an earlier revision), and automatic (a revision whose rollout
 * failed, or that degraded soon after its apply, is followed by a copy of its predecessor).
 */
export class Rollbacks {
  constructor(
    private readonly options: Pick<
      DeploymentServiceOptions,
      'stores' | 'logger' | 'deploy' | 'revisionRefusal' | 'objectsRefusal'
    > & { deployer: Deployer },
  ) {}

  /** See `DeploymentService.rollback`. */
  async rollback(request: RollbackRequest): Promise<Deployment> {
    const { deploymentId, toRevision, actor } = request;
    const { stores } = this.options;
    const deployment = await deploymentOr404(stores, deploymentId);
    const revisions = await stores.revisions.listRevisions(deploymentId);
    const target =
      toRevision === undefined
        ? revisions.find(
            r => r.revision < deployment.revision && r.outcome === 'DEPLOYED',
          )
        : revisions.find(r => r.revision === toRevision);
    if (!target) {
      throw toRevision === undefined
        ? new ConflictError(
            `Deployment '${deploymentId}' has no earlier revision that reached DEPLOYED`,
          )
        : new NotFoundError(
            `Deployment '${deploymentId}' has no revision ${toRevision}`,
          );
    }
    const [cluster, application] = await Promise.all([
      stores.clusters.getCluster(deployment.cluster),
      stores.applications.getApplication(deployment.applicationId),
    ]);
    if (!cluster || !application)
      throw new NotFoundError(`Deployment '${deploymentId}' not found`);
    if (deployment.status === 'REMOVING' || application.removing) {
      throw new ConflictError(
        `Deployment '${deploymentId}' is being undeployed: there is nothing to roll back`,
      );
    }
    assertClusterAcceptsDeployments(cluster);
    const refused = await this.options.revisionRefusal?.({
      entityRef: application.entityRef,
      appName: application.name,
      namespace: target.namespace ?? undefined,
      env: target.env ?? undefined,
    });
    if (refused) throw new NotAllowedError(refused);
    if (!request.byRelease) {
      await assertNoRunningRelease(
        stores.releases,
        application,
        'a rollback',
        cluster.name,
      );
    }
    const objects = await this.recordedObjects(deploymentId, target);
    if (objects) {
      const refusedObjects = await this.options.objectsRefusal?.({
        entityRef: application.entityRef,
        appName: application.name,
        objects,
        sourceUrl: target.source?.url,
      });
      if (refusedObjects)
        throw new NotAllowedError(`revision refused: ${refusedObjects}`);
    }
    return this.options.deployer.applyRevision({
      application,
      cluster,
      existing: deployment,
      spec: {
        ...copyOf(target),
        ...(objects ? { objects } : {}),
        cause: 'rollback',
        createdBy: actor,
      },
      actor,
      message: `Rollback to revision ${target.revision} requested`,
    });
  }

  /**
   * The objects an earlier revision of a component's own manifests recorded, to apply exactly
   * again; undefined for a revision of the generated workload.
   */
  private async recordedObjects(
    deploymentId: string,
    revision: Revision,
  ): Promise<KubernetesObject[] | undefined> {
    if (!revision.source) return undefined;
    const objects = await this.options.stores.revisions.getRevisionObjects(
      deploymentId,
      revision.revision,
    );
    if (!objects) {
      throw new ConflictError(
        `Revision ${revision.revision} of deployment '${deploymentId}' recorded no objects to apply again`,
      );
    }
    return objects;
  }

  /** See `DeploymentService.rollBackDegraded`. */
  async rollBackDegraded(deploymentId: string): Promise<void> {
    const { stores } = this.options;
    const deployment = await stores.deployments.getDeployment(deploymentId);
    if (
      !deployment ||
      deployment.status !== 'DEGRADED' ||
      deployment.statusReason !== DeploymentReasons.WORKLOAD_UNHEALTHY ||
      !deployment.lastAppliedAt
    )
      return;
    const windowMs = this.options.deploy.rollbackWindowMs ?? 10 * 60_000;
    if (Date.now() - Date.parse(deployment.lastAppliedAt) > windowMs) return;
    const [revision, application] = await Promise.all([
      stores.revisions.getRevision(deployment.id, deployment.revision),
      stores.applications.getApplication(deployment.applicationId),
    ]);
    if (!revision || !application) return;
    await this.rollBackAutomatically({
      failed: deployment,
      revision,
      application,
    });
  }

  /**
   * Automatic rollback: a revision whose rollout failed (its progress deadline passed), or that
   * turned DEGRADED / WORKLOAD_UNHEALTHY soon after its apply, and whose predecessor reached
   * DEPLOYED, is followed by a copy of that predecessor (cause `auto-rollback`), with an
   * `AUTO_ROLLED_BACK` event naming the failed revision and why. Off with
   * `spec.autoRollback: false`; a rollback, automatic or asked for, is never rolled back in
   * turn, so it cannot loop.
   */
  async rollBackAutomatically(rollout: FailedRollout): Promise<void> {
    const { stores } = this.options;
    const { failed, revision, application } = rollout;
    if (
      application.spec.autoRollback === false ||
      application.removing ||
      revision.cause === 'rollback' ||
      revision.cause === 'auto-rollback'
    ) {
      return;
    }
    const predecessor = (await stores.revisions.listRevisions(failed.id)).find(
      r => r.revision < revision.revision,
    );
    if (predecessor?.outcome !== 'DEPLOYED') return;
    const cluster = await stores.clusters.getCluster(failed.cluster);
    if (!cluster || cluster.status === 'OFFLINE') return;
    // An earlier revision outside the component's project now (or a project that cannot be
    // read) is not applied again: the failed revision stays, for its owner to act on.
    let refused: string | undefined;
    let objects: KubernetesObject[] | undefined;
    try {
      refused = await this.options.revisionRefusal?.({
        entityRef: application.entityRef,
        appName: application.name,
        namespace: predecessor.namespace ?? undefined,
        env: predecessor.env ?? undefined,
      });
      objects = await this.recordedObjects(failed.id, predecessor);
      if (!refused && objects) {
        refused = await this.options.objectsRefusal?.({
          entityRef: application.entityRef,
          appName: application.name,
          objects,
          sourceUrl: predecessor.source?.url,
        });
      }
    } catch (error) {
      refused = asError(error).message;
    }
    if (refused) {
      this.options.logger.warn(
        `No automatic rollback of ${application.entityRef} on ${cluster.name} to revision ${predecessor.revision}: ${refused}`,
      );
      return;
    }
    await this.options.deployer.applyRevision({
      application,
      cluster,
      existing: failed,
      spec: {
        ...copyOf(predecessor),
        ...(objects ? { objects } : {}),
        cause: 'auto-rollback',
        createdBy: 'fleet-rollout',
      },
      actor: 'fleet-rollout',
      // In words (`Rollout missed its deadline`): the failed revision's code is its outcome's.
      message: `Revision ${revision.revision} failed (${
        failed.statusReason ? `${reasonWords(failed.statusReason)}: ` : ''
      }${failed.message}); back to revision ${predecessor.revision}`,
      eventReason: 'AUTO_ROLLED_BACK',
    });
  }
}
