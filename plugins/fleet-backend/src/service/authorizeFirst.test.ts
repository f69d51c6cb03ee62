import { mockServices } from '@backstage/backend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import request from 'supertest';
import { useSimulator } from '@cnp/kube-simulator';
import { startFleetTestBackend } from '../testBackend';
import { createTestDatabases } from '../testing/databases';

/*
 * A caller who may not write is refused before the body is read: a 403, never a 400 that would
 * describe the schema (which fields exist, what they accept) to someone with no right to use it.
 */

jest.setTimeout(60_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east'] });

describe.each(databases.eachSupportedId())(
  'authorization before validation (%s)',
  databaseId => {
    it.each([
      ['/clusters', { name: 'Bad Name', endpoint: 'ftp://x', extra: 1 }],
      [
        '/applications',
        {
          entityRef: 'component:default/payments',
          spec: { replicas: -1, namespace: 'NOT valid' },
        },
      ],
      [
        '/deployments',
        { entityRef: 'component:default/payments', cluster: 'Not A Name' },
      ],
    ])(
      'answers POST %s with an invalid body 403 to a caller the policy refuses, naming no field',
      async (path, body) => {
        const { server } = await startFleetTestBackend({
          knex: await databases.init(databaseId),
          kubeconfigDir: sim.kubeconfigDir,
          features: [
            mockServices.permissions.factory({ result: AuthorizeResult.DENY }),
          ],
        });
        const res = await request(server).post(`/api/fleet${path}`).send(body);
        expect(res.status).toBe(403);
        expect(res.body.error.message).not.toMatch(
          /spec|replicas|namespace|endpoint|cluster:/,
        );
      },
    );
  },
);
