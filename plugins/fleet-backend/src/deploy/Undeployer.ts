import { ConflictError, NotFoundError } from '@backstage/errors';
import type { Application, Deployment } from '@cnp/plugin-fleet-common';
import { asError } from '../util/errors';
import type { ClusterRecord } from '../database/types';
import type { DeploymentServiceOptions } from './deploymentTypes';
import type { RemoveResult } from './ManifestRemover';
import { objectsLeftBy } from './leftObjects';
import { deploymentOr404 } from './lookups';
import type { RolloutFollower } from './RolloutFollower';

/** How an undeploy is asked for. */
export interface UndeployOptions {
  /** Forget the deployment at once, leaving its objects. */
  force?: boolean;
  /** `PRUNED`: the placement no longer selects the cluster (the reconcile's undeploy). */
  reason?: string;
}

/**
 * Undeploys: a deployment turns REMOVING, its objects go once its cluster is ONLINE, and then
 * the deployment (and a removed application with its last deployment) is forgotten.
 */
export class Undeployer {
  constructor(
    private readonly options: Pick<
      DeploymentServiceOptions,
      'stores' | 'remover' | 'logger' | 'deploy' | 'objectApplier'
    > & { follower: Pick<RolloutFollower, 'keep'> },
  ) {}

  /** See `DeploymentService.undeploy`. */
  async undeploy(
    deploymentId: string,
    options: UndeployOptions,
    actor: string,
  ): Promise<Deployment> {
    const { stores } = this.options;
    const deployment = await deploymentOr404(stores, deploymentId);
    // An undeploy by hand sticks: the placement leaves this cluster alone from now on.
    const exclude = async () => {
      if (options.reason !== 'PRUNED') {
        await stores.applications.excludeCluster(
          deployment.applicationId,
          deployment.cluster,
          actor,
        );
      }
    };
    if (options.force) {
      await exclude();
      await this.forget(deployment, actor);
      return { ...deployment, status: 'REMOVING', statusReason: null };
    }
    if (deployment.status === 'PENDING') {
      // Its apply is running: removing now could leave what the apply creates next.
      throw new ConflictError(
        `Deployment '${deploymentId}' is being applied: undeploy it once its rollout started`,
      );
    }
    await exclude();
    const removing =
      deployment.status === 'REMOVING'
        ? deployment
        : (await stores.deployments.updateDeploymentStatus(
            deploymentId,
            {
              status: 'REMOVING',
              statusReason: options.reason ?? null,
              message: `Undeploy requested: the objects on ${deployment.cluster} are deleted once it is ONLINE`,
            },
            actor,
          )) ?? deployment;
    this.options.follower.keep(
      this.finishRemoval(deploymentId).catch(error =>
        this.options.logger
          .child({ deployment: deploymentId })
          .warn(
            `Undeploying ${deploymentId} failed; the reconcile retries`,
            asError(error),
          ),
      ),
    );
    return removing;
  }

  /** A forced undeploy: the deployment is forgotten at once, its objects left. */
  private async forget(deployment: Deployment, actor: string) {
    const { stores } = this.options;
    await stores.deployments.deleteDeployment({
      id: deployment.id,
      actor,
      reason: 'FORGOTTEN',
      message: `Forgotten without deleting its objects (force): they may remain on ${deployment.cluster}`,
    });
    const application = await stores.applications.getApplication(
      deployment.applicationId,
    );
    if (application?.removing)
      await stores.applications.deleteIfEmpty(application.id);
  }

  /**
   * Deletes the deployment's objects that are Fleet's for its component: for a component's own
   * manifests, those its current revision recorded and those earlier revisions may have left
   * (see `objectsLeftBy`); else the generated workload's.
   */
  private async removeObjects(
    deployment: Deployment,
    cluster: ClusterRecord,
    application: Application,
  ): Promise<RemoveResult> {
    const { stores, remover, objectApplier } = this.options;
    const revision = await stores.revisions.getRevision(
      deployment.id,
      deployment.revision,
    );
    const objects = revision?.source
      ? await objectsLeftBy(
          stores.revisions,
          deployment.id,
          deployment.revision,
        )
      : undefined;
    if (!objects) {
      return remover.remove({
        cluster,
        namespace: revision?.namespace ?? this.options.deploy.namespace,
        name: application.name,
        entityRef: application.entityRef,
      });
    }
    if (!objectApplier) {
      return {
        kind: 'failed',
        message: "This Fleet backend cannot remove a component's own manifests",
      };
    }
    const result = await objectApplier.remove(
      cluster,
      application.entityRef,
      objects,
    );
    if (result.kind !== 'removed')
      return {
        kind: result.kind === 'not-configured' ? 'not-configured' : 'failed',
        message: result.message,
      };
    const named = (o: { kind: string; name: string }) => `${o.kind}/${o.name}`;
    return {
      kind: 'removed',
      removed: result.removed.map(named),
      kept: result.left.map(named),
    };
  }

  /** See `DeploymentService.finishRemoval`. */
  async finishRemoval(deploymentId: string): Promise<boolean> {
    const { stores } = this.options;
    const deployment = await stores.deployments.getDeployment(deploymentId);
    if (!deployment || deployment.status !== 'REMOVING') return false;
    const cluster = await stores.clusters.getCluster(deployment.cluster);
    if (!cluster || cluster.status !== 'ONLINE') return false;
    const application = await stores.applications.getApplication(
      deployment.applicationId,
    );
    if (!application) return false;
    const result = await this.removeObjects(deployment, cluster, application);
    if (result.kind !== 'removed') {
      await stores.deployments.updateDeploymentStatus(
        deploymentId,
        {
          status: 'REMOVING',
          message: `Undeploy waits: ${result.message}`,
        },
        'fleet-undeploy',
        { status: 'REMOVING' },
      );
      return false;
    }
    const left = result.kept.length
      ? `; left ${result.kept.join(', ')} (not Fleet's objects for ${
          application.entityRef
        })`
      : '';
    const gone = await stores.deployments.deleteDeployment({
      id: deploymentId,
      actor: 'fleet-undeploy',
      reason: deployment.statusReason === 'PRUNED' ? 'PRUNED' : 'UNDEPLOYED',
      message: `Removed from ${cluster.name}: ${
        result.removed.join(', ') || 'nothing was left'
      }${left}`,
      condition: { status: 'REMOVING', revision: deployment.revision },
    });
    if (application.removing) {
      await stores.applications.deleteIfEmpty(application.id);
    }
    return gone;
  }

  /** See `DeploymentService.removeApplication`. */
  async removeApplication(
    applicationId: string,
    actor: string,
  ): Promise<Application> {
    const { stores } = this.options;
    const before = await stores.deployments.listDeployments({ applicationId });
    const applying = before.filter(d => d.status === 'PENDING');
    if (applying.length > 0) {
      throw new ConflictError(
        `Application '${applicationId}' is being applied on ${applying
          .map(d => d.cluster)
          .join(', ')}: remove it once those rollouts started`,
      );
    }
    const application = await stores.applications.markRemoving(applicationId);
    if (!application)
      throw new NotFoundError(`Application '${applicationId}' not found`);
    const current = await stores.deployments.listDeployments({
      applicationId,
    });
    for (const deployment of current) {
      try {
        await this.undeploy(deployment.id, {}, actor);
      } catch (error) {
        // A deployment whose removal (an undeploy just before) finished since it was listed
        // is gone already: that is what the removal wants, never a 404 for the application.
        if (!(error instanceof NotFoundError)) throw error;
      }
    }
    if (current.length === 0)
      await stores.applications.deleteIfEmpty(applicationId);
    return application;
  }
}
