import {
  coreServices,
  createServiceFactory,
} from '@backstage/backend-plugin-api';
import { mockCredentials, mockServices } from '@backstage/backend-test-utils';

/*
 * Services for the permission tests that run the real permission chain in a test backend.
 */

/**
 * The test backend's mock request authentication, but with the actor a real backend sets on a
 * request made on a user's behalf: the permission backend asks Fleet to apply conditions on
 * behalf of the user, and a plugin's permission integration only answers such a request when it
 * names the acting plugin (the mock leaves it out).
 */
const SERVICE_TOKEN = 'mock-service-token:';
export const httpAuthWithActors = createServiceFactory({
  service: coreServices.httpAuth,
  deps: { plugin: coreServices.pluginMetadata },
  factory({ plugin }) {
    const inner = mockServices.httpAuth({ pluginId: plugin.getId() });
    return {
      async credentials(req: any, options?: any) {
        const token = String(req.headers.authorization ?? '').match(
          /^Bearer[ ]+(\S+)$/i,
        )?.[1];
        if (token?.startsWith(SERVICE_TOKEN)) {
          const { sub, target, obo } = JSON.parse(
            token.slice(SERVICE_TOKEN.length),
          );
          const allowed = !options?.allow || options.allow.includes('user');
          if (obo && allowed && (!target || target === plugin.getId())) {
            return mockCredentials.user(obo, {
              actor: { subject: sub ?? 'plugin:permission' },
            } as any);
          }
        }
        return inner.credentials(req, options);
      },
      issueUserCookie: (res: any, options?: any) =>
        inner.issueUserCookie(res, options),
    } as any;
  },
});
