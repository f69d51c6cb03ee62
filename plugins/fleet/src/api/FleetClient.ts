import type { DiscoveryApi, FetchApi } from '@backstage/core-plugin-api';
import { ResponseError } from '@backstage/errors';
import {
  FLEET_CLUSTER_NAMES_MAX,
  fleetApiRequest,
  listAllPages,
  type FleetApiAnswer,
  type FleetApiMethod,
  type FleetApiPath,
  type FleetApiRequestParts,
  type Application,
  type ApplicationFleetStatus,
  type Cluster,
  type ClusterStatus,
  type Deployment,
  type FleetEvent,
  type FleetSummary,
  type ClusterDeploymentCounts,
  type HealthCycleSummary,
  type Preview,
  type PreviewRequest,
  type FreezeWindow,
  type AnalysisProvider,
  type Release,
  type Revision,
  type StageStatus,
} from '@cnp/plugin-fleet-common';
import type {
  CreateDeploymentRequest,
  CreateReleaseRequest,
  FleetApi,
} from './FleetApi';

/**
 * The {@link FleetApi} over HTTP: `discoveryApi` finds the backend, `fetchApi` carries the
 * user's credentials. Each call is typed by the Fleet OpenAPI spec (through
 * `fleetApiRequest` of `@cnp/plugin-fleet-common`). A failed call throws a `ResponseError`
 * holding the API's own error body.
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

  /** One operation of the Fleet API, typed by its OpenAPI spec. */
  private async call<P extends FleetApiPath, M extends FleetApiMethod<P>>(
    method: M,
    path: P,
    parts?: FleetApiRequestParts<P, M>,
  ): Promise<FleetApiAnswer<P, M>> {
    return fleetApiRequest({
      baseUrl: await this.discoveryApi.getBaseUrl('fleet'),
      fetch: (url, init) => this.fetchApi.fetch(url, init),
      method,
      path,
      parts,
      onError: response => ResponseError.fromResponse(response),
    });
  }

  async listClusters(options?: {
    status?: ClusterStatus;
    names?: string[];
  }): Promise<Cluster[]> {
    const status = options?.status;
    if (!options?.names) {
      return listAllPages(page =>
        this.call('get', '/clusters', {
          query: { status, ...page },
        }),
      );
    }
    // By name: at most FLEET_CLUSTER_NAMES_MAX names a request, each request one page.
    const names = [...new Set(options.names)];
    const chunks: string[][] = [];
    for (let i = 0; i < names.length; i += FLEET_CLUSTER_NAMES_MAX) {
      chunks.push(names.slice(i, i + FLEET_CLUSTER_NAMES_MAX));
    }
    const answers = await Promise.all(
      chunks.map(name =>
        listAllPages(page =>
          this.call('get', '/clusters', {
            query: { status, name, ...page },
          }),
        ),
      ),
    );
    return answers.flat().sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  getCluster(name: string): Promise<Cluster> {
    return this.call('get', '/clusters/{name}', { path: { name } });
  }

  async listClusterEvents(name: string): Promise<FleetEvent[]> {
    return (
      await this.call('get', '/clusters/{name}/events', { path: { name } })
    ).items;
  }

  async listRecentEvents(options?: { limit?: number }): Promise<FleetEvent[]> {
    const limit =
      options?.limit === undefined ? undefined : String(options.limit);
    return (await this.call('get', '/events', { query: { limit } })).items;
  }

  getSummary(): Promise<FleetSummary> {
    return this.call('get', '/summary');
  }

  async listDeploymentCounts(): Promise<ClusterDeploymentCounts[]> {
    return (await this.call('get', '/deployment-counts')).items;
  }

  runHealthCycle(): Promise<HealthCycleSummary> {
    return this.call('post', '/health/run');
  }

  listApplications(options?: { entityRef?: string }): Promise<Application[]> {
    return listAllPages(page =>
      this.call('get', '/applications', {
        query: { entityRef: options?.entityRef, ...page },
      }),
    );
  }

  getApplicationStatus(applicationId: string): Promise<ApplicationFleetStatus> {
    return this.call('get', '/applications/{id}/status', {
      path: { id: applicationId },
    });
  }

  createRelease(
    applicationId: string,
    request: CreateReleaseRequest,
  ): Promise<Release> {
    return this.call('post', '/applications/{id}/releases', {
      path: { id: applicationId },
      body: request,
    });
  }

  previewApplication(
    applicationId: string,
    request: PreviewRequest,
  ): Promise<Preview> {
    return this.call('post', '/applications/{id}/preview', {
      path: { id: applicationId },
      body: request,
    });
  }

  getRelease(id: string): Promise<Release> {
    return this.call('get', '/releases/{id}', { path: { id } });
  }

  async listReleases(applicationId: string): Promise<Release[]> {
    return (
      await this.call('get', '/applications/{id}/releases', {
        path: { id: applicationId },
      })
    ).items;
  }

  promoteRelease(id: string): Promise<Release> {
    return this.call('post', '/releases/{id}/promote', { path: { id } });
  }

  pauseRelease(id: string): Promise<Release> {
    return this.call('post', '/releases/{id}/pause', { path: { id } });
  }

  resumeRelease(id: string): Promise<Release> {
    return this.call('post', '/releases/{id}/resume', { path: { id } });
  }

  abortRelease(id: string): Promise<Release> {
    return this.call('post', '/releases/{id}/abort', { path: { id } });
  }

  approveRelease(
    id: string,
    decision: { comment?: string; overrideFreeze?: boolean } = {},
  ): Promise<Release> {
    return this.call('post', '/releases/{id}/approve', {
      path: { id },
      body: decision,
    });
  }

  rejectRelease(
    id: string,
    decision: { comment?: string } = {},
  ): Promise<Release> {
    return this.call('post', '/releases/{id}/reject', {
      path: { id },
      body: decision,
    });
  }

  async listWaitingReleases(options?: {
    status?: 'WAITING_FOR_APPROVAL' | 'WAITING_FOR_WINDOW';
  }): Promise<Release[]> {
    const { items } = await this.call('get', '/releases', {
      query: { status: options?.status },
    });
    return items;
  }

  async listReleasesUnderWay(): Promise<Release[]> {
    const { items } = await this.call('get', '/releases', {
      query: { status: 'PROGRESSING,PAUSED,ABORTING' },
    });
    return items;
  }

  async listFreezeWindows(): Promise<FreezeWindow[]> {
    const { items } = await this.call('get', '/freeze-windows');
    return items;
  }

  async listAnalysisProviders(): Promise<AnalysisProvider[]> {
    const { items } = await this.call('get', '/analysis-providers');
    return items;
  }

  async listStages(applicationId: string): Promise<StageStatus[]> {
    const { items } = await this.call('get', '/applications/{id}/stages', {
      path: { id: applicationId },
    });
    return items;
  }

  listDeployments(options?: {
    entityRef?: string;
    cluster?: string;
  }): Promise<Deployment[]> {
    return listAllPages(page =>
      this.call('get', '/deployments', {
        query: {
          entityRef: options?.entityRef,
          cluster: options?.cluster,
          ...page,
        },
      }),
    );
  }

  createDeployment(request: CreateDeploymentRequest): Promise<Deployment> {
    return this.call('post', '/deployments', { body: request });
  }

  async listDeploymentEvents(id: string): Promise<FleetEvent[]> {
    return (
      await this.call('get', '/deployments/{id}/events', { path: { id } })
    ).items;
  }

  async listRevisions(deploymentId: string): Promise<Revision[]> {
    return (
      await this.call('get', '/deployments/{id}/revisions', {
        path: { id: deploymentId },
      })
    ).items;
  }

  rollback(deploymentId: string, toRevision?: number): Promise<Deployment> {
    return this.call('post', '/deployments/{id}/rollback', {
      path: { id: deploymentId },
      body: { toRevision },
    });
  }

  undeploy(
    deploymentId: string,
    options?: { force?: boolean },
  ): Promise<Deployment> {
    return this.call('delete', '/deployments/{id}', {
      path: { id: deploymentId },
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
