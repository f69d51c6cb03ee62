import { mockServices } from '@backstage/backend-test-utils';
import { createTestDatabases } from '../testing/databases';
import { DatabaseFleetStores } from './DatabaseFleetStores';
import { migrateUntilBefore, migrationsDir } from './migrationSteps';

jest.setTimeout(60_000);

const databases = createTestDatabases();

const configMap = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'inventory-config', namespace: 'default' },
  data: { 'app.properties': 'stock.reserve=5\n' },
};

describe.each(databases.eachSupportedId())(
  'Revision sources (%s)',
  databaseId => {
    it('20261206020000_revision_sources.js adds where a revision came from and what it rendered, and goes back down keeping the revisions', async () => {
      const knex = await databases.init(databaseId);
      const name = '20261206020000_revision_sources.js';
      await migrateUntilBefore(knex, name);
      await knex.migrate.up({ directory: migrationsDir, name });
      const stores = DatabaseFleetStores.fromKnex(knex);
      await stores.clusters.insertCluster({
        name: 'c1',
        endpoint: 'https://127.0.0.1:6443',
        kubeconfigRef: '/k/c.yaml',
        source: 'manual',
      });
      const app = await stores.applications.insertApplication({
        entityRef: 'component:default/inventory',
        name: 'inventory',
        spec: { image: 'ghcr.io/acme/inventory:2.0.0' },
      });
      const source = {
        url: 'http://git.test/inventory.git/tree/v1/deploy',
        version: 'v1',
        commit: 'a'.repeat(40),
        digest: `sha256:${'b'.repeat(64)}`,
        objectCount: 1,
      };
      const deployment = await stores.deployments.insertDeployment(
        {
          applicationId: app.id,
          cluster: 'c1',
          status: 'PENDING',
          firstRevision: {
            image: 'ghcr.io/acme/inventory:2.0.0',
            cause: 'deploy',
            createdBy: 'user:default/guest',
            source,
            objects: [configMap],
          },
        },
        'user:default/guest',
      );
      expect(
        await stores.revisions.getRevision(deployment.id, 1),
      ).toMatchObject({ source });
      expect(
        await stores.revisions.getRevisionObjects(deployment.id, 1),
      ).toEqual([configMap]);
      // Lists carry the source, never the objects.
      const [listed] = await stores.revisions.listRevisions(deployment.id);
      expect(listed.source).toEqual(source);
      expect(listed).not.toHaveProperty('objects');

      await knex.migrate.down({ directory: migrationsDir, name });
      expect(await knex.schema.hasColumn('fleet_revisions', 'source')).toBe(
        false,
      );
      expect(await knex.schema.hasColumn('fleet_revisions', 'objects')).toBe(
        false,
      );
      expect(
        await knex('fleet_revisions').where({ deployment_id: deployment.id }),
      ).toHaveLength(1);
    });

    it('keeps revisions of the generated workload without a source', async () => {
      const knex = await databases.init(databaseId);
      const stores = await DatabaseFleetStores.create({
        database: mockServices.database({ knex, migrations: { skip: false } }),
      });
      await stores.clusters.insertCluster({
        name: 'c1',
        endpoint: 'https://127.0.0.1:6443',
        kubeconfigRef: '/k/c.yaml',
        source: 'manual',
      });
      const app = await stores.applications.insertApplication({
        entityRef: 'component:default/payments',
        name: 'payments',
        spec: { image: 'payments:1' },
      });
      const deployment = await stores.deployments.insertDeployment(
        {
          applicationId: app.id,
          cluster: 'c1',
          status: 'PENDING',
          firstRevision: {
            image: 'payments:1',
            cause: 'deploy',
            createdBy: 'user:default/guest',
          },
        },
        'user:default/guest',
      );
      expect(
        (await stores.revisions.getRevision(deployment.id, 1))?.source,
      ).toBeNull();
      expect(
        await stores.revisions.getRevisionObjects(deployment.id, 1),
      ).toBeUndefined();
      const [current] = await stores.revisions.listCurrentRevisions({
        applicationId: app.id,
      });
      expect(current.source).toBeNull();
    });
  },
);
