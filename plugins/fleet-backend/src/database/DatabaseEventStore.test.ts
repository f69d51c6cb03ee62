import { createTestDatabases, createTestStores } from '../testing/databases';

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

    it('names what each recent event concerns: the component and cluster of a deployment (also once undeployed), the component of a release, the cluster itself', async () => {
      const { knex, stores } = await createStore();
      await stores.clusters.insertCluster({
        name: 'sim-2',
        endpoint: 'https://127.0.0.1:6443',
        kubeconfigRef: '/k/c.yaml',
        source: 'manual',
      });
      const app = await stores.applications.insertApplication({
        entityRef: 'component:default/payments',
        name: 'payments',
        spec: { image: 'x:1' },
      });
      const live = await stores.deployments.insertDeployment(
        { applicationId: app.id, cluster: 'sim-2', status: 'PENDING' },
        'test',
      );
      const now = new Date();
      // A deployment undeployed since: its row is gone, its revisions stay.
      const gone = '6f1c1a52-0b5e-4d0e-9a43-3b1a3f0c2f11';
      await knex('fleet_revisions').insert({
        deployment_id: gone,
        application_id: app.id,
        cluster: 'sim-1',
        revision: 1,
        image: 'x:1',
        cause: 'deploy',
        created_by: 'test',
        created_at: now,
      });
      const release = 'a2d5c0de-1b7e-4f4e-8d7a-0f3c9c1e5b21';
      await knex('fleet_releases').insert({
        id: release,
        application_id: app.id,
        created_by: 'test',
        created_at: now,
        request: '{}',
        targets: '[]',
        skipped: '[]',
      });
      const unknown = '00000000-0000-4000-8000-000000000000';
      await knex('fleet_events').insert(
        [
          ['cluster', 'sim-2'],
          ['deployment', gone],
          ['release', release],
          ['deployment', unknown],
        ].map(([kind, subject]) => ({
          subject_kind: kind,
          subject,
          actor: 'test',
          to_status: 'DEGRADED',
          created_at: now,
        })),
      );

      const context = (await stores.events.listRecentEvents(50)).map(e => [
        e.subjectKind,
        e.subject,
        e.entityRef,
        e.cluster,
      ]);
      expect(context).toEqual([
        ['deployment', unknown, null, null],
        ['release', release, 'component:default/payments', null],
        ['deployment', gone, 'component:default/payments', 'sim-1'],
        ['cluster', 'sim-2', null, 'sim-2'],
        // insertCluster and insertDeployment wrote the first two
        ['deployment', live.id, 'component:default/payments', 'sim-2'],
        ['cluster', 'sim-2', null, 'sim-2'],
      ]);
    });
  },
);
