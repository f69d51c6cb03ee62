import { createTestDatabases } from '../testing/databases';
import { DatabaseFleetStores } from './DatabaseFleetStores';
import { migrateUntilBefore, migrationsDir } from './migrationSteps';

jest.setTimeout(60_000);

const databases = createTestDatabases();

const gate = {
  approvals: { groups: ['group:default/release-managers'], count: 1 },
  decisions: [],
  window: null,
  openedAt: null,
  openedBy: null,
};

describe.each(databases.eachSupportedId())('Release gates (%s)', databaseId => {
  it('20261206030000_release_gates.js stores a release waiting at its gate, with its events, and goes back down rejecting it', async () => {
    const knex = await databases.init(databaseId);
    const name = '20261206030000_release_gates.js';
    await migrateUntilBefore(knex, name);
    await knex.migrate.up({ directory: migrationsDir, name });
    const stores = DatabaseFleetStores.fromKnex(knex);
    const app = await stores.applications.insertApplication({
      entityRef: 'component:default/payments',
      name: 'payments',
      spec: { image: 'payments:1' },
    });
    const inserted = await stores.releases.insertRelease({
      id: '6f1c2b9e-0d4a-4e8b-9a53-2f7c1d0e4b31',
      applicationId: app.id,
      createdBy: 'user:default/jane',
      request: { image: 'payments:2', clusters: ['prd-a'] },
      stage: 'prod',
      phase: 'WAITING_FOR_APPROVAL',
      gate,
      targets: [],
      skipped: [],
    });
    expect(inserted).toMatchObject({ stage: 'prod', gate });
    // The gate's phases are longer than the 16 characters an event's statuses had.
    expect(
      await stores.releases.updateRelease(inserted.id, inserted.version, {}, [
        {
          subjectKind: 'release',
          subject: inserted.id,
          actor: 'user:default/jane',
          from: 'WAITING_FOR_APPROVAL',
          to: 'WAITING_FOR_APPROVAL',
          reason: 'WAITING_FOR_APPROVAL',
          message: 'waits',
        },
      ]),
    ).toBe(true);
    expect((await stores.releases.listOpenReleases()).map(r => r.id)).toEqual([
      inserted.id,
    ]);

    await knex.migrate.down({ directory: migrationsDir, name });
    expect(await knex.schema.hasColumn('fleet_releases', 'gate')).toBe(false);
    expect(await knex.schema.hasColumn('fleet_releases', 'stage')).toBe(false);
    // Nothing would start it any more: it is rejected, and its events stay, renamed.
    const row = await knex('fleet_releases').where({ id: inserted.id }).first();
    expect(row.phase).toBe('REJECTED');
    const events = await knex('fleet_events').where({ subject: inserted.id });
    expect(events.map(e => [e.from_status, e.to_status])).toEqual([
      ['WAITING', 'WAITING'],
    ]);
    // Up again: the statuses are long enough once more.
    await knex.migrate.up({ directory: migrationsDir, name });
    expect(
      (
        await DatabaseFleetStores.fromKnex(knex).releases.getRelease(
          inserted.id,
        )
      )?.gate,
    ).toBeUndefined();
  });
});
