import { InputError } from '@backstage/errors';
import {
  FLEET_ANNOTATION_IMAGE,
  type Application,
  type ApplicationPlacement,
  type ApplicationSpec,
  type EnvMap,
  type Revision,
} from '@cnp/plugin-fleet-common';
import type { ClusterRecord, RevisionSpec } from '../database/types';
import { imageReferenceProblem } from '../kubernetes/imageReference';
import { matchesSelector } from '../kubernetes/labelSelector';
import type {
  DeployRequest,
  DeploymentServiceOptions,
  DesiredState,
} from './deploymentTypes';
import { DEFAULT_CONTAINER_PORT } from './manifests';
import { workloadFromObjects, type ManifestSources } from './manifestSources';

/** A revision's settings, as a deployment's revision or a new one records them. */
export type RevisionSettings = Pick<
  Revision,
  'image' | 'replicas' | 'env' | 'resources' | 'namespace' | 'port'
>;

/** What `revisionFor` decides from: a deploy's request to one cluster of an application. */
export interface RevisionRequest {
  application: Application;
  request: Pick<DeployRequest, 'image' | 'replicas' | 'env'>;
  /** The deployment's current revision on that cluster, if it has one. */
  current: Revision | undefined;
  cluster: Pick<ClusterRecord, 'name' | 'labels' | 'serverVersion'>;
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
      'deploy' | 'annotationsOf'
    > & { sources: ManifestSources },
  ) {}

  /**
   * What a deployment should run: its revision (image, replicas, env, resources, namespace) on
   * the application's own settings (port, probes), rendered by the application's manifest
   * source for the cluster. Without a revision (a deployment recorded before revisions existed),
   * the application's defaults.
   */
  async desiredFor(request: DesiredStateRequest): Promise<DesiredState> {
    const { application, revision, cluster } = request;
    const namespace = revision?.namespace ?? this.options.deploy.namespace;
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
