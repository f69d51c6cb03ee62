import type { LoggerService } from '@backstage/backend-plugin-api';
import type {
  FetchResponse,
  KubernetesErrorTypes,
  KubernetesFetchError,
} from '@backstage/plugin-kubernetes-common';
import type {
  ClusterDetails,
  FetchResponseWrapper,
  KubernetesCredential,
  KubernetesFetcher,
  ObjectFetchParams,
  ObjectToFetch,
} from '@backstage/plugin-kubernetes-node';
import {
  ClusterAgents,
  clusterUrl,
  getFromCluster,
  type ClusterAnswer,
} from './clusterHttp';
import { REQUEST_TIMEOUT_KEY } from './config';

/** What Fleet knows of a cluster's health, for the tab: why not to ask it now. */
export interface ClusterHealthView {
  /** Set when Fleet's latest health probe of the cluster failed. */
  probeFailure(
    name: string,
  ): { consecutiveFailures: number; lastProbeAt: string | null } | undefined;
}

export interface FleetKubernetesFetcherOptions {
  logger: LoggerService;
  health: ClusterHealthView;
  /** How long each cluster has to answer one call of the tab (all its object lists at once). */
  requestTimeoutMs: number;
}

/** The answer to one GET: the JSON body, a status error, or why there was none. */
type Outcome =
  | { kind: 'ok'; json: any }
  | { kind: 'status'; error: KubernetesFetchError }
  | { kind: 'timeout'; path: string }
  | { kind: 'failed'; path: string; message: string };

const TIMED_OUT = 'fleet-request-timeout';

function statusCodeToErrorType(status: number): KubernetesErrorTypes {
  switch (status) {
    case 400:
      return 'BAD_REQUEST';
    case 401:
      return 'UNAUTHORIZED_ERROR';
    case 404:
      return 'NOT_FOUND';
    case 500:
      return 'SYSTEM_ERROR';
    default:
      return 'UNKNOWN_ERROR';
  }
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

function resourcePath(
  { group, apiVersion, plural }: Omit<ObjectToFetch, 'objectType'>,
  namespace?: string,
): string {
  const encode = encodeURIComponent;
  let path = group
    ? `/apis/${encode(group)}/${encode(apiVersion)}`
    : `/api/${encode(apiVersion)}`;
  if (namespace) path += `/namespaces/${encode(namespace)}`;
  return `${path}/${encode(plural)}`;
}

/** Secrets' values never reach the tab (as the Kubernetes plugin's own fetcher does). */
function transformResources(
  resource: ObjectToFetch,
  kind: string | undefined,
  items: any[],
): any[] {
  const itemKind = kind?.replace(/(List)$/, '');
  const stars = (data: unknown) =>
    Object.fromEntries(Object.keys(data as object).map(k => [k, '***']));
  const containsSecrets =
    resource.objectType === 'secrets' ||
    itemKind === 'Secret' ||
    (resource.group === '' &&
      resource.apiVersion === 'v1' &&
      resource.plural === 'secrets');
  const resources = containsSecrets
    ? items.map(item => ({
        ...item,
        ...(item.data && typeof item.data === 'object'
          ? { data: stars(item.data) }
          : {}),
        ...(item.stringData && typeof item.stringData === 'object'
          ? { stringData: stars(item.stringData) }
          : {}),
      }))
    : items;
  if (resource.objectType !== 'customresources') return resources;
  if (itemKind === undefined)
    throw new Error(
      `Missing kind in response when fetching '${resource.plural}'`,
    );
  return resources.map(item => ({ ...item, kind: itemKind }));
}

/** The label by which the Kubernetes plugin finds a component's objects. */
const KUBERNETES_ID_LABEL = 'backstage.io/kubernetes-id';

/**
 * The label selector the tab lists a component's objects with: the one the plugin passes (the
 * component's `backstage.io/kubernetes-label-selector` annotation, else
 * `backstage.io/kubernetes-id=<id>`), always narrowed to the objects labelled with the
 * component's Kubernetes id. The tab reads with Fleet's own credentials, so a selector the
 * component's author writes must not reach objects that are not the component's (every
 * ConfigMap of every namespace, through a selector that matches everything).
 */
export function componentSelector(
  serviceId: string,
  labelSelector: string | undefined,
): string {
  const own = `${KUBERNETES_ID_LABEL}=${serviceId}`;
  const given = labelSelector?.trim();
  if (!given || given === own) return own;
  return `${own},${given}`;
}

/**
 * The label selector the tab lists pods with for their metrics. The plugin passes the
 * component's selector (its annotation) but not its id, so the pods are narrowed to those
 * labelled with some component's Kubernetes id: never the namespace's other pods, whose specs
 * (environment values included) the metrics' answer carries whole.
 */
export function metricsSelector(labelSelector: string | undefined): string {
  const given = labelSelector?.trim();
  return given ? `${KUBERNETES_ID_LABEL},${given}` : KUBERNETES_ID_LABEL;
}

/**
 * The Kubernetes plugin's fetcher for Fleet's clusters: the same lists the plugin's own fetcher
 * reads (with Secrets' values starred), but each cluster has `requestTimeoutMs` to answer a call
 * of the tab; past it, its requests are cancelled (their connections closed) and the cluster
 * shows a FETCH_ERROR naming it and the deadline, while the other clusters render. A cluster
 * whose latest Fleet health probe failed is not asked at all: it shows an error saying so at
 * once (Fleet's probe runs again on its interval; the cluster is asked again once one succeeds).
 * Every list is narrowed to the component's own objects (see `componentSelector`).
 */
export class FleetKubernetesFetcher implements KubernetesFetcher {
  private readonly agents: ClusterAgents;

  constructor(private readonly options: FleetKubernetesFetcherOptions) {
    // A retired agent's requests are all past their deadline a second after it.
    this.agents = new ClusterAgents(options.requestTimeoutMs + 1_000);
  }

  async fetchObjectsForService(
    params: ObjectFetchParams,
  ): Promise<FetchResponseWrapper> {
    const { clusterDetails: details, credential } = params;
    const failing = this.failingError(details);
    if (failing) return { errors: [failing], responses: [] };
    const resources = [...params.objectTypesToFetch, ...params.customResources];
    const paths = resources.map(r => resourcePath(r, params.namespace));
    const selector = componentSelector(params.serviceId, params.labelSelector);
    const outcomes = await this.withDeadline(signal =>
      Promise.all(
        paths.map(path =>
          this.get(details, credential, path, selector, signal),
        ),
      ),
    );
    const responses: FetchResponse[] = [];
    const unusable: Outcome[] = [];
    outcomes.forEach((outcome, i) => {
      if (outcome.kind !== 'ok') return;
      try {
        // A 2xx body that is not a list (null, a proxy's page) is this cluster's error only.
        const { kind, items } = outcome.json ?? {};
        responses.push({
          type: resources[i].objectType,
          resources: transformResources(resources[i], kind, items ?? []),
        } as FetchResponse);
      } catch (error) {
        unusable.push({
          kind: 'failed',
          path: paths[i],
          message: (error as Error).message,
        });
      }
    });
    const errors = this.errorsOf(details, [...outcomes, ...unusable]);
    return { errors, responses };
  }

  async fetchPodMetricsByNamespaces(
    details: ClusterDetails,
    credential: KubernetesCredential,
    namespaces: Set<string>,
    labelSelector?: string,
  ): Promise<FetchResponseWrapper> {
    const failing = this.failingError(details);
    if (failing) return { errors: [failing], responses: [] };
    const perNamespace = await this.withDeadline(signal =>
      Promise.all(
        [...namespaces].map(namespace =>
          Promise.all(
            [
              {
                group: 'metrics.k8s.io',
                apiVersion: 'v1beta1',
                plural: 'pods',
              },
              { group: '', apiVersion: 'v1', plural: 'pods' },
            ].map(resource =>
              this.get(
                details,
                credential,
                resourcePath(resource, namespace),
                metricsSelector(labelSelector),
                signal,
              ),
            ),
          ),
        ),
      ),
    );
    const { topPods } = await import('@kubernetes/client-node');
    const responses: FetchResponse[] = [];
    const unusable: Outcome[] = [];
    const namespaceList = [...namespaces];
    for (const [n, [metrics, pods]] of perNamespace.entries()) {
      if (metrics.kind !== 'ok' || pods.kind !== 'ok') continue;
      try {
        const top = await topPods(
          { listPodForAllNamespaces: async () => pods.json } as any,
          { getPodMetrics: async () => metrics.json } as any,
        );
        responses.push({ type: 'podstatus', resources: top } as FetchResponse);
      } catch (error) {
        // Metrics or pods that are not lists (an adapter's or a proxy's answer): this
        // cluster's error, never the whole view's.
        unusable.push({
          kind: 'failed',
          path: resourcePath(
            { group: 'metrics.k8s.io', apiVersion: 'v1beta1', plural: 'pods' },
            namespaceList[n],
          ),
          message: (error as Error).message,
        });
      }
    }
    return {
      errors: this.errorsOf(details, [...perNamespace.flat(), ...unusable]),
      responses,
    };
  }

  /** The error shown for a cluster Fleet saw failing, instead of asking it. */
  private failingError(
    details: ClusterDetails,
  ): KubernetesFetchError | undefined {
    const failure = this.options.health.probeFailure(details.name);
    if (!failure) return undefined;
    return {
      errorType: 'FETCH_ERROR',
      message: `Cluster '${
        details.name
      }' was not asked: Fleet's latest health probe of it failed (${
        failure.consecutiveFailures
      } in a row${
        failure.lastProbeAt ? `, last at ${failure.lastProbeAt}` : ''
      }); it is asked again once a probe succeeds`,
    };
  }

  /** Runs `work` with a signal that aborts after the request timeout. */
  private async withDeadline<T>(
    work: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new Error(TIMED_OUT)),
      this.options.requestTimeoutMs,
    );
    try {
      return await work(controller.signal);
    } finally {
      clearTimeout(timer);
    }
  }

  private async get(
    details: ClusterDetails,
    credential: KubernetesCredential,
    path: string,
    labelSelector: string | undefined,
    signal: AbortSignal,
  ): Promise<Outcome> {
    let answer: ClusterAnswer;
    try {
      answer = await getFromCluster(clusterUrl(details, path, labelSelector), {
        agent: this.agents.agentFor(details, credential),
        credential,
        signal,
      });
    } catch (error) {
      if (signal.aborted) return { kind: 'timeout', path };
      return {
        kind: 'failed',
        path,
        message: String((error as Error)?.message ?? error),
      };
    }
    if (answer.status < 200 || answer.status >= 300) {
      this.options.logger.warn(
        `Received ${
          answer.status
        } status when fetching "${path}" from cluster "${
          details.name
        }"; body=[${answer.body.slice(0, 1000)}]`,
      );
      return {
        kind: 'status',
        error: {
          errorType: statusCodeToErrorType(answer.status),
          statusCode: answer.status,
          resourcePath: path,
        },
      };
    }
    try {
      return { kind: 'ok', json: JSON.parse(answer.body) };
    } catch (error) {
      return {
        kind: 'failed',
        path,
        message: `not JSON: ${(error as Error).message}`,
      };
    }
  }

  /**
   * The status errors as the plugin's fetcher gives them; requests past the deadline, and those
   * that failed without an answer, as one FETCH_ERROR each that names the cluster.
   */
  private errorsOf(
    details: ClusterDetails,
    outcomes: Outcome[],
  ): KubernetesFetchError[] {
    const errors: KubernetesFetchError[] = [];
    const late: string[] = [];
    const failed: string[] = [];
    for (const outcome of outcomes) {
      if (outcome.kind === 'status') errors.push(outcome.error);
      if (outcome.kind === 'timeout') late.push(outcome.path);
      if (outcome.kind === 'failed')
        failed.push(`${outcome.path}: ${outcome.message}`);
    }
    if (late.length > 0) {
      this.options.logger.warn(
        `Cluster "${details.name}" did not answer ${
          late.length
        } request(s) of the Kubernetes tab within ${seconds(
          this.options.requestTimeoutMs,
        )}; they were cancelled`,
      );
      errors.push({
        errorType: 'FETCH_ERROR',
        message: `Cluster '${details.name}' did not answer within ${seconds(
          this.options.requestTimeoutMs,
        )} (${REQUEST_TIMEOUT_KEY}): ${late.join(', ')}`,
      });
    }
    if (failed.length > 0) {
      errors.push({
        errorType: 'FETCH_ERROR',
        message: `Cluster '${details.name}' could not be read: ${failed.join(
          '; ',
        )}`,
      });
    }
    return errors;
  }
}
