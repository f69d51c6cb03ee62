import {
  ConflictError,
  InputError,
  isErrorWithName,
  NotFoundError,
} from '@backstage/errors';
import {
  DeploymentReasons,
  FLEET_ANNOTATION_IMAGE,
  type Application,
  type Deployment,
} from '@cnp/plugin-fleet-common';
import type { KubernetesObject } from '@kubernetes/client-node';
import { normalizeEntityRef } from '../catalog/entityRefs';
import type { ClusterRecord, NewRevision } from '../database/types';
import { assertClusterAcceptsDeployments } from '../health/clusterHealthRules';
import { asError } from '../util/errors';
import { applicationNameFor, ignoresReplicas } from './applicationNames';
import type {
  DeploymentServiceOptions,
  DeployRequest,
  DesiredState,
} from './deploymentTypes';
import type { DesiredStates, ReadManifests } from './DesiredStates';
import type { ApplyResult } from './ManifestApplier';
import { objectsOf } from './generatedWorkload';
import { objectsLeftBy } from './leftObjects';
import { identityOf, refOf } from './objectRefs';
import { OwnershipConflictError } from './ownership';
import { recordedImageOf, sourceLabelOf } from './repositoryObjects';
import type { RolloutFollower } from './RolloutFollower';
import { assertNoRunningRelease } from './runningRelease';

/** One revision to record and apply on one cluster. */
export interface ApplyRevisionRequest {
  application: Application;
  cluster: ClusterRecord;
  /** The deployment of the application on that cluster, when there is one. */
  existing: Deployment | undefined;
  spec: NewRevision;
  actor: string;
  /** The message of the PENDING event (default `Deploy requested`). */
  message?: string;
  /** The event's reason (default `REVISION_<CAUSE>`). */
  eventReason?: string;
}

/** The deployment, PENDING on its new revision. */
interface PendingRequest {
  applicationId: string;
  cluster: string;
  revision: NewRevision;
  existing: Deployment | undefined;
  message: string;
  eventReason?: string;
}

/**
 * The deploy flow: record PENDING, apply through the cluster's own client, move to
 * PROGRESSING and hand the rollout to the follower. A cluster without a usable kubeconfig gives
 * FAILED / CLUSTER_NOT_CONFIGURED, a Kubernetes API error (or objects its manifest source could
 * not render) FAILED / APPLY_FAILED with the message: a result, never an HTTP 500.
 */
export class Deployer {
  constructor(
    private readonly options: Pick<
      DeploymentServiceOptions,
      'stores' | 'applier' | 'logger' | 'objectApplier'
    > & { desired: DesiredStates; follower: RolloutFollower },
  ) {}

  async deploy(request: DeployRequest, actor: string): Promise<Deployment> {
    const { stores, desired } = this.options;
    const entityRef = normalizeEntityRef(request.entityRef);
    const cluster = await stores.clusters.getCluster(request.cluster);
    if (!cluster)
      throw new NotFoundError(`Cluster '${request.cluster}' not found`);
    assertClusterAcceptsDeployments(cluster);

    // A component's own manifests are read once per deploy, before anything is recorded: a
    // version that does not exist or a kind the project refuses leaves nothing behind.
    const early = await desired.manifestsOf(entityRef, request.version);
    const application = await this.applicationFor(entityRef, request, early);
    if (application.removing) {
      throw new ConflictError(
        `The application of '${entityRef}' is being removed: deploy it again once it is gone`,
      );
    }
    if ((request.cause ?? 'deploy') !== 'placement') {
      // A deploy by hand puts the cluster back in the placement's reach.
      await stores.applications.includeCluster(application.id, cluster.name);
    }
    if ((request.cause ?? 'deploy') === 'deploy') {
      // A running release owns its clusters: its completion or its rollback would undo this.
      await assertNoRunningRelease(
        stores.releases,
        application,
        'a deploy',
        cluster.name,
      );
    }
    const existing = await stores.deployments.getDeploymentFor(
      application.id,
      cluster.name,
    );
    const currentRevision = existing
      ? await stores.revisions.getRevision(existing.id, existing.revision)
      : undefined;
    // A deployment running manifests never falls back to the generated workload because the
    // catalog did not answer.
    const manifests =
      early ??
      (currentRevision?.source
        ? await desired.manifestsOf(entityRef, request.version, true)
        : undefined);
    const spec = await desired.revisionFor({
      application,
      request,
      current: currentRevision,
      cluster,
      manifests,
    });
    return this.applyRevision({
      application,
      cluster,
      existing,
      spec: { ...spec, cause: request.cause ?? 'deploy', createdBy: actor },
      actor,
    });
  }

  /** The entity's application; a deploy of an entity without one imports it. */
  private async applicationFor(
    entityRef: string,
    request: DeployRequest,
    manifests: ReadManifests | undefined,
  ): Promise<Application> {
    const { stores, desired } = this.options;
    const application = await stores.applications.getApplicationByEntityRef(
      entityRef,
    );
    if (application) return application;
    const image =
      request.image ??
      (await desired.annotatedImage(entityRef)) ??
      (manifests &&
        (recordedImageOf(manifests.set.objects, manifests.annotations) ??
          sourceLabelOf(manifests.set)));
    if (!image) {
      throw new InputError(
        `No image to deploy for '${entityRef}': give 'image', register the application with spec.image, or annotate the entity with ${FLEET_ANNOTATION_IMAGE}`,
      );
    }
    try {
      return await stores.applications.insertApplication({
        entityRef,
        name: applicationNameFor(entityRef),
        origin: 'imported',
        spec: { image, replicas: request.replicas },
        placementGrant: request.placementGrant,
      });
    } catch (error) {
      if (!isErrorWithName(error, 'ConflictError')) throw error;
      return (await stores.applications.getApplicationByEntityRef(entityRef))!;
    }
  }

  /**
   * Records `spec` as the deployment's new current revision (PENDING), applies it through the
   * cluster's own client, and follows the rollout: PROGRESSING, then DEPLOYED or FAILED.
   */
  async applyRevision(request: ApplyRevisionRequest): Promise<Deployment> {
    const { stores } = this.options;
    const { application, cluster, spec } = request;
    const deployment = await this.recordPending({
      applicationId: application.id,
      cluster: cluster.name,
      revision: spec,
      existing: request.existing,
      message: request.message ?? 'Deploy requested',
      eventReason: request.eventReason,
    });
    const revision = deployment.revision;
    let desired: DesiredState | undefined;
    let result: ApplyResult;
    try {
      desired = await this.options.desired.desiredFor({
        application,
        revision: spec,
        cluster,
      });
      result = await this.applyDesired(application, cluster, desired, {
        previous: request.existing && {
          deploymentId: request.existing.id,
          revision: request.existing.revision,
        },
      });
    } catch (error) {
      // The application's manifest source rendered nothing Fleet may apply.
      result = {
        kind: 'failed',
        message: asError(error).message,
        ...(error instanceof OwnershipConflictError
          ? { reason: 'OWNERSHIP_CONFLICT' as const }
          : {}),
      };
    }
    const outcome = await this.recordOutcome({
      request,
      deployment,
      result,
      namespace: desired?.namespace,
    });
    if (!outcome) await this.reapplyOvertaken(deployment.id, revision, cluster);
    const latest =
      outcome ?? (await stores.deployments.getDeployment(deployment.id));
    if (!latest) {
      throw new ConflictError(
        `Deployment '${deployment.id}' was undeployed while it was applied`,
      );
    }
    return latest;
  }

  /**
   * What the apply made of the PENDING deployment: FAILED, or PROGRESSING with its rollout
   * followed. Undefined when a newer deploy of the same (application, cluster) came in meanwhile.
   */
  private async recordOutcome(applied: {
    request: ApplyRevisionRequest;
    deployment: Deployment;
    result: ApplyResult;
    namespace: string | undefined;
  }): Promise<Deployment | undefined> {
    const { stores, logger, follower } = this.options;
    const { request, deployment, result } = applied;
    const { application, cluster, actor } = request;
    const entityRef = application.entityRef;
    const revision = deployment.revision;
    const now = new Date();
    // Only while no newer deploy of the same (application, cluster) came in meanwhile.
    const condition = { status: 'PENDING' as const, revision };
    if (result.kind === 'not-configured') {
      return stores.deployments.updateDeploymentStatus(
        deployment.id,
        {
          status: 'FAILED',
          statusReason: DeploymentReasons.CLUSTER_NOT_CONFIGURED,
          message: result.message,
        },
        actor,
        condition,
      );
    }
    if (result.kind === 'failed') {
      logger.warn(
        `Deploying ${entityRef} to ${cluster.name} failed: ${result.message}`,
        { entityRef, cluster: cluster.name, actor },
      );
      return stores.deployments.updateDeploymentStatus(
        deployment.id,
        {
          status: 'FAILED',
          statusReason:
            result.reason === 'OWNERSHIP_CONFLICT'
              ? DeploymentReasons.OWNERSHIP_CONFLICT
              : DeploymentReasons.APPLY_FAILED,
          message: result.message,
        },
        actor,
        condition,
      );
    }
    const outcome = await stores.deployments.updateDeploymentStatus(
      deployment.id,
      {
        status: 'PROGRESSING',
        statusReason: null,
        message: `Applied to ${cluster.name}/${applied.namespace}; waiting for the rollout`,
        syncStatus: 'SYNCED',
        lastAppliedAt: now,
        lastSyncedAt: now,
      },
      actor,
      condition,
    );
    if (outcome) follower.track(deployment.id, revision);
    return outcome;
  }

  /**
   * An apply whose revision a newer one overtook (a concurrent deploy, on this replica or another)
   * may have landed after that newer revision's own apply: the cluster would then run the older
   * one while the newer one is recorded. So the deployment's current revision is applied again,
   * until no newer one came in during the apply; whichever apply ends last, the cluster runs the
   * revision the deployment records. Its outcome is left to the apply that recorded it.
   */
  private async reapplyOvertaken(
    deploymentId: string,
    applied: number,
    cluster: ClusterRecord,
  ): Promise<void> {
    const { stores, logger } = this.options;
    let after = applied;
    for (let attempt = 0; attempt < 5; attempt++) {
      const latest = await stores.deployments.getDeployment(deploymentId);
      if (!latest || latest.revision <= after || latest.status === 'REMOVING')
        return;
      const [application, current] = await Promise.all([
        stores.applications.getApplication(latest.applicationId),
        stores.revisions.getRevision(latest.id, latest.revision),
      ]);
      if (!application || !current) return;
      const result = await this.options.desired
        .desiredFor({ application, revision: current, cluster })
        .then(
          desired => this.applyDesired(application, cluster, desired, {}),
          (error): ApplyResult => ({
            kind: 'failed',
            message: asError(error).message,
          }),
        );
      if (result.kind !== 'applied') {
        // The drift check of the reconcile finds and heals what this leaves behind.
        logger
          .child({ deployment: deploymentId })
          .warn(
            `Re-applying revision ${latest.revision} of ${deploymentId} over the overtaken revision ${applied} failed: ${result.message}`,
          );
        return;
      }
      after = latest.revision;
    }
  }

  /**
   * Applies a desired state to its cluster: the generated workload through the manifest applier;
   * a component's own objects through the object applier, pruning those the new objects drop
   * of `previous` (the revision the deployment ran before) and of the revisions before it that
   * an apply failing part way may have left (see `objectsLeftBy`). A component that switches
   * between the two loses what the other left: the generated workload's objects, or those of
   * its manifests.
   */
  async applyDesired(
    application: Application,
    cluster: ClusterRecord,
    desired: DesiredState,
    options: { previous?: { deploymentId: string; revision: number } },
  ): Promise<ApplyResult> {
    if (!desired.objects) {
      const applied = await this.options.applier.apply(
        cluster,
        desired.namespace,
        desired.manifests,
        { ignoreReplicas: ignoresReplicas(application) },
      );
      if (applied.kind !== 'applied' || !options.previous) return applied;
      return this.removeOwnObjects(
        application,
        cluster,
        options.previous,
        objectsOf(desired.manifests),
      );
    }
    const { objectApplier } = this.options;
    if (!objectApplier) {
      return {
        kind: 'failed',
        message: "This Fleet backend cannot apply a component's own manifests",
      };
    }
    const namespaces = new Set(
      desired.objects.flatMap(o =>
        o.metadata?.namespace ? [o.metadata.namespace] : [],
      ),
    );
    for (const namespace of namespaces) {
      const made = await this.options.applier.ensureNamespace(cluster, {
        entityRef: application.entityRef,
        appName: application.name,
        namespace,
      });
      if (made.kind !== 'applied') return made;
    }
    const previous = options.previous
      ? await this.previousObjects(application, cluster, options.previous)
      : undefined;
    const result = await objectApplier.apply(cluster, {
      entityRef: application.entityRef,
      objects: desired.objects,
      previous,
    });
    return result.kind === 'applied' ? { kind: 'applied' } : result;
  }

  /**
   * What the deployment may have on its cluster before a revision of the component's own
   * manifests: the objects its earlier revisions of manifests left (see `objectsLeftBy`), and,
   * when the revision before ran Fleet's generated workload, that workload's objects, which the
   * new objects replace.
   */
  private async previousObjects(
    application: Application,
    cluster: ClusterRecord,
    previous: { deploymentId: string; revision: number },
  ): Promise<KubernetesObject[] | undefined> {
    const { stores, desired } = this.options;
    const left = await objectsLeftBy(
      stores.revisions,
      previous.deploymentId,
      previous.revision,
    );
    const before = await stores.revisions.getRevision(
      previous.deploymentId,
      previous.revision,
    );
    if (!before || before.source) return left;
    const generated = await desired.desiredFor({
      application,
      revision: before,
      cluster,
    });
    return [
      ...(left ?? []),
      ...(generated.manifests ? objectsOf(generated.manifests) : []),
    ];
  }

  /**
   * After Fleet's generated workload was applied over a deployment that ran the component's own
   * manifests: removes the objects those manifests left that the workload does not replace (those
   * still Fleet's for the component only).
   */
  private async removeOwnObjects(
    application: Application,
    cluster: ClusterRecord,
    previous: { deploymentId: string; revision: number },
    kept: KubernetesObject[],
  ): Promise<ApplyResult> {
    const { stores, objectApplier } = this.options;
    const left = await objectsLeftBy(
      stores.revisions,
      previous.deploymentId,
      previous.revision,
    );
    if (!left || !objectApplier) return { kind: 'applied' };
    const keptIds = new Set(kept.map(o => identityOf(refOf(o))));
    const dropped = left.filter(o => !keptIds.has(identityOf(refOf(o))));
    if (dropped.length === 0) return { kind: 'applied' };
    const removed = await objectApplier.remove(
      cluster,
      application.entityRef,
      dropped,
    );
    return removed.kind === 'removed'
      ? { kind: 'applied' }
      : { kind: 'failed', message: removed.message };
  }

  /** The deployment, PENDING on its new revision: inserted with revision 1, or moved on. */
  private async recordPending(request: PendingRequest): Promise<Deployment> {
    const { stores } = this.options;
    const { applicationId, cluster, revision, existing, message } = request;
    if (!existing) {
      try {
        return await stores.deployments.insertDeployment(
          {
            applicationId,
            cluster,
            status: 'PENDING',
            message,
            firstRevision: revision,
          },
          revision.createdBy,
        );
      } catch (error) {
        if (!isErrorWithName(error, 'ConflictError')) throw error;
      }
    }
    const current =
      existing ??
      (await stores.deployments.getDeploymentFor(applicationId, cluster))!;
    const started = await stores.deployments.startRevision(
      current.id,
      revision,
      message,
      request.eventReason,
    );
    if (!started) throw new NotFoundError(`Deployment '${current.id}' is gone`);
    return started;
  }
}
