import { mockServices } from '@backstage/backend-test-utils';
import { createTestDatabases, createTestStores } from '../testing/databases';
import { ShardLeases } from './ShardLeases';
import { shardOf } from './shardOf';

// The shard leases alone, over one database; the health cycles that run over them are tested in
// `health/HealthWorker.shards.test.ts`.

jest.setTimeout(60_000);

const databases = createTestDatabases();
const SHARDS = 4;

describe('shardOf', () => {
  it('is the FNV-1a hash (32 bits) of the name, mod the number of shards', () => {
    expect(shardOf('', 2 ** 32)).toBe(0x811c9dc5);
    expect(shardOf('a', 2 ** 32)).toBe(0xe40c292c);
    expect(shardOf('a', 4)).toBe(0xe40c292c % 4);
  });
});

describe.each(databases.eachSupportedId())(
  'ShardLeases of two replicas over one database (%s)',
  databaseId => {
    async function twoReplicas() {
      const { stores } = await createTestStores(databases, databaseId);
      const replica = () =>
        ShardLeases.create({
          state: stores.state,
          sharding: { shards: SHARDS, leaseMs: 30_000 },
          logger: mockServices.logger.mock(),
        });
      return { stores, a: replica(), b: replica() };
    }

    it('splits the shards by fair share: the first takes all, then lets the extra ones go', async () => {
      const { stores, a, b } = await twoReplicas();
      expect(await a.claimShards()).toEqual([0, 1, 2, 3]);
      expect(await b.claimShards()).toEqual([]);
      expect(await a.claimShards()).toEqual([0, 1]);
      expect(await b.claimShards()).toEqual([2, 3]);
      const leases = await stores.state.listLeases('health-cycle:shard-');
      expect(
        leases
          .map(l => [l.name, l.holder])
          .sort((x, y) => (x[0] < y[0] ? -1 : 1)),
      ).toEqual([
        ['health-cycle:shard-0', a.replica],
        ['health-cycle:shard-1', a.replica],
        ['health-cycle:shard-2', b.replica],
        ['health-cycle:shard-3', b.replica],
      ]);
      expect((await stores.state.listLeases('health-presence:')).length).toBe(
        2,
      );
    });

    it('owns the clusters of the shards it holds, and none once stopped', async () => {
      const { a, b } = await twoReplicas();
      await a.claimShards();
      await b.claimShards();
      await a.claimShards();
      await b.claimShards();
      const names = Array.from({ length: 40 }, (_, i) => `cluster-${i}`);
      const mine = names.filter(n => a.ownership().current().holdsCluster(n));
      expect(mine).toEqual(names.filter(n => shardOf(n, SHARDS) < 2));
      await a.halt();
      expect(names.some(n => a.ownership().current().holdsCluster(n))).toBe(
        false,
      );
    });

    it('lets every shard and its presence go on release, for another replica to take at once', async () => {
      const { stores, a, b } = await twoReplicas();
      await a.claimShards();
      await b.claimShards();
      await a.claimShards();
      await a.halt();
      await a.release();
      expect(await b.claimShards()).toEqual([0, 1, 2, 3]);
      expect(
        (await stores.state.listLeases('health-presence:')).map(l => l.holder),
      ).toEqual([b.replica]);
    });
  },
);
