import type {
  FleetClusterConnection,
  FleetTrafficCluster,
  FleetTrafficProvider,
} from '@cnp/plugin-fleet-node';
import type { ReleaseStrategy } from '@cnp/plugin-fleet-common';
import type {
  ClusterAccess,
  ClusterClients,
} from '../../kubernetes/ClusterClients';
import { createGatewayApiTrafficProvider } from './gatewayProvider';
import { createIstioTrafficProvider } from './istioProvider';
import { createReplicasTrafficProvider } from './replicasProvider';
import { createRolloutTrafficProvider } from './rolloutProvider';

const PROVIDER_ID = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Fleet's own traffic providers, in the order they are asked: Gateway API weights where asked
 * and served (before Argo Rollouts, which steers an HTTPRoute only through a plugin Fleet does
 * not configure: a Rollout would size the canary by replicas and leave the route as it is), an
 * Argo Rollout where the cluster serves them, Istio weights where asked and served, else
 * replicas (which steers anywhere).
 */
export function builtInTrafficProviders(
  options: { requestTimeoutMs?: number } = {},
): FleetTrafficProvider[] {
  const requestTimeoutMs = options.requestTimeoutMs ?? 15_000;
  return [
    createGatewayApiTrafficProvider({ requestTimeoutMs }),
    createRolloutTrafficProvider({ requestTimeoutMs }),
    createIstioTrafficProvider({ requestTimeoutMs }),
    createReplicasTrafficProvider({ requestTimeoutMs }),
  ];
}

/**
 * The traffic providers a release's canaries are steered by: those added through the extension
 * point, then Fleet's own. The last one steers where no other does, and takes over a cluster
 * whose stored mode names no provider (one a removed module had added).
 */
export class TrafficProviders {
  private constructor(
    private readonly providers: FleetTrafficProvider[],
    private readonly connect: (
      cluster: ClusterAccess,
    ) => Promise<FleetClusterConnection>,
  ) {}

  static create(options: {
    /** The clients the providers connect to each cluster with. */
    clients: Pick<ClusterClients, 'kubeConfigFor'>;
    /** In the order they are asked; the last one is the fallback. */
    providers: FleetTrafficProvider[];
  }): TrafficProviders {
    const { clients, providers } = options;
    if (providers.length === 0)
      throw new Error('Fleet needs at least one traffic provider');
    const seen = new Set<string>();
    for (const provider of providers) {
      if (!PROVIDER_ID.test(provider.id)) {
        throw new Error(
          `Traffic provider id '${provider.id}' is not lower case letters, digits and dashes`,
        );
      }
      if (seen.has(provider.id))
        throw new Error(`Traffic provider '${provider.id}' is added twice`);
      seen.add(provider.id);
    }
    return new TrafficProviders([...providers], async cluster => {
      const loaded = await clients.kubeConfigFor(cluster);
      if (loaded.kind === 'unusable') {
        throw new Error(
          `cluster '${cluster.name}' has no usable kubeconfig: ${loaded.reason}`,
        );
      }
      return {
        kubeConfig: loaded.kubeConfig,
        requestOptions: loaded.requestOptions,
      };
    });
  }

  /** The cluster as providers see it. */
  cluster(cluster: ClusterAccess): FleetTrafficCluster {
    return { name: cluster.name, connect: () => this.connect(cluster) };
  }

  /** The first provider that steers this strategy's canary on the cluster. */
  async detect(
    cluster: FleetTrafficCluster,
    strategy: ReleaseStrategy,
  ): Promise<FleetTrafficProvider> {
    const fallback = this.providers[this.providers.length - 1];
    for (const provider of this.providers) {
      if (provider === fallback) break;
      if (await provider.detect({ cluster, strategy })) return provider;
    }
    return fallback;
  }

  /** The provider a cluster's stored mode names; the fallback for none or an unknown one. */
  byId(id: string | null | undefined): FleetTrafficProvider {
    return (
      this.providers.find(p => p.id === id) ??
      this.providers[this.providers.length - 1]
    );
  }
}
