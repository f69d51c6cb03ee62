import type {
  AuthMetadata,
  AuthenticationStrategy,
  ClusterDetails,
  KubernetesCredential,
} from '@backstage/plugin-kubernetes-node';
import type { KubernetesRequestAuth } from '@backstage/plugin-kubernetes-common';
import type { RequestOptions } from 'node:https';
import type { FleetClusterSupplier } from './FleetClusterSupplier';

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return undefined;
}

/**
 * The `fleet` auth strategy: a request to a Fleet cluster carries the credentials of that
 * cluster's own kubeconfig user, as `@kubernetes/client-node` applies them (a token or token
 * file, an exec credential plugin, an auth-provider, or a client certificate), applied for each
 * request, so an exec plugin's refreshed credentials are used (the kubeconfig itself is read
 * again when its file changes). A user that
 * authenticates with a username and password is refused: the Kubernetes plugin sends only
 * bearer tokens and client certificates.
 *
 * @public
 */
export class FleetAuthStrategy implements AuthenticationStrategy {
  constructor(private readonly clusters: FleetClusterSupplier) {}

  async getCredential(
    clusterDetails: ClusterDetails,
    _requestAuth?: KubernetesRequestAuth,
  ): Promise<KubernetesCredential> {
    const kubeConfig = await this.clusters.kubeConfigFor(clusterDetails.name);
    if (!kubeConfig) {
      throw new Error(
        `Cluster '${clusterDetails.name}' is not one of Fleet's usable clusters`,
      );
    }
    const options: RequestOptions = { headers: {} };
    await kubeConfig.applyToHTTPSOptions(options);
    const authorization = text(
      (options.headers as Record<string, unknown>).Authorization,
    );
    if (authorization?.startsWith('Bearer ')) {
      return {
        type: 'bearer token',
        token: authorization.slice('Bearer '.length),
      };
    }
    const cert = text(options.cert);
    const key = text(options.key);
    if (cert && key) return { type: 'x509 client certificate', cert, key };
    if (options.auth) {
      throw new Error(
        `The kubeconfig of cluster '${clusterDetails.name}' authenticates with a username and password, which the Kubernetes plugin cannot send`,
      );
    }
    return { type: 'anonymous' };
  }

  validateCluster(): Error[] {
    return [];
  }

  presentAuthMetadata(_authMetadata: AuthMetadata): AuthMetadata {
    return {};
  }
}
