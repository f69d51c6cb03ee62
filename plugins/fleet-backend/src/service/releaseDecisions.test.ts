import {
  coreServices,
  createServiceFactory,
} from '@backstage/backend-plugin-api';
import { mockCredentials } from '@backstage/backend-test-utils';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import {
  AuthorizeResult,
  type EvaluatePermissionRequest,
} from '@backstage/plugin-permission-common';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { startFleetTestBackend } from '../testBackend';
import { createTestDatabases } from '../testing/databases';

/*
 * A release held by a freeze window only names no approver group: who may override the freeze
 * on it, or withdraw it, is who may release the component (fleet.release.manage), not every
 * signed-in user the policy lets approve.
 */

jest.setTimeout(60_000);

const databases = createTestDatabases();
const entityRef = 'component:default/payments';

/** Allows everything but fleet.release.manage to user:default/stranger. */
const permissions = createServiceFactory({
  service: coreServices.permissions,
  deps: {},
  factory: () => ({
    async authorize(requests: EvaluatePermissionRequest[], options: any) {
      const stranger =
        options?.credentials?.principal?.userEntityRef ===
        'user:default/stranger';
      return requests.map(r => ({
        result:
          stranger && r.permission.name === 'fleet.release.manage'
            ? AuthorizeResult.DENY
            : AuthorizeResult.ALLOW,
      }));
    },
    async authorizeConditional(requests: unknown[]) {
      return requests.map(() => ({ result: AuthorizeResult.ALLOW }));
    },
  }),
});

describe.each(databases.eachSupportedId())(
  'decisions on a release no group approves (%s)',
  databaseId => {
    it('leaves the freeze override and the withdrawal to those who may release the component', async () => {
      const kubeconfigDir = await fs.mkdtemp(
        path.join(os.tmpdir(), 'fleet-decisions-'),
      );
      const { backend, server, stores } = await startFleetTestBackend({
        knex: await databases.init(databaseId),
        kubeconfigDir,
        features: [
          permissions as any,
          catalogServiceMock.factory({
            entities: [
              {
                apiVersion: 'backstage.io/v1alpha1',
                kind: 'Component',
                metadata: { name: 'payments', namespace: 'default' },
                spec: { type: 'service', owner: 'team-a' },
              },
            ],
          }),
        ],
      });
      try {
        const app = await request(server)
          .post('/api/fleet/applications')
          .send({ entityRef, spec: { image: 'nginx:1.27' } })
          .expect(201);
        const id = '6f1c2b9e-0d4a-4e8b-9a53-2f7c1d0e4b31';
        await stores.releases.insertRelease({
          id,
          applicationId: app.body.id,
          createdBy: 'user:default/jane',
          request: { image: 'nginx:1.29', clusters: ['east'] },
          phase: 'WAITING_FOR_WINDOW',
          gate: {
            approvals: null,
            decisions: [],
            window: { name: 'friday', clusters: ['east'], closesAt: null },
            openedAt: null,
            openedBy: null,
          },
          targets: [],
          skipped: [],
        });
        const decide = (user: string, action: string, body: object) =>
          request(server)
            .post(`/api/fleet/releases/${id}/${action}`)
            .set('Authorization', mockCredentials.user.header(user))
            .send(body);

        const override = await decide('user:default/stranger', 'approve', {
          overrideFreeze: true,
        }).expect(403);
        expect(override.body.error.message).toBe(
          `Only those who may release ${entityRef} may approve release '${id}': its stage names no approver group`,
        );
        await decide('user:default/stranger', 'reject', {}).expect(403);
        const release = await request(server)
          .get(`/api/fleet/releases/${id}`)
          .expect(200);
        expect(release.body.status).toBe('WAITING_FOR_WINDOW');

        // A teammate who may release it may override the freeze; its author may withdraw it,
        // whatever the component's permissions say of them now.
        const second = '6f1c2b9e-0d4a-4e8b-9a53-2f7c1d0e4b32';
        await stores.releases.insertRelease({
          ...(await stores.releases.getRelease(id))!,
          id: second,
          createdBy: 'user:default/stranger',
        });
        await decide('user:default/bob', 'approve', {
          overrideFreeze: true,
        }).expect(200);
        await request(server)
          .post(`/api/fleet/releases/${second}/reject`)
          .set(
            'Authorization',
            mockCredentials.user.header('user:default/stranger'),
          )
          .send({})
          .expect(200);
      } finally {
        await backend.stop();
        await fs.rm(kubeconfigDir, { recursive: true, force: true });
      }
    });
  },
);
