import { createTestDatabases } from '../testing/databases';
import { DatabaseApplicationStore } from './DatabaseApplicationStore';
import { migrateUntilBefore, migrationsDir } from './migrationSteps';

jest.setTimeout(60_000);

const databases = createTestDatabases();

describe.each(databases.eachSupportedId())('Ingress hosts (%s)', databaseId => {
  it('20261206010000_ingress_hosts.js gives each host to the first application that named it, and goes back down keeping the applications', async () => {
    const knex = await databases.init(databaseId);
    const name = '20261206010000_ingress_hosts.js';
    await migrateUntilBefore(knex, name);
    const row = (id: string, minute: number, host?: string) => ({
      id,
      entity_ref: `component:default/${id}`,
      name: id,
      spec: JSON.stringify({
        image: 'web:1',
        ...(host ? { ingress: { host } } : {}),
      }),
      placement: '{}',
      created_at: new Date(Date.UTC(2026, 11, 1, 10, minute)),
      updated_at: new Date(Date.UTC(2026, 11, 1, 10, minute)),
    });
    await knex('fleet_applications').insert([
      row('second', 2, 'shop.example.com'),
      row('first', 1, 'shop.example.com'),
      row('other', 3, 'books.example.com'),
      row('plain', 4),
    ]);

    await knex.migrate.up({ directory: migrationsDir, name });
    expect(
      await knex('fleet_ingress_hosts')
        .orderBy('host')
        .select('host', 'application_id'),
    ).toEqual([
      { host: 'books.example.com', application_id: 'other' },
      { host: 'shop.example.com', application_id: 'first' },
    ]);

    await knex.migrate.down({ directory: migrationsDir, name });
    expect(await knex.schema.hasTable('fleet_ingress_hosts')).toBe(false);
    expect((await knex('fleet_applications').select('id')).length).toBe(4);
  });

  it('gives a host to one of two applications registering it at once (409 naming the holder), and frees it when the holder lets it go', async () => {
    const knex = await databases.init(databaseId);
    await knex.migrate.latest({ directory: migrationsDir });
    const store = DatabaseApplicationStore.create(knex);
    const register = (name: string) =>
      store.insertApplication({
        entityRef: `component:default/${name}`,
        name,
        spec: { image: 'web:1', ingress: { host: 'shop.example.com' } },
      });
    const results = await Promise.allSettled([
      register('a'),
      register('b'),
      register('c'),
    ]);
    const won = results.filter(r => r.status === 'fulfilled');
    const lost = results.filter(
      (r): r is PromiseRejectedResult => r.status === 'rejected',
    );
    expect(won).toHaveLength(1);
    const holder = (won[0] as PromiseFulfilledResult<any>).value;
    for (const r of lost) {
      expect(r.reason.message).toBe(
        `Ingress host 'shop.example.com' is already used by ${holder.entityRef}: each host belongs to one application`,
      );
    }
    // Only the winner was written.
    expect((await store.listApplications()).map(a => a.entityRef)).toEqual([
      holder.entityRef,
    ]);

    await store.updateApplication(holder.id, { spec: { image: 'web:2' } });
    await expect(register('d')).resolves.toMatchObject({
      spec: { ingress: { host: 'shop.example.com' } },
    });
  });
});
