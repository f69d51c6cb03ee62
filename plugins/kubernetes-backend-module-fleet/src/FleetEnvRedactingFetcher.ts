import type {
  FetchResponseWrapper,
  KubernetesFetcher,
  ObjectFetchParams,
} from '@backstage/plugin-kubernetes-node';

/**
 * Drops the plain values of every `env` list in `value` (containers, init containers, at any
 * depth: a Pod, a ReplicaSet's or a Deployment's template); names and references
 * (`valueFrom`) stay.
 */
function withoutEnvValues(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutEnvValues);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === 'env' && Array.isArray(child)) {
      out.env = child.map(entry => {
        if (entry === null || typeof entry !== 'object') return entry;
        const { value: _hidden, ...rest } = entry as Record<string, unknown>;
        return rest;
      });
    } else {
      out[key] = withoutEnvValues(child);
    }
  }
  return out;
}

/** A fetcher's answer without the plain env values of what it holds. */
function redacted(result: FetchResponseWrapper): FetchResponseWrapper {
  return {
    errors: result.errors,
    responses: result.responses.map(response => ({
      ...response,
      resources: (response.resources as unknown[]).map(withoutEnvValues),
    })) as FetchResponseWrapper['responses'],
  };
}

/**
 * The Kubernetes plugin's fetcher, minus the environment values of what Fleet deployed.
 *
 * Fleet shows an application's environment values only to those allowed to deploy the component
 * (others see the names); the Kubernetes tab is read with `kubernetes.resources.read`, which is
 * not per component, so it would show every pod's values to every reader. Every object
 * therefore reaches the tab without its plain `env` values (names and `valueFrom` references
 * stay): those Fleet generated, the pods and ReplicaSets of a component's own manifests (whose
 * pod templates carry no mark of Fleet's) and anything else the tab lists with Fleet's
 * credentials. Owners read the values Fleet deployed in Fleet's own history.
 */
export class FleetEnvRedactingFetcher implements KubernetesFetcher {
  constructor(private readonly inner: KubernetesFetcher) {}

  async fetchObjectsForService(
    params: ObjectFetchParams,
  ): Promise<FetchResponseWrapper> {
    return redacted(await this.inner.fetchObjectsForService(params));
  }

  /** Pod metrics carry each pod whole: their env values are dropped too. */
  async fetchPodMetricsByNamespaces(
    ...args: Parameters<KubernetesFetcher['fetchPodMetricsByNamespaces']>
  ): Promise<FetchResponseWrapper> {
    return redacted(await this.inner.fetchPodMetricsByNamespaces(...args));
  }
}
