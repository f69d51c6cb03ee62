import {
  ScmIntegrationsApi,
  scmIntegrationsApiRef,
  ScmAuth,
} from '@backstage/integration-react';
import {
  AnyApiFactory,
  configApiRef,
  createApiFactory,
  discoveryApiRef,
  errorApiRef,
  fetchApiRef,
  googleAuthApiRef,
  identityApiRef,
  microsoftAuthApiRef,
  storageApiRef,
} from '@backstage/core-plugin-api';
import { kubernetesAuthProvidersApiRef } from '@backstage/plugin-kubernetes-react';
import { UserSettingsStorage } from '@backstage/plugin-user-settings';
import { signalApiRef } from '@backstage/plugin-signals-react';
import { FleetKubernetesAuthProviders } from './kubernetes/FleetKubernetesAuthProviders';

export const apis: AnyApiFactory[] = [
  createApiFactory({
    api: scmIntegrationsApiRef,
    deps: { configApi: configApiRef },
    factory: ({ configApi }) => ScmIntegrationsApi.fromConfig(configApi),
  }),
  createApiFactory({
    api: storageApiRef,
    deps: {
      discoveryApi: discoveryApiRef,
      errorApi: errorApiRef,
      fetchApi: fetchApiRef,
      identityApi: identityApiRef,
      signalApi: signalApiRef,
    },
    factory: deps => UserSettingsStorage.create(deps),
  }),
  ScmAuth.createDefaultApiFactory(),
  // The Kubernetes tab: Fleet's clusters are signed in to by the backend (their kubeconfigs).
  createApiFactory({
    api: kubernetesAuthProvidersApiRef,
    deps: {
      googleAuthApi: googleAuthApiRef,
      microsoftAuthApi: microsoftAuthApiRef,
    },
    factory: deps => FleetKubernetesAuthProviders.create(deps),
  }),
];
