import { mockCredentials } from '@backstage/backend-test-utils';
import { createTestDatabases, useSimulator } from '@cnp/fleet-harness';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { stringify } from 'yaml';
import { startChainBackend } from './__testUtils__/chainBackend';

jest.setTimeout(120_000);

/*
 * A user who signed in before the catalog read the org, through the real permission chain (the
 * permission backend, this app's policy, the catalog, Fleet). Their token's ownership claims are
 * the user alone (the test backend's userInfo says what the token says, as a sign-in resolver
 * froze it); the org arrives in the catalog afterwards; the same token then deploys the component
 * its group owns and runs a health cycle as a cluster admin, without signing in again.
 */

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east'], readyDelayMs: 50 });

const component = {
  apiVersion: 'backstage.io/v1alpha1',
  kind: 'Component',
  metadata: { name: 'payments', annotations: { 'cnp.io/image': 'pay:1.0' } },
  spec: { type: 'service', lifecycle: 'production', owner: 'group:guests' },
};
const org = [
  {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'User',
    metadata: { name: 'guest' },
    spec: { memberOf: ['guests'] },
  },
  {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Group',
    metadata: { name: 'guests' },
    spec: { type: 'team', children: [] },
  },
];

describe.each(databases.eachSupportedId())(
  'signing in before the catalog has the org (%s)',
  databaseId => {
    it('refuses while the catalog does not know the user, then lets the same token deploy once the org is read', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-early-'));
      const file = path.join(dir, 'entities.yaml');
      const write = (entities: object[]) =>
        fs.writeFileSync(file, entities.map(e => stringify(e)).join('---\n'));
      write([component]);
      const { server, knex } = await startChainBackend({
        databases,
        databaseId,
        entitiesFile: file,
        allowKinds: ['Component', 'Group', 'User'],
        fleet: {
          discovery: { kubeconfigDir: sim.kubeconfigDir },
          deploy: { pollInterval: { milliseconds: 50 } },
          permissions: {
            clusterAdmins: ['group:default/guests'],
            groupsCacheTtl: { milliseconds: 500 },
          },
        },
      });
      // One token for the whole test, taken before the org is in the catalog: its claims are
      // the user alone, and they never change.
      const guest = mockCredentials.user.header('user:default/guest');
      const entityRef = 'component:default/payments';
      const read = (ref: string) =>
        request(server)
          .get(`/api/catalog/entities/by-name/${ref}`)
          .set('Authorization', mockCredentials.service.header());
      const waitFor = async (what: string, check: () => Promise<boolean>) => {
        for (let i = 0; i < 240; i++) {
          if (await check()) return;
          await new Promise(r => setTimeout(r, 250));
        }
        throw new Error(`timed out waiting for ${what}`);
      };
      await waitFor('the component', async () =>
        (
          await read('component/default/payments')
        ).body?.relations?.some((r: any) => r.type === 'ownedBy'),
      );

      // The catalog does not know the guest yet: its group owns payments, but nothing says the
      // guest is in it, so the deploy and the health cycle are refused and nothing is written.
      const refused = await request(server)
        .post('/api/fleet/deployments')
        .set('Authorization', guest)
        .send({ entityRef, cluster: 'east' })
        .expect(403);
      expect(refused.body.error.message).toBe(
        'Not allowed: fleet.deployment.create',
      );
      await request(server)
        .post('/api/fleet/health/run')
        .set('Authorization', guest)
        .expect(403);
      expect(await knex('fleet_deployments').select('id')).toEqual([]);

      // The catalog reads the org.
      write([component, ...org]);
      await waitFor('the guest in its group', async () =>
        (
          await read('user/default/guest')
        ).body?.relations?.some(
          (r: any) =>
            r.type === 'memberOf' && r.targetRef === 'group:default/guests',
        ),
      );
      // Past the policy's cache time of the earlier answer.
      await new Promise(r => setTimeout(r, 600));

      // The same token: a cluster admin through its group, and an owner of payments.
      await request(server)
        .post('/api/fleet/health/run')
        .set('Authorization', guest)
        .expect(200);
      const deployed = await request(server)
        .post('/api/fleet/deployments')
        .set('Authorization', guest)
        .send({ entityRef, cluster: 'east' })
        .expect(201);
      expect(deployed.body).toMatchObject({ entityRef, cluster: 'east' });
      fs.rmSync(dir, { recursive: true, force: true });
    });
  },
);
