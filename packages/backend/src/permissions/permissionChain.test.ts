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
 * The whole permission chain, nothing mocked in it: the permission backend, this app's policy,
 * the catalog (with the entities and the org in it) evaluating "the caller owns the component",
 * and Fleet evaluating "the cluster allows the caller's group". Fleet's other tests use an
 * allow-all, deny-all or recording permission service; this one shows the decisions the app
 * really makes for deploy, undeploy, rollback and release.
 */

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east', 'west'], readyDelayMs: 50 });

const entities = [
  {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Group',
    metadata: { name: 'team-a' },
    spec: { type: 'team', children: [], members: ['alice'] },
  },
  {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Group',
    metadata: { name: 'team-b' },
    spec: { type: 'team', children: [], members: ['bob'] },
  },
  {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Group',
    metadata: { name: 'deployers' },
    spec: { type: 'team', children: [], members: ['dora'] },
  },
  ...['alice', 'bob', 'dora'].map(name => ({
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'User',
    metadata: { name },
    spec: { memberOf: [] },
  })),
  {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Component',
    metadata: {
      name: 'ledger',
      annotations: {
        'cnp.io/image': 'ledger:1.0.0',
        // The catalog lets the deployers group deploy it.
        'cnp.io/deployers': 'group:default/deployers',
      },
    },
    spec: { type: 'service', lifecycle: 'production', owner: 'group:team-a' },
  },
  {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Component',
    metadata: { name: 'vault', annotations: { 'cnp.io/image': 'vault:1' } },
    spec: { type: 'service', lifecycle: 'production', owner: 'group:team-a' },
  },
];

describe.each(databases.eachSupportedId())(
  'the permission chain: permission backend, app policy, catalog, Fleet (%s)',
  databaseId => {
    it('lets the owner deploy, undeploy, roll back and release, refuses a non-owner (403, nothing written), lets a deployer deploy, and holds a cluster-scoped refusal', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-chain-'));
      const file = path.join(dir, 'entities.yaml');
      fs.writeFileSync(file, entities.map(e => stringify(e)).join('---\n'));
      const { server, knex } = await startChainBackend({
        databases,
        databaseId,
        entitiesFile: file,
        allowKinds: ['Component', 'Group', 'User'],
        fleet: {
          discovery: { kubeconfigDir: sim.kubeconfigDir },
          deploy: { pollInterval: { milliseconds: 50 } },
          permissions: {
            deployers: ['group:default/deployers'],
            clusterAdmins: ['group:default/team-a'],
          },
        },
      });
      const as = (user: string) => mockCredentials.user.header(user);
      const alice = as('user:default/alice');
      const bob = as('user:default/bob');
      const dora = as('user:default/dora');
      const entityRef = 'component:default/ledger';

      // The catalog has read the entities and stitched who owns what and who is in which group.
      const stitched = async (ref: string, relation: string) => {
        const [kind, rest] = ref.split(':');
        const res = await request(server)
          .get(`/api/catalog/entities/by-name/${kind}/${rest}`)
          .set('Authorization', mockCredentials.service.header());
        return (
          res.status === 200 &&
          (res.body.relations ?? []).some((r: any) => r.type === relation)
        );
      };
      for (let i = 0; i < 240; i++) {
        const ready = await Promise.all([
          stitched('component:default/ledger', 'ownedBy'),
          stitched('user:default/alice', 'memberOf'),
          stitched('user:default/bob', 'memberOf'),
          stitched('user:default/dora', 'memberOf'),
        ]);
        if (ready.every(Boolean)) break;
        await new Promise(r => setTimeout(r, 250));
      }
      await request(server)
        .post('/api/fleet/health/run')
        .set('Authorization', alice)
        .expect(200);

      // What a refused request could have written (a rollout finishing changes only a status).
      const rows = async () =>
        JSON.stringify({
          deployments: await knex('fleet_deployments')
            .orderBy('cluster')
            .select('cluster', 'revision'),
          applications: await knex('fleet_applications').count({ n: '*' }),
          releases: await knex('fleet_releases').count({ n: '*' }),
        });

      // A non-owner outside the deployers is refused everything, and nothing is written.
      const before = await rows();
      const refused = await request(server)
        .post('/api/fleet/deployments')
        .set('Authorization', bob)
        .send({ entityRef, cluster: 'east' })
        .expect(403);
      expect(refused.body.error.message).toBe(
        'Not allowed: fleet.deployment.create',
      );
      expect(await rows()).toBe(before);

      // The owner deploys.
      const deployed = await request(server)
        .post('/api/fleet/deployments')
        .set('Authorization', alice)
        .send({ entityRef, cluster: 'east' })
        .expect(201);
      await request(server)
        .post('/api/fleet/deployments')
        .set('Authorization', alice)
        .send({ entityRef, cluster: 'east', image: 'ledger:1.1.0' })
        .expect(201);
      // A deployer who does not own it may deploy it too, since its catalog entry says so...
      await request(server)
        .post('/api/fleet/deployments')
        .set('Authorization', dora)
        .send({ entityRef, cluster: 'west' })
        .expect(201);
      // ...but not a component whose entry does not, nor one the catalog does not hold (no
      // registering someone else's application ahead of them, with one's own image).
      const beforeDeployer = await rows();
      for (const ref of [
        'component:default/vault',
        'component:default/ghost',
      ]) {
        await request(server)
          .post('/api/fleet/applications')
          .set('Authorization', dora)
          .send({ entityRef: ref, spec: { image: 'evil:1' } })
          .expect(403);
        await request(server)
          .post('/api/fleet/deployments')
          .set('Authorization', dora)
          .send({ entityRef: ref, cluster: 'west', image: 'evil:1' })
          .expect(403);
      }
      expect(await rows()).toBe(beforeDeployer);

      const afterDeploys = await rows();
      const application = (
        await request(server)
          .get(`/api/fleet/applications?entityRef=${entityRef}`)
          .set('Authorization', bob)
          .expect(200)
      ).body.items[0];
      // The non-owner may not roll back, release or undeploy.
      await request(server)
        .post(`/api/fleet/deployments/${deployed.body.id}/rollback`)
        .set('Authorization', bob)
        .send({ toRevision: 1 })
        .expect(403);
      await request(server)
        .post(`/api/fleet/applications/${application.id}/releases`)
        .set('Authorization', bob)
        .send({ image: 'ledger:2.0.0' })
        .expect(403);
      await request(server)
        .delete(`/api/fleet/deployments/${deployed.body.id}`)
        .set('Authorization', bob)
        .expect(403);
      expect(await rows()).toBe(afterDeploys);

      // A cluster kept to another team refuses even the owner and the deployer.
      await request(server)
        .patch('/api/fleet/clusters/west')
        .set('Authorization', alice)
        .send({ labels: { 'cnp.io/allowed-groups': 'team-b' } })
        .expect(200);
      const scoped = await request(server)
        .post(`/api/fleet/applications/${application.id}/releases`)
        .set('Authorization', dora)
        .send({ image: 'ledger:2.0.0' })
        .expect(403);
      expect(scoped.body.error.message).toBe(
        "Not allowed: fleet.cluster.deploy on cluster 'west'",
      );
      expect(await rows()).toBe(afterDeploys);

      // The owner rolls back, releases where allowed, and undeploys.
      await request(server)
        .post(`/api/fleet/deployments/${deployed.body.id}/rollback`)
        .set('Authorization', alice)
        .send({ toRevision: 1 })
        .expect(201);
      await request(server)
        .post(`/api/fleet/applications/${application.id}/releases`)
        .set('Authorization', alice)
        .send({ image: 'ledger:2.0.0', clusters: ['east'] })
        .expect(201);
      await request(server)
        .delete(`/api/fleet/deployments/${deployed.body.id}`)
        .set('Authorization', alice)
        .expect(202);
      fs.rmSync(dir, { recursive: true, force: true });
    });
  },
);
