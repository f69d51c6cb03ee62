import {
  coreServices,
  createServiceFactory,
} from '@backstage/backend-plugin-api';
import {
  mockCredentials,
  mockServices,
  startTestBackend,
} from '@backstage/backend-test-utils';
import catalogPlugin from '@backstage/plugin-catalog-backend';
import { createTestDatabases, useSimulator } from '@cnp/fleet-harness';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { stringify } from 'yaml';
import permissionPlugin from '@backstage/plugin-permission-backend';
import fleetPlugin from '@cnp/plugin-fleet-backend';
import { permissionModuleFleetPolicy } from './FleetPermissionPolicy';
import { httpAuthWithActors } from './__testUtils__/testServices';

jest.setTimeout(120_000);

/*
 * The cluster-scoped decision through the real permission chain: the permission backend, this
 * app's policy (fleet.cluster.deploy conditional on the cluster's cnp.io/allowed-groups label),
 * and the Fleet plugin evaluating that condition on its own clusters.
 */

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east', 'west'], readyDelayMs: 50 });

/** Who is in which group (what the catalog would say through userInfo). */
const GROUPS: Record<string, string[]> = {
  'user:default/alice': ['group:default/team-a', 'group:default/deployers'],
  'user:default/bob': ['group:default/team-b', 'group:default/deployers'],
  'user:default/root': ['group:default/platform'],
};

const userInfo = createServiceFactory({
  service: coreServices.userInfo,
  deps: {},
  factory: () => ({
    async getUserInfo(credentials: any) {
      const ref = credentials.principal.userEntityRef as string;
      return {
        userEntityRef: ref,
        ownershipEntityRefs: [ref, ...(GROUPS[ref] ?? [])],
      };
    },
  }),
});

describe.each(databases.eachSupportedId())(
  'fleet.cluster.deploy through the permission backend and the app policy (%s)',
  databaseId => {
    it("lets only the groups a cluster's cnp.io/allowed-groups label names deploy, roll back or release there; others get a 403 naming the cluster and nothing is written", async () => {
      const knex = await databases.init(databaseId);
      const entityRef = `component:default/pay-${databaseId.toLowerCase()}`;
      // The component is in the catalog, and its entry lets the deployers group deploy it.
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-cluster-perm-'));
      const file = path.join(dir, 'entities.yaml');
      fs.writeFileSync(
        file,
        stringify({
          apiVersion: 'backstage.io/v1alpha1',
          kind: 'Component',
          metadata: {
            name: entityRef.split('/')[1],
            annotations: {
              'cnp.io/image': 'pay:1.0.0',
              'cnp.io/deployers': 'group:default/deployers',
            },
          },
          spec: { type: 'service', lifecycle: 'production', owner: 'nobody' },
        }),
      );
      const { server } = await startTestBackend({
        features: [
          fleetPlugin,
          permissionPlugin,
          permissionModuleFleetPolicy,
          userInfo,
          httpAuthWithActors,
          catalogPlugin,
          // One database per plugin, as a real backend has.
          createServiceFactory({
            service: coreServices.database,
            deps: { plugin: coreServices.pluginMetadata },
            async factory({ plugin }) {
              const client =
                plugin.getId() === 'fleet'
                  ? knex
                  : await databases.init(databaseId);
              return { getClient: async () => client };
            },
          }),
          mockServices.rootConfig.factory({
            data: {
              permission: { enabled: true },
              catalog: {
                rules: [{ allow: ['Component'] }],
                locations: [{ type: 'file', target: file }],
                processingInterval: { seconds: 1 },
              },
              fleet: {
                discovery: { kubeconfigDir: sim.kubeconfigDir },
                deploy: { pollInterval: { milliseconds: 50 } },
                permissions: {
                  deployers: ['group:default/deployers'],
                  clusterAdmins: ['group:default/platform'],
                },
              },
            },
          }),
        ],
      });
      const as = (user: string) => mockCredentials.user.header(user);
      for (let i = 0; i < 240; i++) {
        const res = await request(server)
          .get(`/api/catalog/entities/by-name/${entityRef.replace(':', '/')}`)
          .set('Authorization', mockCredentials.service.header());
        if (res.status === 200) break;
        await new Promise(r => setTimeout(r, 250));
      }

      await request(server)
        .post('/api/fleet/health/run')
        .set('Authorization', as('user:default/root'))
        .expect(200);
      // The admin keeps east to team-a; west has no such label: open to every deployer.
      await request(server)
        .patch('/api/fleet/clusters/east')
        .set('Authorization', as('user:default/root'))
        .send({ labels: { 'cnp.io/allowed-groups': 'team-a' } })
        .expect(200);

      const deployments = async () =>
        (await knex('fleet_deployments').select('cluster', 'revision')).map(
          d => `${d.cluster}@${d.revision}`,
        );

      const eastDeployments = () =>
        sim.objects('east').filter(o => o.kind === 'Deployment').length;
      const eastBefore = eastDeployments();
      // bob (team-b) may not put anything on east.
      const refused = await request(server)
        .post('/api/fleet/deployments')
        .set('Authorization', as('user:default/bob'))
        .send({ entityRef, cluster: 'east', image: 'pay:1.0.0' })
        .expect(403);
      expect(refused.body.error.message).toBe(
        "Not allowed: fleet.cluster.deploy on cluster 'east'",
      );
      expect(await deployments()).toEqual([]);
      expect(eastDeployments()).toBe(eastBefore);
      // An unknown cluster is the service's 404, not a refusal telling which names exist.
      await request(server)
        .post('/api/fleet/deployments')
        .set('Authorization', as('user:default/bob'))
        .send({ entityRef, cluster: 'typo', image: 'pay:1.0.0' })
        .expect(404);
      // ...but may on west, and alice (team-a) may on east.
      await request(server)
        .post('/api/fleet/deployments')
        .set('Authorization', as('user:default/bob'))
        .send({ entityRef, cluster: 'west', image: 'pay:1.0.0' })
        .expect(201);
      const onEast = await request(server)
        .post('/api/fleet/deployments')
        .set('Authorization', as('user:default/alice'))
        .send({ entityRef, cluster: 'east', image: 'pay:1.0.0' })
        .expect(201);
      await request(server)
        .post('/api/fleet/deployments')
        .set('Authorization', as('user:default/alice'))
        .send({ entityRef, cluster: 'east', image: 'pay:1.1.0' })
        .expect(201);

      // A rollback on east and a release reaching east are refused to bob too.
      const rollback = await request(server)
        .post(`/api/fleet/deployments/${onEast.body.id}/rollback`)
        .set('Authorization', as('user:default/bob'))
        .send({ toRevision: 1 })
        .expect(403);
      expect(rollback.body.error.message).toContain("on cluster 'east'");
      const application = (
        await request(server)
          .get(`/api/fleet/applications?entityRef=${entityRef}`)
          .set('Authorization', as('user:default/bob'))
          .expect(200)
      ).body.items[0];
      const release = await request(server)
        .post(`/api/fleet/applications/${application.id}/releases`)
        .set('Authorization', as('user:default/bob'))
        .send({ image: 'pay:2.0.0' })
        .expect(403);
      expect(release.body.error.message).toBe(
        "Not allowed: fleet.cluster.deploy on cluster 'east'",
      );
      // A placement that names east is refused to bob as well.
      await request(server)
        .patch(`/api/fleet/applications/${application.id}`)
        .set('Authorization', as('user:default/bob'))
        .send({ placement: { clusters: ['east'] } })
        .expect(403);
      expect((await deployments()).sort()).toEqual(['east@2', 'west@1']);
      expect(
        Number((await knex('fleet_releases').count({ n: '*' }).first())?.n),
      ).toBe(0);

      // The same release by alice reaches both clusters.
      await request(server)
        .post(`/api/fleet/applications/${application.id}/releases`)
        .set('Authorization', as('user:default/alice'))
        .send({ image: 'pay:2.0.0' })
        .expect(201);
    });
  },
);
