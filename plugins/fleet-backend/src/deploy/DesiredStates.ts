import {
  ConflictError,
  InputError,
  NotAllowedError,
  ServiceUnavailableError,
} from '@backstage/errors';
import {
  FLEET_ANNOTATION_IMAGE,
  type Application,
  type ApplicationPlacement,
  type ApplicationSpec,
  type EnvMap,
  type Revision,
} from '@cnp/plugin-fleet-common';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ClusterRecord, RevisionSpec } from '../database/types';
import { imageReferenceProblem } from '../kubernetes/imageReference';
import { matchesSelector } from '../kubernetes/labelSelector';
import {
  assertWithinBounds,
  type ManifestSet,
} from '../repository/ManifestReader';
import { manifestsUrlOf } from '../repository/manifestsRef';
import { applicationNameFor } from './applicationNames';
import type {
  DeployRequest,
  DeploymentServiceOptions,
  DesiredState,
} from './deploymentTypes';
import { DEFAULT_CONTAINER_PORT } from './manifests';
import { workloadFromObjects, type ManifestSources } from './manifestSources';
import { OwnershipConflictError } from './ownership';
import {
  digestOf,
  recordedImageOf,
  renderRepositoryObjects,
  sourceLabelOf,
  workloadOf,
} from './repositoryObjects';

/** A revision's settings, as a deployment's revision or a new one records them. */
export type RevisionSettings = Pick<
  Revision,
  'image' | 'replicas' | 'env' | 'resources' | 'namespace' | 'port'
> &
  Partial<Pick<Revision, 'source' | 'deploymentId' | 'revision'>>;

/** A component's own manifests as read for a deploy, with the entity's annotations. */
export interface ReadManifests {
  set: ManifestSet;
  annotations: Record<string, string>;
}

/** What `revisionFor` decides from: a deploy's request to one cluster of an application. */
export interface RevisionRequest {
  application: Application;
  request: Pick<DeployRequest, 'image' | 'replicas' | 'env' | 'version'>;
  /** The deployment's current revision on that cluster, if it has one. */
  current: Revision | undefined;
  cluster: Pick<ClusterRecord, 'name' | 'labels' | 'serverVersion'>;
  /** The component's own manifests, when it brings them (see `manifestsOf`). */
  manifests?: ReadManifests;
}

/** What `desiredFor` renders: one revision of an application on one cluster. */
export interface DesiredStateRequest {
  application: Application;
  /** Without one (a deployment recorded before revisions existed), the application's defaults. */
  revision?: RevisionSettings | RevisionSpec;
  cluster: Pick<ClusterRecord, 'name' | 'labels' | 'serverVersion'>;
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

/**
 * What a revision asked the cluster to run, absent fields left out: what a rollback copies of an
 * earlier revision, and what a manifest source renders.
 */
export function copyOf(
  revision: RevisionSettings | RevisionSpec,
): RevisionSpec {
  return {
    image: revision.image,
    replicas: revision.replicas ?? undefined,
    env: revision.env ?? undefined,
    resources: revision.resources ?? undefined,
    namespace: revision.namespace ?? undefined,
    port: revision.port ?? undefined,
    ...(revision.source ? { source: revision.source } : {}),
  };
}

/**
 * What deploys make: the revision a deploy to one cluster records, and the objects a revision
 * asks that cluster to run (from the application's manifest source).
 */
export class DesiredStates {
  constructor(
    private readonly options: Pick<
      DeploymentServiceOptions,
      | 'deploy'
      | 'annotationsOf'
      | 'manifestReader'
      | 'objectsRefusal'
      | 'sourceRefusal'
      | 'stores'
    > & { sources: ManifestSources },
  ) {}

  /**
   * The objects a revision of a component's own manifests recorded (read from the store for a
   * recorded revision); undefined for a revision of the generated workload.
   */
  async recordedObjects(
    revision: RevisionSettings | RevisionSpec | undefined,
  ): Promise<KubernetesObject[] | undefined> {
    if (!revision?.source) return undefined;
    if ('objects' in revision && revision.objects) return revision.objects;
    const { deploymentId, revision: number } = revision as RevisionSettings;
    const objects =
      deploymentId !== undefined && number !== undefined
        ? await this.options.stores.revisions.getRevisionObjects(
            deploymentId,
            number,
          )
        : undefined;
    if (!objects) {
      throw new Error(
        `Revision ${number} of deployment ${deploymentId} came from ${revision.source.url} but recorded no objects`,
      );
    }
    return objects;
  }

  /**
   * The component's own manifests at `version`, when its entity has `cnp.io/manifests-ref`;
   * undefined for a component of the generated workload. A version for a component without
   * manifests is an `InputError`. A catalog that cannot be read is a `ServiceUnavailableError`
   * when it matters: a version was asked for, or the deployment already runs manifests
   * (`runsManifests`), or any deployment of the component's application does, on any cluster;
   * otherwise the component is taken to keep the generated workload.
   */
  async manifestsOf(
    entityRef: string,
    version: string | undefined,
    runsManifests = false,
  ): Promise<ReadManifests | undefined> {
    let annotations: Record<string, string> | undefined;
    try {
      annotations = (await this.options.annotationsOf?.(entityRef)) ?? {};
    } catch (error) {
      if (
        version ||
        runsManifests ||
        (await this.anyDeploymentRunsManifests(entityRef))
      ) {
        throw new ServiceUnavailableError(
          `Cannot read where the manifests of '${entityRef}' are: the catalog did not answer`,
        );
      }
      return undefined;
    }
    const url = manifestsUrlOf(entityRef, annotations);
    if (!url) {
      if (version) {
        throw new InputError(
          `'${entityRef}' brings no manifests of its own (no cnp.io/manifests-ref annotation): a version applies only to those`,
        );
      }
      return undefined;
    }
    const refusal = await this.options.sourceRefusal?.({
      entityRef,
      appName: applicationNameFor(entityRef),
      url,
    });
    if (refusal) throw new NotAllowedError(refusal);
    const reader = this.options.manifestReader;
    if (!reader) {
      throw new ServiceUnavailableError(
        `'${entityRef}' brings its own manifests, but this Fleet backend has no URL reader to read them`,
      );
    }
    return { set: await reader.read(url, version), annotations };
  }

  /** Whether a deployment of the entity's application, on any cluster, runs its own manifests. */
  private async anyDeploymentRunsManifests(
    entityRef: string,
  ): Promise<boolean> {
    const { stores } = this.options;
    const application = await stores.applications.getApplicationByEntityRef(
      entityRef,
    );
    if (!application) return false;
    const deployments = await stores.deployments.listDeployments({
      applicationId: application.id,
    });
    const revisions = await Promise.all(
      deployments.map(d => stores.revisions.getRevision(d.id, d.revision)),
    );
    return revisions.some(r => !!r?.source);
  }

  /**
   * What a deployment should run: its revision (image, replicas, env, resources, namespace) on
   * the application's own settings (port, probes), rendered by the application's manifest
   * source for the cluster. Without a revision (a deployment recorded before revisions existed),
   * the application's defaults.
   */
  async desiredFor(request: DesiredStateRequest): Promise<DesiredState> {
    const { application, revision, cluster } = request;
    const namespace = revision?.namespace ?? this.options.deploy.namespace;
    const recorded = await this.recordedObjects(revision);
    if (recorded) return { namespace, objects: recorded };
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
    const source = this.options.sources.sourceFor(application);
    const objects = await source.render({
      application,
      spec,
      revision: revision && copyOf(revision),
      cluster: {
        name: cluster.name,
        labels: cluster.labels,
        serverVersion: cluster.serverVersion,
      },
      namespace,
    });
    return {
      namespace,
      manifests: workloadFromObjects(objects, {
        sourceId: source.id,
        name: application.name,
        entityRef: application.entityRef,
        namespace,
      }),
    };
  }

  /** See `DeploymentService.revisionFor`. */
  async revisionFor(asked: RevisionRequest): Promise<RevisionSpec> {
    if (asked.manifests) return this.repositoryRevision(asked, asked.manifests);
    const { application, request, current, cluster } = asked;
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

  /**
   * A revision of the component's own manifests for one cluster: the objects rendered for it
   * (the placement's patches, the namespace, Fleet's marks; a deploy's `image` and `replicas` set
   * on the workload), within the bounds a revision records and the kinds and namespaces the
   * project allows (403 otherwise, before anything is recorded or applied). Manifests that mark
   * an object as another owner's are a `ConflictError` naming `OWNERSHIP_CONFLICT`.
   */
  private async repositoryRevision(
    asked: RevisionRequest,
    manifests: ReadManifests,
  ): Promise<RevisionSpec> {
    const { application, request, cluster } = asked;
    const { set, annotations } = manifests;
    const namespace =
      application.spec.namespace ?? this.options.deploy.namespace;
    let objects: KubernetesObject[];
    try {
      objects = renderRepositoryObjects(set.objects, {
        entityRef: application.entityRef,
        namespace,
        placement: application.placement,
        cluster,
      });
    } catch (error) {
      // Manifests that claim an object for another owner: a 409, before anything is recorded.
      if (error instanceof OwnershipConflictError)
        throw new ConflictError(error.message);
      throw error;
    }
    if (request.image !== undefined || request.replicas !== undefined) {
      const workload = workloadOf(objects, annotations) as any;
      if (!workload) {
        throw new InputError(
          `The manifests of '${application.entityRef}' hold no single Deployment or Rollout (name one with cnp.io/workload) to set the image or replicas of`,
        );
      }
      if (request.replicas !== undefined)
        workload.spec = { ...workload.spec, replicas: request.replicas };
      const container = workload.spec?.template?.spec?.containers?.[0];
      if (request.image !== undefined && container)
        container.image = request.image;
    }
    assertWithinBounds(set.url, objects);
    const refusal = await this.options.objectsRefusal?.({
      entityRef: application.entityRef,
      appName: application.name,
      objects,
      sourceUrl: set.url,
    });
    if (refusal) throw new NotAllowedError(refusal);
    return {
      image: recordedImageOf(objects, annotations) ?? sourceLabelOf(set),
      namespace: application.spec.namespace,
      source: {
        url: set.url,
        version: set.version ?? null,
        commit: set.commit ?? null,
        digest: digestOf(objects),
        objectCount: objects.length,
      },
      objects,
    };
  }

  /** The entity's `cnp.io/image`, checked like an image given in a request. */
  async annotatedImage(entityRef: string): Promise<string | undefined> {
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
}
