import { createTestDatabases } from '../testing/databases';
import { migrateUntilBefore, migrationsDir } from './migrationSteps';

// The migrations of the release model after revisions: placement, releases, ports, exclusions.

jest.setTimeout(60_000);

const databases = createTestDatabases();

describe.each(databases.eachSupportedId())(
  'release model migrations (%s)',
  databaseId => {
    it('20261201010000_deployment_placed.js adds placed (true for every row) and the removals table, and goes back down keeping every row', async () => {
      const knex = await databases.init(databaseId);
      await migrateUntilBefore(knex, '20261201010000_deployment_placed.js');
      const at = new Date('2026-12-01T10:00:00.000Z');
      await knex('fleet_clusters').insert({
        name: 'east',
        endpoint: 'https://east:6443',
        kubeconfig_ref: '/k/east.yaml',
        source: 'manual',
        labels: '{}',
        status: 'ONLINE',
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
        revision: 1,
        created_at: at,
        updated_at: at,
      });

      await knex.migrate.up({
        directory: migrationsDir,
        name: '20261201010000_deployment_placed.js',
      });
      const deployment = await knex('fleet_deployments')
        .where({ id: 'd1' })
        .first();
      expect(!!deployment.placed).toBe(true);
      expect(deployment.status).toBe('DEPLOYED');
      await knex('fleet_application_removals').insert({
        application_id: 'a1',
        requested_at: at,
      });

      await knex.migrate.down({ directory: migrationsDir });
      expect(await knex.schema.hasColumn('fleet_deployments', 'placed')).toBe(
        false,
      );
      expect(await knex.schema.hasTable('fleet_application_removals')).toBe(
        false,
      );
      expect(await knex('fleet_applications').select('id')).toEqual([
        { id: 'a1' },
      ]);
      expect(
        await knex('fleet_deployments').select('id', 'status', 'revision'),
      ).toEqual([{ id: 'd1', status: 'DEPLOYED', revision: 1 }]);
      await knex.destroy();
    });

    it('20261201020000_releases.js adds the releases table and drops it again', async () => {
      const knex = await databases.init(databaseId);
      await migrateUntilBefore(knex, '20261201020000_releases.js');
      expect(await knex.schema.hasTable('fleet_releases')).toBe(false);
      await knex.migrate.up({
        directory: migrationsDir,
        name: '20261201020000_releases.js',
      });
      await knex('fleet_releases').insert({
        id: 'r1',
        application_id: 'a1',
        created_by: 'test',
        created_at: new Date('2026-12-01T10:00:00.000Z'),
        request: JSON.stringify({ image: 'x:2' }),
        targets: JSON.stringify([
          { cluster: 'east', deploymentId: 'd1', revision: 2 },
        ]),
        skipped: '[]',
      });
      expect(
        await knex('fleet_releases').select('id', 'phase', 'strategy'),
      ).toEqual([{ id: 'r1', phase: null, strategy: null }]);
      await knex.migrate.down({ directory: migrationsDir });
      expect(await knex.schema.hasTable('fleet_releases')).toBe(false);
      await knex.destroy();
    });

    it("20261201030000_revision_port.js gives every revision its application's port (8000 by default) and drops it again", async () => {
      const knex = await databases.init(databaseId);
      await migrateUntilBefore(knex, '20261201030000_revision_port.js');
      const at = new Date('2026-12-01T10:00:00.000Z');
      await knex('fleet_applications').insert([
        {
          id: 'a-port',
          entity_ref: 'component:default/with-port',
          name: 'with-port',
          spec: JSON.stringify({ image: 'x:1', port: 9000 }),
          placement: '{}',
          created_at: at,
          updated_at: at,
        },
        {
          id: 'a-none',
          entity_ref: 'component:default/no-port',
          name: 'no-port',
          spec: '{}',
          placement: '{}',
          created_at: at,
          updated_at: at,
        },
      ]);
      await knex('fleet_revisions').insert(
        ['a-port', 'a-none'].map(applicationId => ({
          deployment_id: `d-${applicationId}`,
          application_id: applicationId,
          cluster: 'east',
          revision: 1,
          image: 'x:1',
          cause: 'deploy',
          created_by: 'test',
          created_at: at,
        })),
      );
      await knex.migrate.up({
        directory: migrationsDir,
        name: '20261201030000_revision_port.js',
      });
      expect(
        await knex('fleet_revisions')
          .orderBy('application_id')
          .select('application_id', 'port'),
      ).toEqual([
        { application_id: 'a-none', port: 8000 },
        { application_id: 'a-port', port: 9000 },
      ]);
      await knex.migrate.down({ directory: migrationsDir });
      expect(await knex.schema.hasColumn('fleet_revisions', 'port')).toBe(
        false,
      );
      expect(await knex('fleet_revisions').count({ n: '*' })).toEqual([
        { n: expect.anything() },
      ]);
      expect(
        Number((await knex('fleet_revisions').count({ n: '*' }).first())!.n),
      ).toBe(2);
      await knex.destroy();
    });

    it('20261201040000_placement_exclusions.js adds the exclusions table and drops it again', async () => {
      const knex = await databases.init(databaseId);
      await migrateUntilBefore(knex, '20261201040000_placement_exclusions.js');
      await knex.migrate.up({
        directory: migrationsDir,
        name: '20261201040000_placement_exclusions.js',
      });
      await knex('fleet_placement_exclusions').insert({
        application_id: 'a1',
        cluster: 'east',
        created_by: 'test',
        created_at: new Date('2026-12-01T10:00:00.000Z'),
      });
      await expect(
        knex('fleet_placement_exclusions').insert({
          application_id: 'a1',
          cluster: 'east',
          created_by: 'again',
          created_at: new Date('2026-12-01T10:00:00.000Z'),
        }),
      ).rejects.toMatchObject({
        message: expect.stringMatching(/unique|duplicate/i),
      });
      await knex.migrate.down({ directory: migrationsDir });
      expect(await knex.schema.hasTable('fleet_placement_exclusions')).toBe(
        false,
      );
      await knex.destroy();
    });
  },
);
