import type { DiscoveryApi, FetchApi } from '@backstage/core-plugin-api';
import { ResponseError } from '@backstage/errors';
import {
  FLEET_LIST_LIMITS,
  type Application,
  type ApplicationFleetStatus,
  type Cluster,
  type ClusterStatus,
  type Deployment,
  type FleetEvent,
  type FleetSummary,
  type HealthCycleSummary,
  type ListResponse,
  type Release,
  type Revision,
} from '@cnp/plugin-fleet-common';
import type {
  CreateDeploymentRequest,
  CreateReleaseRequest,
  FleetApi,
} from './FleetApi';

/**
 * The {@link FleetApi} over HTTP: `discoveryApi` finds the backend, `fetchApi` carries the
 * user's credentials. A failed call throws a `ResponseError` holding the API's own error body.
 *
 * @public
 */
export class FleetClient implements FleetApi {
  private readonly discoveryApi: DiscoveryApi;
  private readonly fetchApi: FetchApi;

  constructor(options: { discoveryApi: DiscoveryApi; fetchApi: FetchApi }) {
    this.discoveryApi = options.discoveryApi;
    this.fetchApi = options.fetchApi;
  }

  private async request<T>(
    path: string,
    init?: {
      method?: string;
      body?: unknown;
      query?: Record<string, string | number | undefined>;
    },
  ): Promise<T> {
    const base = await this.discoveryApi.getBaseUrl('fleet');
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(init?.query ?? {})) {
      if (value !== undefined && value !== '') query.set(key, String(value));
    }
    const url = `${base}${path}${query.size ? `?${query}` : ''}`;
    const response = await this.fetchApi.fetch(url, {
      method: init?.method ?? 'GET',
      headers:
        init?.body !== undefined
          ? { 'Content-Type': 'application/json' }
          : undefined,
      body: init?.body !== undefined ? JSON.stringify(init.body) : undefined,
    });
    if (!response.ok) throw await ResponseError.fromResponse(response);
    if (response.status === 204) return undefined as T;
    return (await response.json()) as T;
  }

  /**
   * Every item of a list: the paged lists (clusters, applications, deployments, asked for pages
   * of the largest size, so that a card's poll stays one request) answer a page at a time, and
   * the next page is asked with the cursor the last one gave, until none is given.
   */
  private async list<T>(
    path: string,
    query?: Record<string, string | number | undefined>,
  ): Promise<T[]> {
    const items: T[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    do {
      const page: ListResponse<T> = await this.request<ListResponse<T>>(path, {
        query: { ...query, cursor },
      });
      items.push(...page.items);
      cursor = page.nextCursor;
      // A cursor seen before would only loop.
      if (cursor && seen.has(cursor)) break;
      if (cursor) seen.add(cursor);
    } while (cursor);
    return items;
  }

  listClusters(options?: { status?: ClusterStatus }): Promise<Cluster[]> {
    return this.list('/clusters', {
      status: options?.status,
      limit: FLEET_LIST_LIMITS.max,
    });
  }

  getCluster(name: string): Promise<Cluster> {
    return this.request(`/clusters/${encodeURIComponent(name)}`);
  }

  listClusterEvents(name: string): Promise<FleetEvent[]> {
    return this.list(`/clusters/${encodeURIComponent(name)}/events`);
  }

  listRecentEvents(options?: { limit?: number }): Promise<FleetEvent[]> {
    return this.list('/events', { limit: options?.limit });
  }

  getSummary(): Promise<FleetSummary> {
    return this.request('/summary');
  }

  runHealthCycle(): Promise<HealthCycleSummary> {
    return this.request('/health/run', { method: 'POST' });
  }

  listApplications(options?: { entityRef?: string }): Promise<Application[]> {
    return this.list('/applications', {
      entityRef: options?.entityRef,
      limit: FLEET_LIST_LIMITS.max,
    });
  }

  getApplicationStatus(applicationId: string): Promise<ApplicationFleetStatus> {
    return this.request(
      `/applications/${encodeURIComponent(applicationId)}/status`,
    );
  }

  createRelease(
    applicationId: string,
    request: CreateReleaseRequest,
  ): Promise<Release> {
    return this.request(
      `/applications/${encodeURIComponent(applicationId)}/releases`,
      { method: 'POST', body: request },
    );
  }

  getRelease(id: string): Promise<Release> {
    return this.request(`/releases/${encodeURIComponent(id)}`);
  }

  listReleases(applicationId: string): Promise<Release[]> {
    return this.list(
      `/applications/${encodeURIComponent(applicationId)}/releases`,
    );
  }

  promoteRelease(id: string): Promise<Release> {
    return this.releaseAction(id, 'promote');
  }

  pauseRelease(id: string): Promise<Release> {
    return this.releaseAction(id, 'pause');
  }

  resumeRelease(id: string): Promise<Release> {
    return this.releaseAction(id, 'resume');
  }

  abortRelease(id: string): Promise<Release> {
    return this.releaseAction(id, 'abort');
  }

  private releaseAction(
    id: string,
    action: 'promote' | 'pause' | 'resume' | 'abort',
  ): Promise<Release> {
    return this.request(`/releases/${encodeURIComponent(id)}/${action}`, {
      method: 'POST',
    });
  }

  listDeployments(options?: {
    entityRef?: string;
    cluster?: string;
  }): Promise<Deployment[]> {
    return this.list('/deployments', {
      entityRef: options?.entityRef,
      cluster: options?.cluster,
      limit: FLEET_LIST_LIMITS.max,
    });
  }

  createDeployment(request: CreateDeploymentRequest): Promise<Deployment> {
    return this.request('/deployments', { method: 'POST', body: request });
  }

  listDeploymentEvents(id: string): Promise<FleetEvent[]> {
    return this.list(`/deployments/${encodeURIComponent(id)}/events`);
  }

  listRevisions(deploymentId: string): Promise<Revision[]> {
    return this.list(
      `/deployments/${encodeURIComponent(deploymentId)}/revisions`,
    );
  }

  rollback(deploymentId: string, toRevision?: number): Promise<Deployment> {
    return this.request(
      `/deployments/${encodeURIComponent(deploymentId)}/rollback`,
      { method: 'POST', body: { toRevision } },
    );
  }

  undeploy(
    deploymentId: string,
    options?: { force?: boolean },
  ): Promise<Deployment> {
    return this.request(`/deployments/${encodeURIComponent(deploymentId)}`, {
      method: 'DELETE',
      query: { force: options?.force ? 'true' : undefined },
    });
  }
}

/**
 * The words the API used for a failure: the `error.message` of its JSON body when there is one.
 *
 * @public
 */
export function apiErrorMessage(error: unknown): string {
  if (error instanceof ResponseError) {
    return error.body?.error?.message ?? error.message;
  }
  const e = error as {
    name?: string;
    body?: { error?: { message?: string } };
    message?: string;
  };
  return e?.body?.error?.message ?? e?.message ?? String(error);
}
