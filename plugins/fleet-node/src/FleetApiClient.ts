import type {
  AuthService,
  DiscoveryService,
} from '@backstage/backend-plugin-api';
import {
  AuthenticationError,
  ConflictError,
  InputError,
  NotAllowedError,
  NotFoundError,
  ResponseError,
} from '@backstage/errors';
import {
  fleetApiRequest,
  listAllPages,
  type FleetApiAnswer,
  type FleetApiMethod,
  type FleetApiPath,
  type FleetApiRequestParts,
  type Application,
  type Cluster,
  type ClusterStatus,
  type Deployment,
  type Release,
} from '@cnp/plugin-fleet-common';
import type {
  FleetApiRequestOptions,
  FleetDeployRequest,
  FleetReleaseRequest,
  FleetRegisterApplicationRequest,
  FleetService,
} from './FleetService';

/**
 * A typed client of the Fleet HTTP API (`/api/fleet`) for other backend plugins and modules. It
 * finds Fleet with the discovery service and calls it with a plugin request token, so every call
 * goes through Fleet's own authentication and permission checks. Each call is typed by the Fleet
 * OpenAPI spec (through `fleetApiRequest` of `@cnp/plugin-fleet-common`).
 *
 * Errors keep the status Fleet answered with: a 400 is an `InputError`, 401 an
 * `AuthenticationError`, 403 a `NotAllowedError`, 404 a `NotFoundError` and 409 a
 * `ConflictError`, each with a message such as
 * `Fleet answered 409 Conflict: Cluster 'west' is OFFLINE ...`; anything else is a
 * `ResponseError`.
 *
 * @public
 */
export class FleetApiClient implements FleetService {
  private constructor(
    private readonly discovery: DiscoveryService,
    private readonly auth: AuthService,
    private readonly fetchFn: typeof fetch,
  ) {}

  static create(options: {
    discovery: DiscoveryService;
    auth: AuthService;
    fetch?: typeof fetch;
  }): FleetApiClient {
    return new FleetApiClient(
      options.discovery,
      options.auth,
      options.fetch ?? fetch,
    );
  }

  async listClusters(
    filter: { status?: ClusterStatus } = {},
    options?: FleetApiRequestOptions,
  ): Promise<Cluster[]> {
    return listAllPages(page =>
      this.call(
        'get',
        '/clusters',
        { query: { status: filter.status, ...page } },
        options,
      ),
    );
  }

  async listDeployments(
    filter: { entityRef?: string; cluster?: string } = {},
    options?: FleetApiRequestOptions,
  ): Promise<Deployment[]> {
    return listAllPages(page =>
      this.call(
        'get',
        '/deployments',
        {
          query: {
            entityRef: filter.entityRef,
            cluster: filter.cluster,
            ...page,
          },
        },
        options,
      ),
    );
  }

  registerApplication(
    request: FleetRegisterApplicationRequest,
    options?: FleetApiRequestOptions,
  ): Promise<Application> {
    return this.call('post', '/applications', { body: request }, options);
  }

  deploy(
    request: FleetDeployRequest,
    options?: FleetApiRequestOptions,
  ): Promise<Deployment> {
    return this.call('post', '/deployments', { body: request }, options);
  }

  async listApplications(
    filter: { entityRef?: string } = {},
    options?: FleetApiRequestOptions,
  ): Promise<Application[]> {
    return listAllPages(page =>
      this.call(
        'get',
        '/applications',
        { query: { entityRef: filter.entityRef, ...page } },
        options,
      ),
    );
  }

  release(
    applicationId: string,
    request: FleetReleaseRequest,
    options?: FleetApiRequestOptions,
  ): Promise<Release> {
    return this.call(
      'post',
      '/applications/{id}/releases',
      { path: { id: applicationId }, body: request },
      options,
    );
  }

  getRelease(
    releaseId: string,
    options?: FleetApiRequestOptions,
  ): Promise<Release> {
    return this.call(
      'get',
      '/releases/{id}',
      { path: { id: releaseId } },
      options,
    );
  }

  /** One operation of the Fleet API, typed by its OpenAPI spec, with a plugin request token. */
  private async call<P extends FleetApiPath, M extends FleetApiMethod<P>>(
    method: M,
    path: P,
    parts: FleetApiRequestParts<P, M>,
    options: FleetApiRequestOptions | undefined,
  ): Promise<FleetApiAnswer<P, M>> {
    const baseUrl = await this.discovery.getBaseUrl('fleet');
    const { token } = await this.auth.getPluginRequestToken({
      onBehalfOf:
        options?.credentials ?? (await this.auth.getOwnServiceCredentials()),
      targetPluginId: 'fleet',
    });
    return fleetApiRequest({
      baseUrl,
      fetch: this.fetchFn,
      method,
      path,
      parts: { ...parts, headers: { Authorization: `Bearer ${token}` } },
      onError: toFleetError,
    });
  }
}

async function toFleetError(response: Response): Promise<Error> {
  const error = await ResponseError.fromResponse(response);
  const message = `Fleet answered ${response.status} ${response.statusText}: ${error.cause.message}`;
  switch (response.status) {
    case 400:
      return new InputError(message, error);
    case 401:
      return new AuthenticationError(message, error);
    case 403:
      return new NotAllowedError(message, error);
    case 404:
      return new NotFoundError(message, error);
    case 409:
      return new ConflictError(message, error);
    default:
      return error;
  }
}
