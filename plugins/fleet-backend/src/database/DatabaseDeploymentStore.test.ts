import { mockServices } from '@backstage/backend-test-utils';
import { createTestDatabases } from '../testing/databases';
import { DatabaseFleetStores } from './DatabaseFleetStores';
import {
  DEPLOYMENT_COLUMNS,
  deploymentsQuery,
  TIMESTAMP_COLUMNS,
} from './deploymentRows';
import { toDeployment } from './tables';

// The deployment store: its reads, prepared statements included.

jest.setTimeout(60_000);

const databases = createTestDatabases();

describe.each(databases.eachSupportedId())(
  'DatabaseDeploymentStore (%s)',
  databaseId => {
    it('locks the row it changes on PostgreSQL (SELECT ... FOR UPDATE), which SQLite neither needs nor has', async () => {
      const knex = await databases.init(databaseId);
      const stores = await DatabaseFleetStores.create({
        database: mockServices.database({ knex, migrations: { skip: false } }),
      });
      await stores.clusters.insertCluster({
        name: 'c1',
        endpoint: 'https://127.0.0.1:6443',
        kubeconfigRef: '/k/c.yaml',
        source: 'manual',
      });
      const app = await stores.applications.insertApplication({
        entityRef: 'component:default/locked',
        name: 'locked',
        spec: { image: 'x:1' },
      });
      const deployment = await stores.deployments.insertDeployment(
        { applicationId: app.id, cluster: 'c1', status: 'PENDING' },
        'test',
      );
      const statements: string[] = [];
      knex.on('query', (query: { sql?: string }) =>
        statements.push(query.sql ?? ''),
      );
      await stores.deployments.updateDeploymentStatus(
        deployment.id,
        { status: 'DEPLOYED' },
        'test',
      );
      await stores.deployments.recordSync(
        deployment.id,
        { syncStatus: 'SYNCED' },
        'test',
      );
      const locking = statements.filter(sql => /for update/i.test(sql));
      expect(locking).toHaveLength(databaseId.startsWith('POSTGRES') ? 2 : 0);
    });

    it('names every column of fleet_deployments in the read PostgreSQL makes with its own column list (a column a migration adds is not left out)', async () => {
      const knex = await databases.init(databaseId);
      await DatabaseFleetStores.create({
        database: mockServices.database({ knex, migrations: { skip: false } }),
      });
      const columns = Object.keys(await knex('fleet_deployments').columnInfo());
      expect([...DEPLOYMENT_COLUMNS, ...TIMESTAMP_COLUMNS].sort()).toEqual(
        columns.sort(),
      );
    });

    it('reads timestamps as ISO 8601 in UTC with milliseconds, whatever the time zone of the session', async () => {
      const knex = await databases.init(databaseId);
      const stores = await DatabaseFleetStores.create({
        database: mockServices.database({ knex, migrations: { skip: false } }),
      });
      await stores.clusters.insertCluster({
        name: 'c1',
        endpoint: 'https://127.0.0.1:6443',
        kubeconfigRef: '/k/c.yaml',
        source: 'manual',
      });
      const app = await stores.applications.insertApplication({
        entityRef: 'component:default/timed',
        name: 'timed',
        spec: { image: 'x:1' },
      });
      const deployment = await stores.deployments.insertDeployment(
        { applicationId: app.id, cluster: 'c1', status: 'PENDING' },
        'test',
      );
      // Written by the database itself, with microseconds (JS dates have milliseconds).
      await knex('fleet_deployments')
        .where({ id: deployment.id })
        .update({
          last_synced_at: databaseId.startsWith('POSTGRES')
            ? knex.raw(`'2026-12-02 18:44:42.123987+00'::timestamptz`)
            : '2026-12-02 18:44:42.123',
          last_applied_at: null,
        });
      const [read] = await stores.deployments.listDeployments({
        entityRef: 'component:default/timed',
      });
      expect(read.lastSyncedAt).toBe('2026-12-02T18:44:42.123Z');
      expect(read.lastAppliedAt).toBeNull();
      expect(read.createdAt).toBe(deployment.createdAt);
      expect(read.updatedAt).toMatch(
        /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
      );
      // A session in another time zone (PostgreSQL has them) reads the same instants.
      const row = await knex.transaction(async tx => {
        if (databaseId.startsWith('POSTGRES')) {
          await tx.raw(`SET LOCAL TIME ZONE 'Asia/Kolkata'`);
        }
        return deploymentsQuery(tx).where('d.id', deployment.id).first();
      });
      expect(toDeployment(row!)).toEqual(read);
    });

    it("reads the deployments' states as listDeployments reads them, with their current revision's namespace; filters by status and reads given deployments and their revisions", async () => {
      const knex = await databases.init(databaseId);
      const stores = await DatabaseFleetStores.create({
        database: mockServices.database({ knex, migrations: { skip: false } }),
      });
      for (const name of ['c1', 'c2']) {
        await stores.clusters.insertCluster({
          name,
          endpoint: `https://127.0.0.1:6443/${name}`,
          kubeconfigRef: '/k/c.yaml',
          source: 'manual',
        });
      }
      // Inserted out of the (entity ref, cluster) order on purpose.
      const [zeta, alpha] = await Promise.all(
        ['zeta', 'alpha'].map(name =>
          stores.applications.insertApplication({
            entityRef: `component:default/${name}`,
            name,
            spec: { image: 'x:1' },
          }),
        ),
      );
      const revision = (namespace?: string) => ({
        image: 'x:1',
        namespace,
        cause: 'deploy' as const,
        createdBy: 'test',
      });
      const z2 = await stores.deployments.insertDeployment(
        {
          applicationId: zeta.id,
          cluster: 'c2',
          status: 'PENDING',
          firstRevision: revision('ns-z'),
        },
        'test',
      );
      const a1 = await stores.deployments.insertDeployment(
        {
          applicationId: alpha.id,
          cluster: 'c1',
          status: 'PENDING',
          firstRevision: revision(),
        },
        'test',
      );
      const z1 = await stores.deployments.insertDeployment(
        { applicationId: zeta.id, cluster: 'c1', status: 'PENDING' },
        'test',
      );
      await stores.deployments.updateDeploymentStatus(
        a1.id,
        {
          status: 'DEGRADED',
          statusReason: 'WORKLOAD_UNHEALTHY',
          syncStatus: 'OUT_OF_SYNC',
        },
        'test',
      );
      await stores.deployments.setPlaced(z1.id, false, 'test');
      // A second revision of z2: its namespace is the current one's.
      await stores.deployments.startRevision(z2.id, revision('ns-z2'), 'again');
      await stores.deployments.updateDeploymentStatus(
        z2.id,
        { status: 'DEPLOYED', syncStatus: 'SYNCED' },
        'test',
      );

      const full = await stores.deployments.listDeployments();
      const states = await stores.deployments.listDeploymentStates();
      expect(states.map(d => d.id)).toEqual([a1.id, z1.id, z2.id]);
      expect(states).toEqual(
        full.map(d => ({
          id: d.id,
          applicationId: d.applicationId,
          cluster: d.cluster,
          status: d.status,
          statusReason: d.statusReason,
          syncStatus: d.syncStatus,
          revision: d.revision,
          placed: d.placed,
          namespace: { [z2.id]: 'ns-z2' }[d.id],
        })),
      );
      expect(states.map(d => [d.status, d.revision, d.placed])).toEqual([
        ['DEGRADED', 1, true],
        ['PENDING', 0, false],
        ['DEPLOYED', 2, true],
      ]);
      expect(
        (
          await stores.deployments.listDeploymentStates({
            applicationId: zeta.id,
          })
        ).map(d => d.id),
      ).toEqual([z1.id, z2.id]);

      expect(
        (
          await stores.deployments.listDeployments({
            statuses: ['PENDING', 'DEPLOYED'],
          })
        ).map(d => d.id),
      ).toEqual([z1.id, z2.id]);
      expect(
        await stores.deployments.listDeployments({ statuses: ['FAILED'] }),
      ).toEqual([]);

      // Given deployments, over more ids than one statement binds: ids of no deployment around.
      const others = Array.from(
        { length: 1200 },
        (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      );
      const given = await stores.revisions.listCurrentRevisions({
        deploymentIds: [
          a1.id,
          ...others.slice(0, 700),
          z2.id,
          ...others.slice(700),
        ],
      });
      expect(
        given.map(r => [r.deploymentId, r.revision, r.namespace]).sort(),
      ).toEqual(
        [
          [a1.id, 1, null],
          [z2.id, 2, 'ns-z2'],
        ].sort(),
      );
      expect(
        await stores.revisions.listCurrentRevisions({ deploymentIds: [] }),
      ).toEqual([]);
      // Deployments by id, over more ids than one statement binds (one given twice, in two
      // chunks), as listDeployments reads them, by entity ref and cluster; with another filter,
      // both hold.
      const byIds = await stores.deployments.listDeployments({
        ids: [
          z2.id,
          ...others.slice(0, 700),
          a1.id,
          ...others.slice(700),
          z2.id,
        ],
      });
      expect(byIds).toEqual(full.filter(d => d.id !== z1.id));
      expect(
        (
          await stores.deployments.listDeployments({
            ids: [z2.id, a1.id, z1.id],
            applicationId: zeta.id,
          })
        ).map(d => d.id),
      ).toEqual([z1.id, z2.id]);
      expect(await stores.deployments.listDeployments({ ids: [] })).toEqual([]);
    });

    it("reads an entity's deployments with one named prepared statement on PostgreSQL, unless told not to", async () => {
      const knex = await databases.init(databaseId);
      const names: Array<string | undefined> = [];
      knex.on('query', (query: { options?: { name?: string } }) =>
        names.push(query.options?.name),
      );
      for (const preparedStatements of [true, false]) {
        names.length = 0;
        const stores = await DatabaseFleetStores.create({
          database: mockServices.database({
            knex,
            migrations: { skip: false },
          }),
          preparedStatements,
        });
        await stores.clusters.insertCluster({
          name: `c-${preparedStatements}`,
          // One API server is one cluster: each its own.
          endpoint: `https://127.0.0.1:6443/c-${preparedStatements}`,
          kubeconfigRef: '/k/c.yaml',
          source: 'manual',
        });
        const app = await stores.applications.insertApplication({
          entityRef: `component:default/p-${preparedStatements}`,
          name: `p-${preparedStatements}`,
          spec: { image: 'x:1' },
        });
        await stores.deployments.insertDeployment(
          {
            applicationId: app.id,
            cluster: `c-${preparedStatements}`,
            status: 'DEPLOYED',
            image: 'x:1',
          },
          'test',
        );
        names.length = 0;
        // Different entities, one statement text: the values vary, the statement is reused.
        for (const ref of [app.entityRef, 'component:default/none']) {
          await stores.deployments.listDeployments({ entityRef: ref });
        }
        expect(
          (
            await stores.deployments.listDeployments({
              entityRef: app.entityRef,
            })
          ).map(d => d.cluster),
        ).toEqual([`c-${preparedStatements}`]);
        const expected =
          preparedStatements && databaseId === 'POSTGRES_15'
            ? 'fleet_deployments_of_entity'
            : undefined;
        expect(names).toEqual([expected, expected, expected]);
      }
    });

    it("notes a rollout's progress on a PROGRESSING deployment of that revision, only when it changed, with no event", async () => {
      const knex = await databases.init(databaseId);
      const stores = await DatabaseFleetStores.create({
        database: mockServices.database({ knex, migrations: { skip: false } }),
      });
      await stores.clusters.insertCluster({
        name: 'c1',
        endpoint: 'https://127.0.0.1:6443/c1',
        kubeconfigRef: '/k/c.yaml',
        source: 'manual',
      });
      const app = await stores.applications.insertApplication({
        entityRef: 'component:default/rolling',
        name: 'rolling',
        spec: { image: 'x:1' },
      });
      const d = await stores.deployments.insertDeployment(
        {
          applicationId: app.id,
          cluster: 'c1',
          status: 'PENDING',
          firstRevision: { image: 'x:1', cause: 'deploy', createdBy: 'test' },
        },
        'test',
      );
      const note = (revision: number, message: string) =>
        stores.deployments.noteRolloutProgress(d.id, revision, message);
      // Not PROGRESSING yet: nothing noted.
      expect(await note(d.revision, '0 of 3 replicas updated')).toBeUndefined();
      await stores.deployments.updateDeploymentStatus(
        d.id,
        { status: 'PROGRESSING', message: 'Applied' },
        'test',
      );
      const events = async () =>
        (
          await stores.events.listEvents({
            subjectKind: 'deployment',
            subject: d.id,
          })
        ).length;
      const before = await events();
      expect(await note(d.revision, '1 of 3 replicas updated')).toMatchObject({
        id: d.id,
        status: 'PROGRESSING',
        message: '1 of 3 replicas updated',
      });
      // The same words again, or another revision's: nothing changes.
      expect(await note(d.revision, '1 of 3 replicas updated')).toBeUndefined();
      expect(
        await note(d.revision + 1, '2 of 3 replicas updated'),
      ).toBeUndefined();
      expect((await stores.deployments.getDeployment(d.id))?.message).toBe(
        '1 of 3 replicas updated',
      );
      expect(await events()).toBe(before);
      await stores.deployments.updateDeploymentStatus(
        d.id,
        { status: 'DEPLOYED', message: 'Rollout complete' },
        'test',
      );
      // A finished rollout keeps its own message.
      expect(await note(d.revision, '3 of 3 replicas updated')).toBeUndefined();
      expect((await stores.deployments.getDeployment(d.id))?.message).toBe(
        'Rollout complete',
      );
    });
  },
);
