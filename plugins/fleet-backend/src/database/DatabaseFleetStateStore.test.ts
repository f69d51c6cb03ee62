import { createTestDatabases, createTestStores } from '../testing/databases';

// The fleet state store: leases, the mass-outage warning, the last cycle, the counts.

jest.setTimeout(60_000);

const databases = createTestDatabases();

describe.each(databases.eachSupportedId())(
  'DatabaseFleetStateStore (%s)',
  databaseId => {
    const createStore = () => createTestStores(databases, databaseId);

    it('keeps the warning and the last cycle under the keys earlier versions wrote', async () => {
      const { knex, stores } = await createStore();
      // A database upgraded from an earlier version holds them under these keys: reading them
      // there keeps its state across the upgrade.
      await knex('fleet_state').insert([
        {
          key: 'massOutage',
          value: JSON.stringify({ active: true, clusters: ['a', 'b', 'c'] }),
          updated_at: new Date(),
        },
        {
          key: 'lastCycle',
          value: JSON.stringify({ finishedAt: '2026-11-29T10:00:00.000Z' }),
          updated_at: new Date(),
        },
      ]);
      expect(await stores.state.getMassOutage()).toEqual({
        active: true,
        clusters: ['a', 'b', 'c'],
      });
      expect(await stores.state.getLastCycle()).toEqual({
        finishedAt: '2026-11-29T10:00:00.000Z',
      });
      await stores.state.setMassOutage({ active: false, clusters: [] });
      const row = await knex('fleet_state')
        .where({ key: 'massOutage' })
        .first();
      expect(JSON.parse(row.value)).toEqual({ active: false, clusters: [] });
    });

    it('lists the leases under a prefix, expired ones too, with their holder, token and expiry', async () => {
      const { stores } = await createStore();
      await stores.state.takeLease('health-cycle:shard-1', 'a', 60_000);
      await stores.state.takeLease('health-cycle:shard-0', 'b', 60_000);
      await stores.state.takeLease('health-cycle', 'c', 60_000);
      await stores.state.takeLease('health-cycle_shard-9', 'd', 60_000);
      await stores.state.releaseLease('health-cycle:shard-0', 'b');
      const leases = await stores.state.listLeases('health-cycle:shard-');
      expect(leases.map(l => [l.name, l.holder, l.token])).toEqual([
        ['health-cycle:shard-0', 'b', 1],
        ['health-cycle:shard-1', 'a', 1],
      ]);
      expect(Date.parse(leases[0].expiresAt)).toBeLessThan(Date.now());
      expect(Date.parse(leases[1].expiresAt)).toBeGreaterThan(Date.now());
      expect(await stores.state.listLeases('nothing-')).toEqual([]);
    });

    it('deletes the leases of a prefix that expired a given time ago by the database clock, and only those', async () => {
      const { stores } = await createStore();
      await stores.state.takeLease('health-presence:gone', 'gone', 60_000);
      await stores.state.releaseLease('health-presence:gone', 'gone');
      await stores.state.takeLease('health-presence:live', 'live', 60_000);
      await stores.state.takeLease('health-cycle:shard-0', 'x', 60_000);
      await stores.state.releaseLease('health-cycle:shard-0', 'x');
      expect(
        await stores.state.deleteExpiredLeases('health-presence:', 0),
      ).toBe(1);
      expect(
        (await stores.state.listLeases('health-')).map(l => l.name),
      ).toEqual(['health-cycle:shard-0', 'health-presence:live']);
      expect(
        await stores.state.deleteExpiredLeases('health-presence:', 0),
      ).toBe(0);
    });

    describe('with a replica whose clock is off', () => {
      const HOUR = 3_600_000;
      /** This process's Date reads `offsetMs` off the real time (timers stay real). */
      const skewClock = (offsetMs: number) =>
        jest.useFakeTimers({
          now: Date.now() + offsetMs,
          doNotFake: [
            'hrtime',
            'nextTick',
            'performance',
            'queueMicrotask',
            'setImmediate',
            'clearImmediate',
            'setInterval',
            'clearInterval',
            'setTimeout',
            'clearTimeout',
          ],
        });
      afterEach(() => jest.useRealTimers());

      it('a replica whose clock runs ahead never takes a lease its holder still holds', async () => {
        const { stores } = await createStore();
        const a = await stores.state.takeLease('cycle', 'a', 60_000);
        expect(a).toBeDefined();
        skewClock(2 * HOUR);
        expect(await stores.state.takeLease('cycle', 'b', 60_000)).toBe(
          undefined,
        );
        const [lease] = await stores.state.listLeases('cycle');
        expect(lease).toMatchObject({ holder: 'a' });
        expect(lease.remainingMs).toBeGreaterThan(50_000);
        jest.useRealTimers();
        // The holder's fenced writes still go through.
        await stores.state.setLastCycle(
          { finishedAt: new Date().toISOString() } as any,
          a,
        );
      });

      it('a lease taken by a replica whose clock runs behind lasts its whole time', async () => {
        const { stores } = await createStore();
        skewClock(-2 * HOUR);
        const a = await stores.state.takeLease('cycle', 'a', 60_000);
        jest.useRealTimers();
        expect(a).toBeDefined();
        expect(await stores.state.takeLease('cycle', 'b', 60_000)).toBe(
          undefined,
        );
        await stores.state.setLastCycle(
          { finishedAt: new Date().toISOString() } as any,
          a,
        );
      });

      it('a replica whose clock runs behind does not keep writing under a lease that has run out', async () => {
        const { stores } = await createStore();
        const a = await stores.state.takeLease('cycle', 'a', 100);
        await new Promise(r => setTimeout(r, 250));
        skewClock(-2 * HOUR);
        await expect(
          stores.state.setLastCycle(
            { finishedAt: new Date().toISOString() } as any,
            a,
          ),
        ).rejects.toMatchObject({ name: 'LeaseLostError' });
        const [lease] = await stores.state.listLeases('cycle');
        expect(lease.remainingMs).toBeLessThan(0);
        jest.useRealTimers();
        // Another replica takes it over, with the token moved on.
        expect(await stores.state.takeLease('cycle', 'b', 60_000)).toEqual({
          name: 'cycle',
          holder: 'b',
          token: a!.token + 1,
        });
      });
    });

    it('hands a lease to one holder at a time and lets it expire', async () => {
      const { stores } = await createStore();
      expect(await stores.state.tryAcquireLease('cycle', 'a', 60_000)).toBe(
        true,
      );
      expect(await stores.state.tryAcquireLease('cycle', 'b', 60_000)).toBe(
        false,
      );
      expect(await stores.state.tryAcquireLease('cycle', 'a', 60_000)).toBe(
        true,
      );
      await stores.state.releaseLease('cycle', 'a');
      expect(await stores.state.tryAcquireLease('cycle', 'b', 1)).toBe(true);
      await new Promise(r => setTimeout(r, 20));
      expect(await stores.state.tryAcquireLease('cycle', 'c', 60_000)).toBe(
        true,
      );
    });

    it('keeps fleet state and counts clusters and deployments per status', async () => {
      const { stores } = await createStore();
      expect(await stores.state.getMassOutage()).toBeUndefined();
      expect(await stores.state.getLastCycle()).toBeUndefined();
      await stores.state.setMassOutage({ active: true, clusters: ['a'] });
      await stores.state.setMassOutage({ active: false, clusters: [] });
      expect(await stores.state.getMassOutage()).toEqual({
        active: false,
        clusters: [],
      });
      const cycle = {
        startedAt: '2026-11-30T10:00:00.000Z',
        finishedAt: '2026-11-30T10:00:01.000Z',
        durationMs: 1000,
        probed: 1,
        online: 1,
        offline: 0,
        unknown: 0,
        transitions: [],
        degradedDeployments: 0,
        restoredDeployments: 0,
        errors: [],
        massOutage: { active: false, clusters: [] },
      };
      await stores.state.setLastCycle(cycle);
      expect(await stores.state.getLastCycle()).toEqual(cycle);
      // each its own key: the last cycle did not overwrite the warning
      expect(await stores.state.getMassOutage()).toEqual({
        active: false,
        clusters: [],
      });
      await stores.clusters.insertCluster({
        name: 'c1',
        endpoint: 'https://c1',
        kubeconfigRef: '/k',
        source: 'manual',
      });
      expect(await stores.clusters.countClustersByStatus()).toEqual({
        ONLINE: 0,
        OFFLINE: 0,
        UNKNOWN: 1,
      });
      const counts = await stores.deployments.countDeploymentsByStatus();
      expect(counts.byStatus.DEPLOYED).toBe(0);
    });
  },
);
