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
  FLEET_LIST_LIMITS,
  type Application,
  type Cluster,
  type ClusterStatus,
  type Deployment,
  type ListResponse,
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
 * goes through Fleet's own authentication and permission checks.
 *
 * Errors keep the status Fleet answered with: a 400 is an `InputError`, 401 an
 * `AuthenticationError`, 403 a `NotAllowedError`, 404 a `NotFoundError` and 409 a
 * `ConflictError`, each with a message such as `Fleet answered 409 Conflict: Cluster 'west' is
 * OFFLINE ...`; anything else is a `ResponseError`.
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
    return this.listAll<Cluster>(
      '/clusters',
      { status: filter.status },
      options,
    );
  }

  async listDeployments(
    filter: { entityRef?: string; cluster?: string } = {},
    options?: FleetApiRequestOptions,
  ): Promise<Deployment[]> {
    return this.listAll<Deployment>(
      '/deployments',
      { entityRef: filter.entityRef, cluster: filter.cluster },
      options,
    );
  }

  registerApplication(
    request: FleetRegisterApplicationRequest,
    options?: FleetApiRequestOptions,
  ): Promise<Application> {
    return this.request<Application>('POST', '/applications', request, options);
  }

  deploy(
    request: FleetDeployRequest,
    options?: FleetApiRequestOptions,
  ): Promise<Deployment> {
    return this.request<Deployment>('POST', '/deployments', request, options);
  }

  async listApplications(
    filter: { entityRef?: string } = {},
    options?: FleetApiRequestOptions,
  ): Promise<Application[]> {
    return this.listAll<Application>(
      '/applications',
      { entityRef: filter.entityRef },
      options,
    );
  }

  release(
    applicationId: string,
    request: FleetReleaseRequest,
    options?: FleetApiRequestOptions,
  ): Promise<Release> {
    return this.request<Release>(
      'POST',
      `/applications/${encodeURIComponent(applicationId)}/releases`,
      request,
      options,
    );
  }

  getRelease(
    releaseId: string,
    options?: FleetApiRequestOptions,
  ): Promise<Release> {
    return this.request<Release>(
      'GET',
      `/releases/${encodeURIComponent(releaseId)}`,
      undefined,
      options,
    );
  }

  /**
   * Every item of a paged list: pages of the largest size, each asked with the cursor the one
   * before gave, until none is given.
   */
  private async listAll<T>(
    path: string,
    filter: Record<string, string | undefined>,
    options: FleetApiRequestOptions | undefined,
  ): Promise<T[]> {
    const items: T[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    do {
      const params = new URLSearchParams();
      for (const [key, value] of Object.entries(filter))
        if (value) params.set(key, value);
      params.set('limit', String(FLEET_LIST_LIMITS.max));
      if (cursor) params.set('cursor', cursor);
      const page: ListResponse<T> = await this.request<ListResponse<T>>(
        'GET',
        `${path}?${params}`,
        undefined,
        options,
      );
      items.push(...page.items);
      cursor = page.nextCursor;
      // A cursor seen before would only loop.
      if (cursor && seen.has(cursor)) break;
      if (cursor) seen.add(cursor);
    } while (cursor);
    return items;
  }

  private async request<T>(
    method: string,
    path: string,
    body: unknown,
    options: FleetApiRequestOptions | undefined,
  ): Promise<T> {
    const baseUrl = await this.discovery.getBaseUrl('fleet');
    const { token } = await this.auth.getPluginRequestToken({
      onBehalfOf:
        options?.credentials ?? (await this.auth.getOwnServiceCredentials()),
      targetPluginId: 'fleet',
    });
    const response = await this.fetchFn(`${baseUrl}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    if (!response.ok) {
      throw await toFleetError(response);
    }
    return (await response.json()) as T;
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
