import { createTestDatabases } from '../testing/databases';
import { migrateUntilBefore, migrationsDir } from './migrationSteps';

jest.setTimeout(60_000);

const databases = createTestDatabases();

describe.each(databases.eachSupportedId())(
  'cluster health migrations (%s)',
  databaseId => {
    it('20261201061500_cluster_first_failure.js adds first_failure_at (empty on existing clusters) and goes back down keeping every cluster and its deployments', async () => {
      const knex = await databases.init(databaseId);
      const name = '20261201061500_cluster_first_failure.js';
      await migrateUntilBefore(knex, name);
      const at = new Date('2026-12-01T10:00:00.000Z');
      await knex('fleet_clusters').insert({
        name: 'east',
        endpoint: 'https://127.0.0.1:6443',
        kubeconfig_ref: '/etc/kube/east.yaml',
        source: 'discovered',
        labels: '{"env":"prod"}',
        status: 'ONLINE',
        consecutive_failures: 1,
        created_at: at,
        updated_at: at,
      });
      await knex('fleet_applications').insert({
        id: 'a1',
        entity_ref: 'component:default/web',
        name: 'web',
        spec: '{}',
        placement: '{}',
        created_at: at,
        updated_at: at,
      });
      await knex('fleet_deployments').insert({
        id: 'd1',
        application_id: 'a1',
        cluster: 'east',
        status: 'DEPLOYED',
        created_at: at,
        updated_at: at,
      });

      await knex.migrate.up({ directory: migrationsDir, name });
      expect(
        await knex('fleet_clusters').where({ name: 'east' }).first(),
      ).toMatchObject({
        status: 'ONLINE',
        consecutive_failures: 1,
        first_failure_at: null,
      });
      await knex('fleet_clusters')
        .where({ name: 'east' })
        .update({ first_failure_at: at });
      const stored = await knex('fleet_clusters')
        .where({ name: 'east' })
        .first();
      expect(new Date(stored.first_failure_at).toISOString()).toBe(
        at.toISOString(),
      );

      await knex.migrate.down({ directory: migrationsDir });
      const back = await knex('fleet_clusters').where({ name: 'east' }).first();
      expect(back).not.toHaveProperty('first_failure_at');
      expect(back).toMatchObject({
        name: 'east',
        labels: '{"env":"prod"}',
        status: 'ONLINE',
        consecutive_failures: 1,
      });
      expect(
        await knex('fleet_deployments').where({ id: 'd1' }).first(),
      ).toMatchObject({ cluster: 'east', status: 'DEPLOYED' });
    });
  },
);
