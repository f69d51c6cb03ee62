import { mockServices } from '@backstage/backend-test-utils';
import { createTestDatabases } from '../testing/databases';
import { seedDeployment } from '../testing/fleet';
import { DatabaseFleetStores } from './DatabaseFleetStores';
import { isUniqueViolation } from './dialect';
import type { LoggedEvent } from './eventLog';

// The events a listener hears: those committed, once each, with their component and cluster.

jest.setTimeout(60_000);

const databases = createTestDatabases();

describe.each(databases.eachSupportedId())('EventLog (%s)', databaseId => {
  async function storesHeard() {
    const knex = await databases.init(databaseId);
    const heard: LoggedEvent[][] = [];
    const stores = await DatabaseFleetStores.create({
      database: mockServices.database({ knex, migrations: { skip: false } }),
      onEventsCommitted: events => heard.push(events),
    });
    await stores.clusters.insertCluster({
      name: 'east',
      endpoint: 'https://127.0.0.1:1/east',
      kubeconfigRef: '/nowhere/east',
      source: 'manual',
    });
    heard.length = 0;
    return { knex, stores, heard };
  }

  /** The stores with `payments` deployed on east, and a release of it to store, nothing heard yet. */
  async function releaseToStore(id: string) {
    const { stores, heard } = await storesHeard();
    const deployment = await seedDeployment(
      stores,
      'east',
      'payments',
      'DEPLOYED',
    );
    heard.length = 0;
    const release = {
      id,
      applicationId: deployment.applicationId,
      createdBy: 'user:default/alice',
      request: { image: 'payments:2' },
      phase: 'PROGRESSING',
      targets: [],
      skipped: [],
    };
    return { stores, heard, release };
  }

  it('hears a transaction’s events once it committed, not before, and never those rolled back', async () => {
    const { knex, stores, heard } = await storesHeard();
    await stores.clusters.inClusterTransaction(async tx => {
      await tx.insertEvent({
        subjectKind: 'cluster',
        subject: 'east',
        actor: 'test',
        from: 'UNKNOWN',
        to: 'ONLINE',
      });
      // Written, but not committed yet: nobody may act on it.
      expect(heard).toEqual([]);
    });
    expect(heard).toEqual([
      [
        expect.objectContaining({
          subjectKind: 'cluster',
          subject: 'east',
          from: 'UNKNOWN',
          to: 'ONLINE',
          createdAt: expect.any(String),
        }),
      ],
    ]);

    heard.length = 0;
    await expect(
      stores.clusters.inClusterTransaction(async tx => {
        await tx.insertEvent({
          subjectKind: 'cluster',
          subject: 'east',
          actor: 'test',
          from: 'ONLINE',
          to: 'OFFLINE',
        });
        throw new Error('this cluster’s update fails');
      }),
    ).rejects.toThrow('this cluster’s update fails');
    // Let a wrongly scheduled announcement run, if there were one.
    await new Promise(resolve => setTimeout(resolve, 50));
    expect(heard).toEqual([]);
    const [{ n }] = await knex('fleet_events')
      .where({ to_status: 'OFFLINE' })
      .count({ n: '*' });
    expect(Number(n)).toBe(0);
  });

  it('names the component and the cluster of deployment events, a removed deployment’s too, and of a cascade', async () => {
    const { stores, heard } = await storesHeard();
    const deployment = await seedDeployment(
      stores,
      'east',
      'payments',
      'DEPLOYED',
    );
    await seedDeployment(stores, 'east', 'orders', 'DEPLOYED');
    expect(heard.flat()).toEqual([
      expect.objectContaining({
        subject: deployment.id,
        to: 'DEPLOYED',
        entityRef: 'component:default/payments',
        cluster: 'east',
      }),
      expect.objectContaining({ entityRef: 'component:default/orders' }),
    ]);

    heard.length = 0;
    const moved = await stores.clusters.inClusterTransaction(tx =>
      tx.degradeDeploymentsOnCluster('east', 'fleet-health', 'east is OFFLINE'),
    );
    expect(moved).toBe(2);
    // One transaction, one announcement with both.
    expect(heard).toHaveLength(1);
    expect(
      heard[0].map(e => [e.entityRef, e.cluster, e.from, e.to, e.reason]),
    ).toEqual(
      expect.arrayContaining([
        [
          'component:default/payments',
          'east',
          'DEPLOYED',
          'DEGRADED',
          'CLUSTER_OFFLINE',
        ],
        [
          'component:default/orders',
          'east',
          'DEPLOYED',
          'DEGRADED',
          'CLUSTER_OFFLINE',
        ],
      ]),
    );

    heard.length = 0;
    expect(
      await stores.deployments.deleteDeployment({
        id: deployment.id,
        actor: 'fleet-reconcile',
        reason: 'PRUNED',
        message: 'no longer placed',
      }),
    ).toBe(true);
    expect(heard).toEqual([
      [
        expect.objectContaining({
          subject: deployment.id,
          to: 'REMOVED',
          reason: 'PRUNED',
          entityRef: 'component:default/payments',
          cluster: 'east',
        }),
      ],
    ]);
    expect(
      await stores.deployments.getDeployment(deployment.id),
    ).toBeUndefined();
  });

  it('names the component of release events', async () => {
    const {
      stores,
      heard,
      release: toStore,
    } = await releaseToStore('00000000-0000-4000-8000-000000000001');
    const release = await stores.releases.insertRelease(toStore);
    expect(
      await stores.releases.updateProgress(
        release.id,
        release.version,
        { phase: 'PAUSED', currentWave: 0, waves: [], clusters: [] } as any,
        {
          events: [
            {
              subjectKind: 'release',
              subject: release.id,
              actor: 'fleet-release',
              from: 'PROGRESSING',
              to: 'PAUSED',
              reason: 'PAUSE_STARTED',
            },
          ],
        },
      ),
    ).toBe(true);
    expect(heard).toEqual([
      [
        expect.objectContaining({
          subjectKind: 'release',
          subject: release.id,
          to: 'PAUSED',
          entityRef: 'component:default/payments',
        }),
      ],
    ]);
    expect(await stores.releases.countReleasesByPhase()).toEqual({
      PAUSED: 1,
    });
  });

  it("stores a release with its start's events, heard once it is committed, and neither when the insert fails", async () => {
    const { stores, heard, release } = await releaseToStore(
      '00000000-0000-4000-8000-000000000002',
    );
    const created = {
      subjectKind: 'release' as const,
      subject: release.id,
      actor: 'user:default/alice',
      to: 'PROGRESSING',
      reason: 'CREATED',
      message: 'Release of payments:2 started by user:default/alice',
    };
    const stored = await stores.releases.insertRelease(release, [created]);
    expect(stored).toMatchObject({ id: release.id, version: 0 });
    expect(heard).toEqual([
      [
        expect.objectContaining({
          subject: release.id,
          reason: 'CREATED',
          entityRef: 'component:default/payments',
        }),
      ],
    ]);
    // The same id again: the insert fails, and its event is neither written nor heard.
    heard.length = 0;
    // Not `rejects.toThrow()`: better-sqlite3's native part keeps the error class of the first
    // test file that loaded it in this Jest worker, which is no `Error` of this file's realm.
    const refused = await stores.releases
      .insertRelease(release, [{ ...created, message: 'a second start' }])
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(isUniqueViolation(refused)).toBe(true);
    expect(heard).toEqual([]);
    const events = await stores.events.listEvents({
      subjectKind: 'release',
      subject: release.id,
    });
    expect(events.map(e => e.message)).toEqual([created.message]);
  });
});
