import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import type {
  EnvMapInput,
  Application,
  ApplicationOrigin,
  ApplicationPlacement,
  ApplicationSpecInput,
  Cluster,
  ClusterStatus,
  Deployment,
  Release,
  ReleaseStrategy,
} from '@cnp/plugin-fleet-common';

/** @public */
export interface FleetApiRequestOptions {
  /**
   * Whose call this is: a user's credentials (e.g. a scaffolder task's initiator) so that Fleet's
   * permission checks apply to that user; by default the calling plugin's own service credentials.
   */
  credentials?: BackstageCredentials;
}

/** @public */
export interface FleetRegisterApplicationRequest {
  entityRef: string;
  origin?: ApplicationOrigin;
  spec: ApplicationSpecInput;
  placement?: ApplicationPlacement;
}

/** @public */
export interface FleetDeployRequest {
  entityRef: string;
  cluster: string;
  image?: string;
  replicas?: number;
  /** For a component with its own manifests: the branch, tag or commit to deploy. */
  version?: string;
}

/** @public */
export interface FleetReleaseRequest {
  image?: string;
  replicas?: number;
  env?: EnvMapInput;
  /** Only these clusters; default: every cluster the application is placed on. */
  clusters?: string[];
  /**
   * A progressive release's waves, canary steps, analysis and rollback; passed to Fleet as is,
   * which validates it (an `InputError` with its reason when it is invalid).
   */
  strategy?: ReleaseStrategy;
  /** For a component with its own manifests: the branch, tag or commit to release. */
  version?: string;
  /**
   * The application's stage to release to; a stage that requires another takes only a version
   * that stage verified (a `ConflictError` naming what is missing).
   */
  stage?: string;
}

/**
 * What other backend plugins and modules ask of Fleet, through its HTTP API: every call is
 * authenticated and authorized by Fleet itself, as the calling plugin or, with
 * `options.credentials`, as the user it acts for. Refusals are thrown as the `@backstage/errors`
 * error of Fleet's status (`InputError`, `NotAllowedError`, `NotFoundError`, `ConflictError`...).
 *
 * Get it through {@link fleetServiceRef}.
 *
 * @public
 */
export interface FleetService {
  /**
   * The clusters Fleet tracks, optionally only those in one status: all of them, read page by
   * page (the list calls follow the API's `nextCursor`).
   */
  listClusters(
    filter?: { status?: ClusterStatus },
    options?: FleetApiRequestOptions,
  ): Promise<Cluster[]>;

  /** The deployments of an entity and/or on a cluster. */
  listDeployments(
    filter?: { entityRef?: string; cluster?: string },
    options?: FleetApiRequestOptions,
  ): Promise<Deployment[]>;

  /** Records a catalog component as a Fleet application. */
  registerApplication(
    request: FleetRegisterApplicationRequest,
    options?: FleetApiRequestOptions,
  ): Promise<Application>;

  /** Starts a deployment of an entity to one cluster. */
  deploy(
    request: FleetDeployRequest,
    options?: FleetApiRequestOptions,
  ): Promise<Deployment>;

  /** The applications of an entity (one at most). */
  listApplications(
    filter: { entityRef?: string },
    options?: FleetApiRequestOptions,
  ): Promise<Application[]>;

  /** Starts a fleet release of an application: a new revision on each of its clusters. */
  release(
    applicationId: string,
    request: FleetReleaseRequest,
    options?: FleetApiRequestOptions,
  ): Promise<Release>;

  /** A release, with each cluster's progress. */
  getRelease(
    releaseId: string,
    options?: FleetApiRequestOptions,
  ): Promise<Release>;
}
