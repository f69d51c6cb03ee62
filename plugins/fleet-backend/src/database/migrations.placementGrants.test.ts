import { createTestDatabases } from '../testing/databases';
import { DatabaseApplicationStore } from './DatabaseApplicationStore';
import {
  migrateAfter,
  migrateUntilBefore,
  migrationsDir,
  undoAfter,
} from './migrationSteps';
import { PreconditionFailedError } from './conflicts';

jest.setTimeout(60_000);

const databases = createTestDatabases();

describe.each(databases.eachSupportedId())(
  'placement grants (%s)',
  databaseId => {
    it('20261201070000_placement_grants.js adds the table the reconcile reads decisions from, and goes back down keeping the applications', async () => {
      const knex = await databases.init(databaseId);
      const name = '20261201070000_placement_grants.js';
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

      await knex.migrate.up({ directory: migrationsDir, name });
      // The store writes today's tables: the later migrations run too, and go back down first.
      await migrateAfter(knex, name);
      const store = DatabaseApplicationStore.create(knex);
      // An application from before has no decision: the reconcile places it nowhere new.
      expect(await store.listPlacementGrants()).toEqual(new Map());
      expect((await store.getApplication('a1'))?.placementRefused).toEqual([]);

      await store.setPlacementRefused('a1', [
        { cluster: 'east', reason: 'Not allowed' },
      ]);
      await store.setPlacementGrant('a1', {
        decision: { result: 'DENY' as any },
        by: 'user:default/bob',
      });
      // A second decision replaces the first and keeps the refusals.
      await store.setPlacementGrant('a1', {
        decision: {
          result: 'CONDITIONAL' as any,
          pluginId: 'fleet',
          resourceType: 'fleet-cluster',
          conditions: {
            rule: 'ALLOWS_GROUP',
            resourceType: 'fleet-cluster',
            params: { claims: ['group:default/team-a'] },
          },
        },
        by: 'user:default/ann',
      });
      expect(await store.listPlacementGrants()).toEqual(
        new Map([
          [
            'a1',
            {
              decision: expect.objectContaining({ result: 'CONDITIONAL' }),
              by: 'user:default/ann',
            },
          ],
        ]),
      );
      expect((await store.getApplication('a1'))?.placementRefused).toEqual([
        { cluster: 'east', reason: 'Not allowed' },
      ]);
      await store.setPlacementRefused('a1', []);
      expect(
        (await store.listApplications()).map(a => a.placementRefused),
      ).toEqual([[]]);

      // The application goes with its decision.
      expect(await store.deleteIfEmpty('a1')).toBe(true);
      expect(await knex('fleet_placement_grants')).toEqual([]);

      await knex('fleet_applications').insert({
        id: 'a2',
        entity_ref: 'component:default/api',
        name: 'api',
        spec: '{"image":"api:1"}',
        placement: '{}',
        created_at: at,
        updated_at: at,
      });
      await store.setPlacementGrant('a2', {
        decision: { result: 'ALLOW' as any },
        by: 'user:default/ann',
      });
      await undoAfter(knex, name);
      await knex.migrate.down({ directory: migrationsDir, name });
      expect(await knex.schema.hasTable('fleet_placement_grants')).toBe(false);
      expect(await knex('fleet_applications').select('id')).toEqual([
        { id: 'a2' },
      ]);
    });

    it('writes an application and its placement grant in one transaction, never one without the other', async () => {
      const knex = await databases.init(databaseId);
      await knex.migrate.latest({ directory: migrationsDir });
      const store = DatabaseApplicationStore.create(knex);
      const ann = {
        decision: { result: 'ALLOW' as any },
        by: 'user:default/ann',
      };
      const bob = {
        decision: { result: 'DENY' as any },
        by: 'user:default/bob',
      };

      const web = await store.insertApplication({
        entityRef: 'component:default/web',
        name: 'web',
        spec: { image: 'web:1' },
        placement: { clusterSelector: { env: 'prod' } },
        placementGrant: ann,
      });
      expect((await store.listPlacementGrants()).get(web.id)).toEqual(ann);

      // A second application for the same entity is refused, and leaves no grant behind.
      await expect(
        store.insertApplication({
          entityRef: 'component:default/web',
          name: 'web',
          spec: { image: 'web:2' },
          placementGrant: bob,
        }),
      ).rejects.toThrow(/already exists/);
      expect([...(await store.listPlacementGrants()).values()]).toEqual([ann]);

      // A placement written over a version it was not read at changes nothing: neither the
      // placement nor who decided it.
      await expect(
        store.updateApplication(
          web.id,
          {
            placement: { clusterSelector: { env: 'dev' } },
            placementGrant: bob,
          },
          web.version + 7,
        ),
      ).rejects.toThrow(PreconditionFailedError);
      expect((await store.listPlacementGrants()).get(web.id)).toEqual(ann);
      expect((await store.getApplication(web.id))?.placement).toEqual({
        clusterSelector: { env: 'prod' },
      });

      // Written over the right version, both change together; a spec change alone keeps the grant.
      await store.updateApplication(
        web.id,
        { placement: { clusterSelector: { env: 'dev' } }, placementGrant: bob },
        web.version,
      );
      expect((await store.listPlacementGrants()).get(web.id)).toEqual(bob);
      await store.updateApplication(web.id, { spec: { image: 'web:3' } });
      expect((await store.listPlacementGrants()).get(web.id)).toEqual(bob);
    });
  },
);
