import { createTestDatabases } from '../testing/databases';
import {
  indexNames,
  migrateUntilBefore,
  migrationsDir,
} from './migrationSteps';

jest.setTimeout(60_000);

const databases = createTestDatabases();

describe.each(databases.eachSupportedId())(
  'progressive release migrations (%s)',
  databaseId => {
    it('20261201050000_release_progress.js adds progress, version and updated_at, indexes the phase, and goes back down keeping every release', async () => {
      const knex = await databases.init(databaseId);
      const name = '20261201050000_release_progress.js';
      await migrateUntilBefore(knex, name);
      const at = new Date('2026-12-01T10:00:00.000Z');
      await knex('fleet_applications').insert({
        id: 'a1',
        entity_ref: 'component:default/web',
        name: 'web',
        spec: '{}',
        placement: '{}',
        created_at: at,
        updated_at: at,
      });
      const release = {
        id: 'r1',
        application_id: 'a1',
        created_by: 'user:default/ada',
        created_at: at,
        request: '{"image":"web:2"}',
        strategy: null,
        phase: null,
        targets: '[{"cluster":"east","deploymentId":"d1","revision":2}]',
        skipped: '[]',
      };
      await knex('fleet_releases').insert(release);

      await knex.migrate.up({ directory: migrationsDir, name });
      const migrated = await knex('fleet_releases').where({ id: 'r1' }).first();
      expect(migrated).toMatchObject({
        targets: release.targets,
        progress: null,
        version: 0,
        updated_at: null,
      });
      expect(await indexNames(knex, 'fleet_releases')).toContain(
        'fleet_releases_phase_idx',
      );
      await knex('fleet_releases')
        .where({ id: 'r1' })
        .update({ progress: '{"phase":"PROGRESSING"}', version: 3 });

      await knex.migrate.down({ directory: migrationsDir });
      const back = await knex('fleet_releases').where({ id: 'r1' }).first();
      expect(back).not.toHaveProperty('progress');
      expect(back).not.toHaveProperty('version');
      expect(back).toMatchObject({
        id: 'r1',
        targets: release.targets,
        request: release.request,
      });
      expect(await indexNames(knex, 'fleet_releases')).not.toContain(
        'fleet_releases_phase_idx',
      );
    });
  },
);
