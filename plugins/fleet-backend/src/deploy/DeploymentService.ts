import { LoggerService } from '@backstage/backend-plugin-api';
import { parseEntityRef } from '@backstage/catalog-model';
import { InputError, isErrorWithName, NotFoundError } from '@backstage/errors';
import {
  DeploymentReasons,
  FLEET_ANNOTATION_IMAGE,
  type Application,
  type ApplicationOrigin,
  type ApplicationPlacement,
  type ApplicationSpec,
  type Deployment,
} from '@cnp/plugin-fleet-common';
import type { EntityAnnotationReader } from '../catalog/entityAnnotations';
import { normalizeEntityRef } from '../catalog/entityRefs';
import type { FleetConfig } from '../config/FleetConfig';
import type {
  ApplicationStore,
  ClusterStore,
  DeploymentStore,
} from '../database/types';
import { assertClusterAcceptsDeployments } from '../health/clusterHealthRules';
import {
  isDns1123Label,
  sanitizeK8sName,
  withStableSuffix,
} from '../kubernetes/sanitizeK8sName';
import { buildManifests, type Manifests } from './manifests';
import type { ManifestApplier, RolloutState } from './ManifestApplier';
import { imageReferenceProblem } from '../kubernetes/imageReference';
import { asError } from '../util/errors';

export interface DeployRequest {
  entityRef: string;
  cluster: string;
  image?: string;
  replicas?: number;
}

export interface RegisterApplicationRequest {
  entityRef: string;
  origin?: ApplicationOrigin;
  spec: ApplicationSpec;
  placement?: ApplicationPlacement;
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
  >;
};

export interface DeploymentServiceOptions {
  stores: DeploymentServiceStores;
  applier: ManifestApplier;
  logger: LoggerService;
  deploy: Omit<FleetConfig['deploy'], 'pollIntervalMs'> & {
    pollIntervalMs?: number;
  };
  /**
   * The entity's annotations: its `cnp.io/image` is the image of a deploy that names none, for an
   * application that has none yet.
   */
  annotationsOf?: EntityAnnotationReader;
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

  async registerApplication(
    request: RegisterApplicationRequest,
  ): Promise<Application> {
    const entityRef = normalizeEntityRef(request.entityRef);
    await this.checkPlacement(request.placement);
    return this.options.stores.applications.insertApplication({
      entityRef,
      name: applicationNameFor(entityRef),
      origin: request.origin,
      spec: request.spec,
      placement: request.placement,
    });
  }

  async updateApplication(
    id: string,
    update: { spec?: ApplicationSpec; placement?: ApplicationPlacement },
  ): Promise<Application> {
    const current = await this.options.stores.applications.getApplication(id);
    if (!current) throw new NotFoundError(`Application '${id}' not found`);
    await this.checkPlacement(update.placement, current.placement);
    const updated = await this.options.stores.applications.updateApplication(
      id,
      {
        spec: update.spec ? { ...current.spec, ...update.spec } : undefined,
        placement: update.placement,
      },
    );
    if (!updated) throw new NotFoundError(`Application '${id}' not found`);
    return updated;
  }

  /** The objects an application should have on every cluster it is deployed to. */
  manifestsFor(application: Application): Manifests {
    const { deploy } = this.options;
    return buildManifests({
      name: application.name,
      entityRef: application.entityRef,
      namespace: deploy.namespace,
      spec: application.spec,
      defaultReplicas: deploy.defaultReplicas,
      progressDeadlineSeconds: Math.max(
        1,
        Math.ceil(deploy.progressDeadlineMs / 1000),
      ),
    });
  }

  /** The entity's `cnp.io/image`, checked like an image given in a request. */
  private async annotatedImage(entityRef: string): Promise<string | undefined> {
    const annotations = await this.options.annotationsOf?.(entityRef);
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
    const { stores, applier, deploy, logger } = this.options;
    const entityRef = normalizeEntityRef(request.entityRef);
    const cluster = await stores.clusters.getCluster(request.cluster);
    if (!cluster)
      throw new NotFoundError(`Cluster '${request.cluster}' not found`);
    assertClusterAcceptsDeployments(cluster);

    let application = await stores.applications.getApplicationByEntityRef(
      entityRef,
    );
    const image =
      request.image ??
      application?.spec.image ??
      (await this.annotatedImage(entityRef));
    if (!image) {
      throw new InputError(
        `No image to deploy for '${entityRef}': give 'image', register the application with spec.image, or annotate the entity with ${FLEET_ANNOTATION_IMAGE}`,
      );
    }
    if (!application) {
      try {
        application = await stores.applications.insertApplication({
          entityRef,
          name: applicationNameFor(entityRef),
          origin: 'imported',
          spec: { image, replicas: request.replicas },
        });
      } catch (error) {
        if (!isErrorWithName(error, 'ConflictError')) throw error;
        application = (await stores.applications.getApplicationByEntityRef(
          entityRef,
        ))!;
      }
    }
    if (
      (request.image && request.image !== application.spec.image) ||
      (request.replicas !== undefined &&
        request.replicas !== application.spec.replicas)
    ) {
      application = (await stores.applications.updateApplication(
        application.id,
        {
          spec: {
            ...application.spec,
            ...(request.image ? { image: request.image } : {}),
            ...(request.replicas !== undefined
              ? { replicas: request.replicas }
              : {}),
          },
        },
      ))!;
    }

    let deployment = await this.recordPending(
      application.id,
      cluster.name,
      image,
      actor,
    );
    const revision = deployment.revision;
    const manifests = this.manifestsFor(application);
    const result = await applier.apply(cluster, deploy.namespace, manifests, {
      ignoreReplicas: ignoresReplicas(application),
    });
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
          statusReason: DeploymentReasons.APPLY_FAILED,
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
          message: `Applied to ${cluster.name}/${deploy.namespace}; waiting for the rollout`,
          syncStatus: 'SYNCED',
          lastAppliedAt: now,
          lastSyncedAt: now,
        },
        actor,
        condition,
      );
      if (outcome) this.track(deployment.id, revision);
    }
    deployment =
      outcome ?? (await stores.deployments.getDeployment(deployment.id))!;
    return deployment;
  }

  private async recordPending(
    applicationId: string,
    cluster: string,
    image: string,
    actor: string,
  ) {
    const { stores } = this.options;
    const existing = await stores.deployments.getDeploymentFor(
      applicationId,
      cluster,
    );
    if (!existing) {
      try {
        return await stores.deployments.insertDeployment(
          {
            applicationId,
            cluster,
            status: 'PENDING',
            message: 'Deploy requested',
            image,
            revision: 1,
          },
          actor,
        );
      } catch (error) {
        if (!isErrorWithName(error, 'ConflictError')) throw error;
      }
    }
    const current =
      existing ??
      (await stores.deployments.getDeploymentFor(applicationId, cluster))!;
    return (await stores.deployments.updateDeploymentStatus(
      current.id,
      {
        status: 'PENDING',
        statusReason: null,
        message: 'Deploy requested',
        image,
        bumpRevision: true,
      },
      actor,
    ))!;
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

    const state = await applier.rolloutState(
      cluster,
      deploy.namespace,
      application.name,
    );
    const appliedAt = deployment.lastAppliedAt
      ? Date.parse(deployment.lastAppliedAt)
      : Date.now();
    const overdue = Date.now() - appliedAt > deploy.progressDeadlineMs;
    if (state.kind === 'ready') {
      // The cluster may have gone OFFLINE during the rollout: then this is what the cascade
      // would have done, so that targeted recovery restores it with the cluster.
      const latest = await stores.clusters.getCluster(deployment.cluster);
      const offline = latest?.status === 'OFFLINE';
      await stores.deployments.updateDeploymentStatus(
        deploymentId,
        offline
          ? {
              status: 'DEGRADED',
              statusReason: DeploymentReasons.CLUSTER_OFFLINE,
              message: `Rollout complete, but cluster '${deployment.cluster}' is OFFLINE`,
            }
          : {
              status: 'DEPLOYED',
              statusReason: null,
              message: 'Rollout complete: all replicas updated and available',
            },
        'fleet-rollout',
        condition,
      );
      return;
    }
    if (state.kind === 'deadline-exceeded' || overdue) {
      const detail = rolloutDetail(state);
      await stores.deployments.updateDeploymentStatus(
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
      return;
    }
    this.track(deploymentId, revision);
  }

  /**
   * Follows the rollouts of deployments left PROGRESSING (by a restart, or by another replica
   * that stopped), and fails those left PENDING for longer than the progress deadline: their
   * apply was interrupted. Runs at startup and on every reconcile.
   */
  async adoptUnfinished(): Promise<number> {
    const { stores, deploy } = this.options;
    let adopted = 0;
    for (const d of await stores.deployments.listDeployments()) {
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
