import { LoggerService } from '@backstage/backend-plugin-api';
import { parseEntityRef } from '@backstage/catalog-model';
import {
  ConflictError,
  InputError,
  isErrorWithName,
  NotAllowedError,
  NotFoundError,
} from '@backstage/errors';
import {
  DeploymentReasons,
  FLEET_ANNOTATION_IMAGE,
  type Application,
  type ApplicationOrigin,
  type ApplicationPlacement,
  type ApplicationSpec,
  type Deployment,
  type EnvMap,
  type Revision,
  type RevisionCause,
} from '@cnp/plugin-fleet-common';
import type { EntityAnnotationReader } from '../catalog/entityAnnotations';
import { normalizeEntityRef } from '../catalog/entityRefs';
import type { FleetConfig } from '../config/FleetConfig';
import type {
  ApplicationStore,
  ClusterRecord,
  ClusterStore,
  DeploymentStore,
  NewRevision,
  PlacementGrantInput,
  ReleaseStore,
  RevisionSpec,
  RevisionStore,
} from '../database/types';
import { assertClusterAcceptsDeployments } from '../health/clusterHealthRules';
import {
  isDns1123Label,
  sanitizeK8sName,
  withStableSuffix,
} from '../kubernetes/sanitizeK8sName';
import {
  buildManifests,
  DEFAULT_CONTAINER_PORT,
  type Manifests,
} from './manifests';
import type { ManifestApplier, RolloutState } from './ManifestApplier';
import type { ManifestRemover } from './ManifestRemover';
import { imageReferenceProblem } from '../kubernetes/imageReference';
import { matchesSelector } from '../kubernetes/labelSelector';
import { PreconditionFailedError } from '../database/conflicts';
import { asError } from '../util/errors';
import { assertNoRunningRelease } from './runningRelease';
import { SYSTEM_NAMESPACES } from '../tenancy/projects';

export interface DeployRequest {
  entityRef: string;
  cluster: string;
  image?: string;
  replicas?: number;
  /** Set over the application's default env for this revision. */
  env?: EnvMap;
  /** Why this revision is made (default `deploy`). */
  cause?: RevisionCause;
  /**
   * The caller's `fleet.cluster.deploy` decision, kept with the application when this deploy
   * creates it (from the component's annotations): the reconcile places it with that decision.
   */
  placementGrant?: PlacementGrantInput;
}

export interface RegisterApplicationRequest {
  entityRef: string;
  origin?: ApplicationOrigin;
  spec: ApplicationSpec;
  placement?: ApplicationPlacement;
  /** The author's `fleet.cluster.deploy` decision, written with the application. */
  placementGrant?: PlacementGrantInput;
}

/** What deploys read and write: applications, the target cluster and deployments. */
export type DeploymentServiceStores = {
  applications: Omit<ApplicationStore, 'listApplications'>;
  clusters: Pick<ClusterStore, 'getCluster'>;
  deployments: Pick<
    DeploymentStore,
    | 'listDeployments'
    | 'getDeployment'
    | 'getDeploymentFor'
    | 'insertDeployment'
    | 'updateDeploymentStatus'
    | 'completeRollout'
    | 'startRevision'
    | 'deleteDeployment'
  >;
  revisions: Pick<RevisionStore, 'getRevision' | 'listRevisions'>;
  /** Running releases: a deploy or rollback by hand on one of their clusters is a 409. */
  releases?: Pick<ReleaseStore, 'listReleases'>;
};

/** What a deployment should have on its cluster, and where. */
export interface DesiredState {
  manifests: Manifests;
  namespace: string;
}

export interface DeploymentServiceOptions {
  stores: DeploymentServiceStores;
  applier: ManifestApplier;
  remover: Pick<ManifestRemover, 'remove'>;
  logger: LoggerService;
  deploy: Omit<
    FleetConfig['deploy'],
    'pollIntervalMs' | 'rollbackWindowMs' | 'forbiddenNamespaces'
  > & {
    pollIntervalMs?: number;
    /** Default 10 minutes. */
    rollbackWindowMs?: number;
    /** Default kube-system, kube-public, kube-node-lease. */
    forbiddenNamespaces?: string[];
  };
  /**
   * The entity's annotations: its `cnp.io/image` is the image of a deploy that names none, for an
   * application that has none yet.
   */
  annotationsOf?: EntityAnnotationReader;
  /**
   * Why the component's project refuses an earlier revision a rollback would apply again (its
   * namespace and env references); undefined when it may. Throws when it cannot be decided.
   */
  revisionRefusal?: (request: {
    entityRef: string;
    appName: string;
    namespace?: string;
    env?: EnvMap;
  }) => Promise<string | undefined>;
}

/**
 * The application leaves the replica count to someone else: it lists `/spec/replicas` in
 * `ignoreDifferences`, so neither drift nor a re-apply touches the replicas.
 */
export function ignoresReplicas(application: Application): boolean {
  return (
    application.spec.ignoreDifferences?.includes('/spec/replicas') ?? false
  );
}

/**
 * The Kubernetes name of a component's objects. Every application shares one target namespace,
 * so the name must be unique per entity: a component of the `default` namespace whose name is
 * already a DNS-1123 label keeps it (`payments`); any other (another namespace, or a name that
 * had to be cleaned, like `my_app`) gets a stable hash of the whole entity ref.
 */
export function applicationNameFor(entityRef: string): string {
  const { namespace, name } = parseEntityRef(entityRef);
  if (namespace === 'default' && isDns1123Label(name)) return name;
  const base = namespace === 'default' ? name : `${namespace}-${name}`;
  return withStableSuffix(sanitizeK8sName(base), entityRef);
}

/**
 * What the placement's overrides set for one cluster, merged in order: `replicas` of the last
 * matching one, `env` of every matching one.
 */
function overridesFor(
  placement: ApplicationPlacement | undefined,
  cluster: Pick<ClusterRecord, 'name' | 'labels'>,
): { replicas?: number; env?: EnvMap } {
  const merged: { replicas?: number; env?: EnvMap } = {};
  for (const override of placement?.overrides ?? []) {
    const byName = override.clusters?.includes(cluster.name) ?? false;
    const bySelector =
      override.clusterSelector !== undefined &&
      matchesSelector(cluster.labels, override.clusterSelector);
    if (!byName && !bySelector) continue;
    if (override.replicas !== undefined) merged.replicas = override.replicas;
    if (override.env) merged.env = { ...merged.env, ...override.env };
  }
  return merged;
}

/** What a rollback copies of an earlier revision: everything it asked the cluster to run. */
function copyOf(revision: Revision): RevisionSpec {
  return {
    image: revision.image,
    replicas: revision.replicas ?? undefined,
    env: revision.env ?? undefined,
    resources: revision.resources ?? undefined,
    namespace: revision.namespace ?? undefined,
    port: revision.port ?? undefined,
  };
}

/**
 * The deploy flow: record PENDING, apply through the cluster's own client, move to
 * PROGRESSING, then follow the rollout until DEPLOYED, or FAILED with PROGRESS_DEADLINE_EXCEEDED.
 * A cluster without a usable kubeconfig gives FAILED / CLUSTER_NOT_CONFIGURED and a Kubernetes
 * API error FAILED / APPLY_FAILED with the API's message: a result, never an HTTP 500.
 */
export class DeploymentService {
  private readonly timers = new Map<
    string,
    { revision: number; timer: NodeJS.Timeout }
  >();
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;

  private constructor(private readonly options: DeploymentServiceOptions) {}

  static create(options: DeploymentServiceOptions): DeploymentService {
    return new DeploymentService(options);
  }

  private get pollMs() {
    return this.options.deploy.pollIntervalMs ?? 2_000;
  }

  /** Checks that every cluster named by a placement exists and that the new ones are not OFFLINE. */
  private async checkPlacement(
    placement: ApplicationPlacement | undefined,
    previous?: ApplicationPlacement,
  ) {
    for (const name of placement?.clusters ?? []) {
      const cluster = await this.options.stores.clusters.getCluster(name);
      if (!cluster)
        throw new InputError(`Placement names an unknown cluster '${name}'`);
      if (!previous?.clusters?.includes(name))
        assertClusterAcceptsDeployments(cluster);
    }
  }

  /** A namespace an application may not name: the system ones (configurable). */
  private checkNamespace(namespace: string | undefined) {
    const forbidden =
      this.options.deploy.forbiddenNamespaces ?? SYSTEM_NAMESPACES;
    if (namespace && forbidden.includes(namespace)) {
      throw new InputError(
        `Invalid application: spec.namespace '${namespace}' is a system namespace Fleet does not deploy to (${forbidden.join(
          ', ',
        )})`,
      );
    }
  }

  async registerApplication(
    request: RegisterApplicationRequest,
  ): Promise<Application> {
    const entityRef = normalizeEntityRef(request.entityRef);
    this.checkNamespace(request.spec.namespace);
    await this.checkPlacement(request.placement);
    return this.options.stores.applications.insertApplication({
      entityRef,
      name: applicationNameFor(entityRef),
      origin: request.origin,
      spec: request.spec,
      placement: request.placement,
      placementGrant: request.placementGrant,
    });
  }

  /**
   * Merges `update` into the application and writes it over the version it was read at, so that
   * two writers never lose each other's change: without `ifMatch` a write that lost the race
   * merges again over the newer version; with `ifMatch` (the versions the caller accepts, from
   * the ETags of an If-Match header) a write over any other version is refused with
   * `PreconditionFailedError`.
   */
  async updateApplication(
    id: string,
    update: {
      spec?: ApplicationSpec;
      placement?: ApplicationPlacement;
      /** The new placement's author's decision, written in the same transaction. */
      placementGrant?: PlacementGrantInput;
    },
    ifMatch?: number[],
  ): Promise<Application> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.options.stores.applications.getApplication(id);
      if (!current) throw new NotFoundError(`Application '${id}' not found`);
      if (ifMatch !== undefined && !ifMatch.includes(current.version)) {
        throw new PreconditionFailedError(
          `Application '${id}' is at version ${current.version} (ETag "${current.version}"), which If-Match does not name: read it again and apply the change to what it is now`,
        );
      }
      if (
        update.spec?.namespace !== undefined &&
        update.spec.namespace !== current.spec.namespace
      ) {
        this.checkNamespace(update.spec.namespace);
        const live = await this.options.stores.deployments.listDeployments({
          applicationId: id,
        });
        if (live.length > 0) {
          throw new ConflictError(
            `Application '${id}' has ${live.length} deployment(s): undeploy them before changing its namespace`,
          );
        }
      }
      await this.checkPlacement(update.placement, current.placement);
      try {
        const updated =
          await this.options.stores.applications.updateApplication(
            id,
            {
              spec: update.spec
                ? { ...current.spec, ...update.spec }
                : undefined,
              placement: update.placement,
              placementGrant: update.placementGrant,
            },
            current.version,
          );
        if (!updated) throw new NotFoundError(`Application '${id}' not found`);
        return updated;
      } catch (error) {
        if (
          ifMatch !== undefined ||
          attempt >= 5 ||
          !isErrorWithName(error, 'PreconditionFailedError')
        )
          throw error;
        // Another write landed between the read and this one: merge over it.
      }
    }
  }

  /**
   * What a deployment should run: its revision (image, replicas, env, resources, namespace) on
   * the application's own settings (port, probes). Without a revision (a deployment recorded
   * before revisions existed), the application's defaults.
   */
  desiredFor(
    application: Application,
    revision?: Pick<
      Revision,
      'image' | 'replicas' | 'env' | 'resources' | 'namespace' | 'port'
    >,
  ): DesiredState {
    const { deploy } = this.options;
    const namespace = revision?.namespace ?? deploy.namespace;
    const spec: ApplicationSpec = revision
      ? {
          ...application.spec,
          image: revision.image,
          replicas: revision.replicas ?? undefined,
          env: revision.env ?? undefined,
          resources: revision.resources ?? undefined,
          port: revision.port ?? application.spec.port,
        }
      : application.spec;
    return {
      namespace,
      manifests: buildManifests({
        name: application.name,
        entityRef: application.entityRef,
        namespace,
        spec,
        defaultReplicas: deploy.defaultReplicas,
        defaultResources: deploy.defaultResources,
        preStopSleepSeconds: deploy.preStopSleepSeconds,
        progressDeadlineSeconds: Math.max(
          1,
          Math.ceil(deploy.progressDeadlineMs / 1000),
        ),
      }),
    };
  }

  /**
   * The revision a deploy to one cluster makes: the request's image, else the deployment's
   * current one, else the application's default, else the component's `cnp.io/image`; the
   * request's replicas, else the current revision's, else the default; env and resources from
   * the application's defaults. Nothing of it changes any other cluster.
   */
  async revisionFor(
    application: Application,
    request: Pick<DeployRequest, 'image' | 'replicas' | 'env'>,
    current: Revision | undefined,
    cluster: Pick<ClusterRecord, 'name' | 'labels'>,
  ): Promise<RevisionSpec> {
    const image =
      request.image ??
      current?.image ??
      application.spec.image ??
      (await this.annotatedImage(application.entityRef));
    if (!image) {
      throw new InputError(
        `No image to deploy for '${application.entityRef}': give 'image', register the application with spec.image, or annotate the entity with ${FLEET_ANNOTATION_IMAGE}`,
      );
    }
    const override = overridesFor(application.placement, cluster);
    const replicas =
      request.replicas ??
      override.replicas ??
      current?.replicas ??
      application.spec.replicas;
    const env =
      override.env || request.env
        ? { ...application.spec.env, ...override.env, ...request.env }
        : application.spec.env;
    return {
      image,
      replicas: replicas ?? undefined,
      env,
      resources: application.spec.resources,
      namespace: application.spec.namespace,
      port: application.spec.port ?? DEFAULT_CONTAINER_PORT,
    };
  }

  /** The entity's `cnp.io/image`, checked like an image given in a request. */
  private async annotatedImage(entityRef: string): Promise<string | undefined> {
    // A catalog that does not answer gives no image: the deploy then says it has none.
    const annotations = await this.options
      .annotationsOf?.(entityRef)
      .catch(() => undefined);
    const image = annotations?.[FLEET_ANNOTATION_IMAGE]?.trim();
    if (!image) return undefined;
    const problem = imageReferenceProblem(image);
    if (problem) {
      throw new InputError(
        `The ${FLEET_ANNOTATION_IMAGE} annotation of '${entityRef}' is not a usable image: ${problem}`,
      );
    }
    return image;
  }

  async deploy(request: DeployRequest, actor: string): Promise<Deployment> {
    const { stores } = this.options;
    const entityRef = normalizeEntityRef(request.entityRef);
    const cluster = await stores.clusters.getCluster(request.cluster);
    if (!cluster)
      throw new NotFoundError(`Cluster '${request.cluster}' not found`);
    assertClusterAcceptsDeployments(cluster);

    let application = await stores.applications.getApplicationByEntityRef(
      entityRef,
    );
    if (!application) {
      const image = request.image ?? (await this.annotatedImage(entityRef));
      if (!image) {
        throw new InputError(
          `No image to deploy for '${entityRef}': give 'image', register the application with spec.image, or annotate the entity with ${FLEET_ANNOTATION_IMAGE}`,
        );
      }
      try {
        application = await stores.applications.insertApplication({
          entityRef,
          name: applicationNameFor(entityRef),
          origin: 'imported',
          spec: { image, replicas: request.replicas },
          placementGrant: request.placementGrant,
        });
      } catch (error) {
        if (!isErrorWithName(error, 'ConflictError')) throw error;
        application = (await stores.applications.getApplicationByEntityRef(
          entityRef,
        ))!;
      }
    }

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
    const spec = await this.revisionFor(
      application,
      request,
      currentRevision,
      cluster,
    );
    return this.applyRevision(
      application,
      cluster,
      existing,
      { ...spec, cause: request.cause ?? 'deploy', createdBy: actor },
      actor,
    );
  }

  /**
   * Rolls a deployment back: a new revision (cause `rollback`) copying `toRevision`, by default
   * the newest earlier revision that reached DEPLOYED. 409 when there is none, or when the
   * cluster is OFFLINE.
   */
  async rollback(
    deploymentId: string,
    toRevision: number | undefined,
    actor: string,
    options: {
      /** The rollback of a release's own abort: the running release is the one asking. */
      byRelease?: boolean;
    } = {},
  ): Promise<Deployment> {
    const { stores } = this.options;
    const deployment = await this.deploymentOr404(deploymentId);
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
    if (!options.byRelease) {
      await assertNoRunningRelease(
        stores.releases,
        application,
        'a rollback',
        cluster.name,
      );
    }
    return this.applyRevision(
      application,
      cluster,
      deployment,
      { ...copyOf(target), cause: 'rollback', createdBy: actor },
      actor,
      `Rollback to revision ${target.revision} requested`,
    );
  }

  /**
   * Records `revision` as the deployment's new current one (PENDING), applies it through the
   * cluster's own client, and follows the rollout: PROGRESSING, then DEPLOYED or FAILED.
   */
  private async applyRevision(
    application: Application,
    cluster: ClusterRecord,
    existing: Deployment | undefined,
    spec: NewRevision,
    actor: string,
    message = 'Deploy requested',
    eventReason?: string,
  ): Promise<Deployment> {
    const { stores, applier, logger } = this.options;
    const entityRef = application.entityRef;
    const deployment = await this.recordPending(
      application.id,
      cluster.name,
      spec,
      existing,
      message,
      eventReason,
    );
    const revision = deployment.revision;
    const desired = this.desiredFor(application, spec);
    const result = await applier.apply(
      cluster,
      desired.namespace,
      desired.manifests,
      { ignoreReplicas: ignoresReplicas(application) },
    );
    const now = new Date();
    // Only while no newer deploy of the same (application, cluster) came in meanwhile.
    const condition = { status: 'PENDING' as const, revision };
    let outcome: Deployment | undefined;
    if (result.kind === 'not-configured') {
      outcome = await stores.deployments.updateDeploymentStatus(
        deployment.id,
        {
          status: 'FAILED',
          statusReason: DeploymentReasons.CLUSTER_NOT_CONFIGURED,
          message: result.message,
        },
        actor,
        condition,
      );
    } else if (result.kind === 'failed') {
      logger.warn(
        `Deploying ${entityRef} to ${cluster.name} failed: ${result.message}`,
        { entityRef, cluster: cluster.name, actor },
      );
      outcome = await stores.deployments.updateDeploymentStatus(
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
    } else {
      outcome = await stores.deployments.updateDeploymentStatus(
        deployment.id,
        {
          status: 'PROGRESSING',
          statusReason: null,
          message: `Applied to ${cluster.name}/${desired.namespace}; waiting for the rollout`,
          syncStatus: 'SYNCED',
          lastAppliedAt: now,
          lastSyncedAt: now,
        },
        actor,
        condition,
      );
      if (outcome) this.track(deployment.id, revision);
    }
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
    const { stores, applier, logger } = this.options;
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
      const desired = this.desiredFor(application, current);
      const result = await applier.apply(
        cluster,
        desired.namespace,
        desired.manifests,
        { ignoreReplicas: ignoresReplicas(application) },
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

  /** The deployment, PENDING on its new revision: inserted with revision 1, or moved on. */
  private async recordPending(
    applicationId: string,
    cluster: string,
    revision: NewRevision,
    existing: Deployment | undefined,
    message: string,
    eventReason?: string,
  ): Promise<Deployment> {
    const { stores } = this.options;
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
      eventReason,
    );
    if (!started) throw new NotFoundError(`Deployment '${current.id}' is gone`);
    return started;
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
        const polling = this.poll(deploymentId, revision)
          .catch(error => {
            this.options.logger
              .child({ deployment: deploymentId })
              .warn(
                `Readiness check of deployment ${deploymentId} failed, retrying`,
                asError(error),
              );
            this.track(deploymentId, revision);
          })
          .finally(() => this.inFlight.delete(polling));
        this.inFlight.add(polling);
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
    const condition = { status: 'PROGRESSING' as const, revision };
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
    const state = await applier.rolloutState(
      cluster,
      current?.namespace ?? deploy.namespace,
      application.name,
    );
    const appliedAt = deployment.lastAppliedAt
      ? Date.parse(deployment.lastAppliedAt)
      : Date.now();
    const overdue = Date.now() - appliedAt > deploy.progressDeadlineMs;
    if (state.kind === 'ready') {
      // The cluster may have gone OFFLINE during the rollout: then this is what the cascade
      // would have done (DEGRADED / CLUSTER_OFFLINE), so that targeted recovery restores it with
      // the cluster. The store reads the cluster in the transaction of the write.
      await stores.deployments.completeRollout(
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
      return;
    }
    if (state.kind === 'deadline-exceeded' || overdue) {
      const detail = rolloutDetail(state);
      const failed = await stores.deployments.updateDeploymentStatus(
        deploymentId,
        {
          status: 'FAILED',
          statusReason: DeploymentReasons.PROGRESS_DEADLINE_EXCEEDED,
          message: `Rollout not complete after ${Math.round(
            deploy.progressDeadlineMs / 1000,
          )} s${detail ? `: ${detail}` : ''}`,
        },
        'fleet-rollout',
        condition,
      );
      if (failed && current) {
        await this.rollBackAutomatically(failed, current, application);
      }
      return;
    }
    this.track(deploymentId, revision);
  }

  /**
   * Undeploys a deployment: it turns `REMOVING`, and Fleet deletes the objects it applied for it
   * (only objects carrying Fleet's label and this entity's annotation) as soon as its cluster is
   * ONLINE — now, or when the cluster returns (the reconcile retries). Once they are gone the
   * deployment is forgotten; its revisions and events stay. `force` forgets it at once, saying in
   * its event that objects may remain.
   */
  async undeploy(
    deploymentId: string,
    options: { force?: boolean; reason?: string },
    actor: string,
  ): Promise<Deployment> {
    const { stores } = this.options;
    const deployment = await this.deploymentOr404(deploymentId);
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
      await stores.deployments.deleteDeployment({
        id: deploymentId,
        actor,
        reason: 'FORGOTTEN',
        message: `Forgotten without deleting its objects (force): they may remain on ${deployment.cluster}`,
      });
      const application = await stores.applications.getApplication(
        deployment.applicationId,
      );
      if (application?.removing)
        await stores.applications.deleteIfEmpty(application.id);
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
    const removal = this.finishRemoval(deploymentId)
      .catch(error =>
        this.options.logger
          .child({ deployment: deploymentId })
          .warn(
            `Undeploying ${deploymentId} failed; the reconcile retries`,
            asError(error),
          ),
      )
      .then(() => undefined)
      .finally(() => this.inFlight.delete(removal));
    this.inFlight.add(removal);
    return removing;
  }

  private async deploymentOr404(deploymentId: string): Promise<Deployment> {
    const deployment = await this.options.stores.deployments.getDeployment(
      deploymentId,
    );
    if (!deployment)
      throw new NotFoundError(`Deployment '${deploymentId}' not found`);
    return deployment;
  }

  /** The namespace of a deployment's objects: its current revision's, else the default one. */
  private async namespaceOf(
    deployment: Pick<Deployment, 'id' | 'revision'>,
  ): Promise<string> {
    const revision = await this.options.stores.revisions.getRevision(
      deployment.id,
      deployment.revision,
    );
    return revision?.namespace ?? this.options.deploy.namespace;
  }

  /**
   * Deletes the objects of a `REMOVING` deployment when its cluster is ONLINE, and forgets the
   * deployment once they are gone. True when it is gone; false while it waits.
   */
  async finishRemoval(deploymentId: string): Promise<boolean> {
    const { stores, remover } = this.options;
    const deployment = await stores.deployments.getDeployment(deploymentId);
    if (!deployment || deployment.status !== 'REMOVING') return false;
    const cluster = await stores.clusters.getCluster(deployment.cluster);
    if (!cluster || cluster.status !== 'ONLINE') return false;
    const application = await stores.applications.getApplication(
      deployment.applicationId,
    );
    if (!application) return false;
    const result = await remover.remove({
      cluster,
      namespace: await this.namespaceOf(deployment),
      name: application.name,
      entityRef: application.entityRef,
    });
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

  /**
   * Removes an application: it is placed nowhere any more, every deployment is undeployed, and
   * the application goes with its last deployment (at once when it has none).
   */
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
      await this.undeploy(deployment.id, {}, actor);
    }
    if (current.length === 0)
      await stores.applications.deleteIfEmpty(applicationId);
    return application;
  }

  /**
   * A revision that turned DEGRADED / WORKLOAD_UNHEALTHY within `fleet.deploy.rollbackWindow`
   * of its apply is rolled back automatically, as one whose rollout failed is (see
   * `rollBackAutomatically`). The reconcile calls this when it degrades a deployment.
   */
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
    await this.rollBackAutomatically(deployment, revision, application);
  }

  /**
   * Automatic rollback: a revision whose rollout failed (its progress deadline passed), or that
   * turned DEGRADED / WORKLOAD_UNHEALTHY soon after its apply, and whose predecessor reached
   * DEPLOYED, is followed by a copy of that predecessor (cause `auto-rollback`), with an
   * `AUTO_ROLLED_BACK` event naming the failed revision and why. Off with
   * `spec.autoRollback: false`; a rollback, automatic or asked for, is never rolled back in
   * turn, so it cannot loop.
   */
  private async rollBackAutomatically(
    failed: Deployment,
    revision: Revision,
    application: Application,
  ): Promise<void> {
    const { stores } = this.options;
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
    try {
      refused = await this.options.revisionRefusal?.({
        entityRef: application.entityRef,
        appName: application.name,
        namespace: predecessor.namespace ?? undefined,
        env: predecessor.env ?? undefined,
      });
    } catch (error) {
      refused = asError(error).message;
    }
    if (refused) {
      this.options.logger.warn(
        `No automatic rollback of ${application.entityRef} on ${cluster.name} to revision ${predecessor.revision}: ${refused}`,
      );
      return;
    }
    await this.applyRevision(
      application,
      cluster,
      failed,
      {
        ...copyOf(predecessor),
        cause: 'auto-rollback',
        createdBy: 'fleet-rollout',
      },
      'fleet-rollout',
      `Revision ${revision.revision} failed (${failed.statusReason}: ${failed.message}); back to revision ${predecessor.revision}`,
      'AUTO_ROLLED_BACK',
    );
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
