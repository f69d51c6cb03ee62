import { createTestDatabases, createTestStores } from '@cnp/fleet-harness';

// The event store: retention.

jest.setTimeout(60_000);

const databases = createTestDatabases();

describe.each(databases.eachSupportedId())(
  'DatabaseEventStore (%s)',
  databaseId => {
    const createStore = () => createTestStores(databases, databaseId);

    it('deletes events older than a cutoff, oldest first, at most limit per call, keeping newer ones', async () => {
      const { knex, stores } = await createStore();
      const cutoff = new Date('2026-09-01T00:00:00.000Z');
      const day = 24 * 3600_000;
      const at = (offsetDays: number) =>
        new Date(cutoff.getTime() + offsetDays * day);
      // five older than the cutoff (-5 .. -1 days), one exactly at it, two after it
      const ages = [-3, -1, -5, 0, -2, 1, -4, 30];
      await knex('fleet_events').insert(
        ages.map(offset => ({
          subject_kind: 'cluster',
          subject: `c${offset}`,
          actor: 'test',
          to_status: 'ONLINE',
          created_at: at(offset),
        })),
      );
      const remaining = async () =>
        (
          await knex('fleet_events').select('subject').orderBy('created_at')
        ).map(r => r.subject);

      expect(await stores.events.deleteEventsBefore(cutoff, 2)).toBe(2);
      expect(await remaining()).toEqual([
        'c-3',
        'c-2',
        'c-1',
        'c0',
        'c1',
        'c30',
      ]);
      expect(await stores.events.deleteEventsBefore(cutoff, 2)).toBe(2);
      expect(await stores.events.deleteEventsBefore(cutoff, 2)).toBe(1);
      expect(await stores.events.deleteEventsBefore(cutoff, 2)).toBe(0);
      expect(await remaining()).toEqual(['c0', 'c1', 'c30']);
      expect(await stores.events.deleteEventsBefore(new Date(0), 100)).toBe(0);
      await expect(stores.events.deleteEventsBefore(cutoff, 0)).rejects.toThrow(
        /positive integer limit/,
      );
      expect(await remaining()).toEqual(['c0', 'c1', 'c30']);
    });
  },
);
