import { createTestDatabases } from '../testing/databases';
import { migrateUntilBefore, migrationsDir } from './migrationSteps';

jest.setTimeout(60_000);

const databases = createTestDatabases();

describe.each(databases.eachSupportedId())(
  'concurrency migrations (%s)',
  databaseId => {
    it('20261201063000_application_version_lease_token.js gives every application version 1 and every lease token 0, and goes back down keeping both rows', async () => {
      const knex = await databases.init(databaseId);
      const name = '20261201063000_application_version_lease_token.js';
      await migrateUntilBefore(knex, name);
      const at = new Date('2026-12-01T10:00:00.000Z');
      await knex('fleet_applications').insert({
        id: 'a1',
        entity_ref: 'component:default/web',
        name: 'web',
        spec: '{"image":"web:1"}',
        placement: '{}',
        created_at: at,
        updated_at: at,
      });
      await knex('fleet_locks').insert({
        name: 'health-cycle',
        holder: 'host-1',
        expires_at: at,
      });

      await knex.migrate.up({ directory: migrationsDir, name });
      expect(
        await knex('fleet_applications').where({ id: 'a1' }).first(),
      ).toMatchObject({ spec: '{"image":"web:1"}', version: 1 });
      const lock = await knex('fleet_locks')
        .where({ name: 'health-cycle' })
        .first();
      expect(lock).toMatchObject({ holder: 'host-1' });
      expect(Number(lock.token)).toBe(0);
      await knex('fleet_locks')
        .where({ name: 'health-cycle' })
        .update({ token: 7 });

      await knex.migrate.down({ directory: migrationsDir });
      const app = await knex('fleet_applications').where({ id: 'a1' }).first();
      expect(app).not.toHaveProperty('version');
      expect(app).toMatchObject({ id: 'a1', spec: '{"image":"web:1"}' });
      const back = await knex('fleet_locks')
        .where({ name: 'health-cycle' })
        .first();
      expect(back).not.toHaveProperty('token');
      expect(back).toMatchObject({ holder: 'host-1' });
    });
  },
);
