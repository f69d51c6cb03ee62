import type { KubernetesRequestBody } from '@backstage/plugin-kubernetes-common';
import {
  KubernetesAuthProviders,
  ServerSideKubernetesAuthProvider,
  type KubernetesAuthProvidersApi,
} from '@backstage/plugin-kubernetes-react';

/** The auth provider of Fleet's clusters (`@cnp/plugin-kubernetes-backend-module-fleet`). */
export const FLEET_AUTH_PROVIDER = 'fleet';

/**
 * The Kubernetes plugin's auth providers, plus Fleet's: a Fleet cluster is signed in to by the
 * backend, with that cluster's own kubeconfig credentials, so the browser adds nothing to the
 * request (as for `serviceAccount` clusters). Every other provider is the plugin's own.
 */
export class FleetKubernetesAuthProviders
  implements KubernetesAuthProvidersApi
{
  private readonly serverSide = new ServerSideKubernetesAuthProvider();

  constructor(private readonly others: KubernetesAuthProvidersApi) {}

  static create(
    options: ConstructorParameters<typeof KubernetesAuthProviders>[0],
  ): FleetKubernetesAuthProviders {
    return new FleetKubernetesAuthProviders(
      new KubernetesAuthProviders(options),
    );
  }

  decorateRequestBodyForAuth(
    authProvider: string,
    requestBody: KubernetesRequestBody,
  ): Promise<KubernetesRequestBody> {
    return authProvider === FLEET_AUTH_PROVIDER
      ? this.serverSide.decorateRequestBodyForAuth(requestBody)
      : this.others.decorateRequestBodyForAuth(authProvider, requestBody);
  }

  getCredentials(authProvider: string): Promise<{ token?: string }> {
    return authProvider === FLEET_AUTH_PROVIDER
      ? this.serverSide.getCredentials()
      : this.others.getCredentials(authProvider);
  }
}
