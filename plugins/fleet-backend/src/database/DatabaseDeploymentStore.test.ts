import { mockServices } from '@backstage/backend-test-utils';
import { createTestDatabases } from '@cnp/fleet-harness';
import { DatabaseFleetStores } from './DatabaseFleetStores';

// The deployment store: its reads, prepared statements included.

jest.setTimeout(60_000);

const databases = createTestDatabases();

describe.each(databases.eachSupportedId())(
  'DatabaseDeploymentStore (%s)',
  databaseId => {
    it('locks the row it changes on PostgreSQL (SELECT ... FOR UPDATE), which SQLite neither needs nor has', async () => {
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
        entityRef: 'component:default/locked',
        name: 'locked',
        spec: { image: 'x:1' },
      });
      const deployment = await stores.deployments.insertDeployment(
        { applicationId: app.id, cluster: 'c1', status: 'PENDING' },
        'test',
      );
      const statements: string[] = [];
      knex.on('query', (query: { sql?: string }) =>
        statements.push(query.sql ?? ''),
      );
      await stores.deployments.updateDeploymentStatus(
        deployment.id,
        { status: 'DEPLOYED' },
        'test',
      );
      await stores.deployments.recordSync(
        deployment.id,
        { syncStatus: 'SYNCED' },
        'test',
      );
      const locking = statements.filter(sql => /for update/i.test(sql));
      expect(locking).toHaveLength(databaseId.startsWith('POSTGRES') ? 2 : 0);
    });

    it("reads an entity's deployments with one named prepared statement on PostgreSQL, unless told not to", async () => {
      const knex = await databases.init(databaseId);
      const names: Array<string | undefined> = [];
      knex.on('query', (query: { options?: { name?: string } }) =>
        names.push(query.options?.name),
      );
      for (const preparedStatements of [true, false]) {
        names.length = 0;
        const stores = await DatabaseFleetStores.create({
          database: mockServices.database({
            knex,
            migrations: { skip: false },
          }),
          preparedStatements,
        });
        await stores.clusters.insertCluster({
          name: `c-${preparedStatements}`,
          // One API server is one cluster: each its own.
          endpoint: `https://127.0.0.1:6443/c-${preparedStatements}`,
          kubeconfigRef: '/k/c.yaml',
          source: 'manual',
        });
        const app = await stores.applications.insertApplication({
          entityRef: `component:default/p-${preparedStatements}`,
          name: `p-${preparedStatements}`,
          spec: { image: 'x:1' },
        });
        await stores.deployments.insertDeployment(
          {
            applicationId: app.id,
            cluster: `c-${preparedStatements}`,
            status: 'DEPLOYED',
            image: 'x:1',
          },
          'test',
        );
        names.length = 0;
        // Different entities, one statement text: the values vary, the statement is reused.
        for (const ref of [app.entityRef, 'component:default/none']) {
          await stores.deployments.listDeployments({ entityRef: ref });
        }
        expect(
          (
            await stores.deployments.listDeployments({
              entityRef: app.entityRef,
            })
          ).map(d => d.cluster),
        ).toEqual([`c-${preparedStatements}`]);
        const expected =
          preparedStatements && databaseId === 'POSTGRES_15'
            ? 'fleet_deployments_of_entity'
            : undefined;
        expect(names).toEqual([expected, expected, expected]);
      }
    });
  },
);
