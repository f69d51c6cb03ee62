import {
  ConflictError,
  InputError,
  isErrorWithName,
  NotFoundError,
} from '@backstage/errors';
import type {
  Application,
  ApplicationPlacement,
  ApplicationSpec,
} from '@cnp/plugin-fleet-common';
import { normalizeEntityRef } from '../catalog/entityRefs';
import { PreconditionFailedError } from '../database/conflicts';
import type { PlacementGrantInput } from '../database/types';
import { assertClusterAcceptsDeployments } from '../health/clusterHealthRules';
import { SYSTEM_NAMESPACES } from '../tenancy/projects';
import { applicationNameFor } from './applicationNames';
import type {
  DeploymentServiceStores,
  DeploySettings,
  RegisterApplicationRequest,
} from './deploymentTypes';

/** A change to an application: its spec is merged, its placement replaced. */
export interface ApplicationUpdate {
  spec?: ApplicationSpec;
  placement?: ApplicationPlacement;
  /** The new placement's author's decision, written in the same transaction. */
  placementGrant?: PlacementGrantInput;
}

/**
 * Registers and changes applications: a namespace Fleet does not deploy to, or a placement on an
 * unknown (or, for a newly named cluster, OFFLINE) cluster, is refused.
 */
export class ApplicationWriter {
  constructor(
    private readonly options: {
      stores: Pick<
        DeploymentServiceStores,
        'applications' | 'clusters' | 'deployments'
      >;
      deploy: Pick<DeploySettings, 'forbiddenNamespaces'>;
    },
  ) {}

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

  /** See `DeploymentService.updateApplication`. */
  async updateApplication(
    id: string,
    update: ApplicationUpdate,
    ifMatch?: number[],
  ): Promise<Application> {
    const { stores } = this.options;
    for (let attempt = 1; ; attempt++) {
      const current = await stores.applications.getApplication(id);
      if (!current) throw new NotFoundError(`Application '${id}' not found`);
      if (ifMatch !== undefined && !ifMatch.includes(current.version)) {
        throw new PreconditionFailedError(
          `Application '${id}' is at version ${current.version} (ETag "${current.version}"), which If-Match does not name: read it again and apply the change to what it is now`,
        );
      }
      await this.checkNamespaceChange(current, update.spec);
      await this.checkPlacement(update.placement, current.placement);
      try {
        const updated = await stores.applications.updateApplication(
          id,
          {
            spec: update.spec ? { ...current.spec, ...update.spec } : undefined,
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

  /** A new namespace must be one Fleet deploys to, and the application deployed nowhere. */
  private async checkNamespaceChange(
    current: Application,
    spec: ApplicationSpec | undefined,
  ) {
    if (
      spec?.namespace === undefined ||
      spec.namespace === current.spec.namespace
    )
      return;
    this.checkNamespace(spec.namespace);
    const live = await this.options.stores.deployments.listDeployments({
      applicationId: current.id,
    });
    if (live.length > 0) {
      throw new ConflictError(
        `Application '${current.id}' has ${live.length} deployment(s): undeploy them before changing its namespace`,
      );
    }
  }
}
