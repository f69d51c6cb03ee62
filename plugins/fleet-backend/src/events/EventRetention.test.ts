import { mockServices } from '@backstage/backend-test-utils';
import { Knex } from 'knex';
import { DatabaseFleetStores } from '../database/DatabaseFleetStores';
import { createTestDatabases } from '../testing/databases';
import { EVENT_RETENTION_TASK_ID, EventRetention } from './EventRetention';

jest.setTimeout(60_000);

const databases = createTestDatabases();
const DAY = 24 * 3600_000;

describe.each(databases.eachSupportedId())(
  'EventRetention (%s)',
  databaseId => {
    async function setup(
      options: { batchSize?: number; retentionDays?: number } = {},
    ) {
      const knex = await databases.init(databaseId);
      const stores = await DatabaseFleetStores.create({
        database: mockServices.database({ knex, migrations: { skip: false } }),
      });
      const logger = mockServices.logger.mock();
      const scheduler = mockServices.scheduler.mock();
      const retention = EventRetention.create({
        store: stores.events,
        logger,
        scheduler,
        events: { retentionMs: (options.retentionDays ?? 90) * DAY },
        batchSize: options.batchSize,
      });
      return { knex, stores, logger, scheduler, retention };
    }

    /** Writes `count` events `ageDays` old, named `<prefix>-<n>`. */
    async function seedEvents(
      knex: Knex,
      prefix: string,
      count: number,
      ageDays: number,
    ) {
      const createdAt = new Date(Date.now() - ageDays * DAY);
      await knex('fleet_events').insert(
        Array.from({ length: count }, (_, n) => ({
          subject_kind: 'cluster',
          subject: `${prefix}-${n}`,
          actor: 'test',
          from_status: 'ONLINE',
          to_status: 'OFFLINE',
          created_at: createdAt,
        })),
      );
    }
    const subjects = async (knex: Knex) =>
      (await knex('fleet_events').select('subject'))
        .map(r => r.subject as string)
        .sort();

    it('removes only the events older than the retention', async () => {
      const { knex, stores, logger, retention } = await setup({
        retentionDays: 30,
      });
      await seedEvents(knex, 'old', 3, 31);
      await seedEvents(knex, 'ancient', 2, 400);
      await seedEvents(knex, 'recent', 2, 29);
      await stores.clusters.insertCluster({
        name: 'c1',
        endpoint: 'https://c1',
        kubeconfigRef: '/k',
        source: 'manual',
      });

      expect(await retention.runOnce()).toBe(5);
      expect(await subjects(knex)).toEqual(['c1', 'recent-0', 'recent-1']);
      expect(logger.info).toHaveBeenCalledWith(
        expect.stringMatching(/^Removed 5 Fleet event\(s\) created before /),
        { removed: 5, cutoff: expect.any(String) },
      );
    });

    it('loops over bounded batches until every old event is gone, and stops early when aborted', async () => {
      const { knex, stores, retention } = await setup({ batchSize: 10 });
      await seedEvents(knex, 'old', 25, 91);
      await seedEvents(knex, 'new', 3, 1);
      const deletes = jest.spyOn(stores.events, 'deleteEventsBefore');

      expect(await retention.runOnce()).toBe(25);
      expect(deletes.mock.calls.map(([, limit]) => limit)).toEqual([
        10, 10, 10,
      ]);
      expect(await Promise.all(deletes.mock.results.map(r => r.value))).toEqual(
        [10, 10, 5],
      );
      expect(await subjects(knex)).toEqual(['new-0', 'new-1', 'new-2']);

      await seedEvents(knex, 'again', 25, 100);
      deletes.mockClear();
      const controller = new AbortController();
      controller.abort();
      expect(await retention.runOnce(controller.signal)).toBe(10);
      expect(deletes).toHaveBeenCalledTimes(1);
      expect(
        (await subjects(knex)).filter(s => s.startsWith('again-')),
      ).toHaveLength(15);
    });

    it('is scheduled daily on one replica, and a run with nothing to remove removes nothing', async () => {
      const { knex, logger, scheduler, retention } = await setup();
      await seedEvents(knex, 'recent', 2, 89);
      await retention.start();
      expect(scheduler.scheduleTask).toHaveBeenCalledWith(
        expect.objectContaining({
          id: EVENT_RETENTION_TASK_ID,
          scope: 'global',
          frequency: { hours: 24 },
        }),
      );

      await scheduler.scheduleTask.mock.calls[0][0].fn(
        new AbortController().signal,
      );
      expect(await subjects(knex)).toEqual(['recent-0', 'recent-1']);
      expect(logger.info).toHaveBeenCalledWith(
        expect.stringMatching(/^Removed 0 Fleet event\(s\) created before /),
        { removed: 0, cutoff: expect.any(String) },
      );
    });
  },
);
