import { FleetKubernetesAuthProviders } from './FleetKubernetesAuthProviders';

describe('FleetKubernetesAuthProviders', () => {
  const google = {
    getAccessToken: jest.fn(async () => 'google-token'),
  } as any;
  const providers = FleetKubernetesAuthProviders.create({
    googleAuthApi: google,
    microsoftAuthApi: {} as any,
  });

  it("leaves a Fleet cluster's requests to the backend: nothing is added", async () => {
    const body = { entity: { metadata: { name: 'shop' } } } as any;
    expect(await providers.decorateRequestBodyForAuth('fleet', body)).toEqual(
      body,
    );
    expect(await providers.getCredentials('fleet')).toEqual({});
  });

  it("keeps the Kubernetes plugin's own providers, and its error for an unknown one", async () => {
    expect(await providers.getCredentials('google')).toEqual({
      token: 'google-token',
    });
    await expect(providers.getCredentials('nope')).rejects.toThrow(
      'authProvider "nope" has no KubernetesAuthProvider defined for it',
    );
  });
});
