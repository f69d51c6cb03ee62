import { mockServices } from '@backstage/backend-test-utils';
import { createTestDatabases } from '@cnp/fleet-harness';
import { DatabaseFleetStores } from './DatabaseFleetStores';

jest.setTimeout(60_000);

const databases = createTestDatabases();

describe.each(databases.eachSupportedId())(
  'DatabaseFleetStore (%s)',
  databaseId => {
    async function createStore() {
      const knex = await databases.init(databaseId);
      const stores = await DatabaseFleetStores.create({
        database: mockServices.database({ knex, migrations: { skip: false } }),
      });
      return { knex, stores };
    }

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
          endpoint: 'https://127.0.0.1:6443',
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

    it('inserts clusters as UNKNOWN with an event and refuses a duplicate name with a ConflictError', async () => {
      const { stores } = await createStore();
      const cluster = await stores.clusters.insertCluster({
        name: 'c1',
        endpoint: 'https://127.0.0.1:6443',
        kubeconfigRef: '/k/c1.yaml',
        source: 'manual',
        labels: { env: 'prod' },
      });
      expect(cluster).toMatchObject({
        name: 'c1',
        status: 'UNKNOWN',
        consecutiveFailures: 0,
        labels: { env: 'prod' },
        source: 'manual',
      });
      expect(new Date(cluster.createdAt).toISOString()).toBe(cluster.createdAt);
      await expect(
        stores.clusters.insertCluster({
          name: 'c1',
          endpoint: 'https://x',
          kubeconfigRef: 'x',
          source: 'manual',
        }),
      ).rejects.toMatchObject({ name: 'ConflictError' });
      const events = await stores.events.listEvents({
        subjectKind: 'cluster',
        subject: 'c1',
      });
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        to: 'UNKNOWN',
        reason: 'NEVER_PROBED',
      });
    });

    it('upserts discovered clusters: inserts new ones, updates endpoint, ref and context, leaves manual ones alone', async () => {
      const { stores } = await createStore();
      await stores.clusters.insertCluster({
        name: 'manual-1',
        endpoint: 'https://m',
        kubeconfigRef: 'secret-m',
        source: 'manual',
      });
      const first = await stores.clusters.upsertDiscoveredClusters([
        {
          name: 'a',
          endpoint: 'https://a:1',
          kubeconfigRef: '/k/a.yaml',
          context: 'a',
        },
        {
          name: 'manual-1',
          endpoint: 'https://other',
          kubeconfigRef: '/k/m.yaml',
          context: 'm',
        },
      ]);
      expect(first).toEqual({ inserted: ['a'], updated: [], failed: [] });
      const second = await stores.clusters.upsertDiscoveredClusters([
        {
          name: 'a',
          endpoint: 'https://a:2',
          kubeconfigRef: '/k/new-a.yaml',
          context: 'a2',
        },
      ]);
      expect(second).toEqual({ inserted: [], updated: ['a'], failed: [] });
      expect(await stores.clusters.getCluster('a')).toMatchObject({
        endpoint: 'https://a:2',
        kubeconfigRef: '/k/new-a.yaml',
        context: 'a2',
        status: 'UNKNOWN',
        source: 'discovered',
      });
      expect(await stores.clusters.getCluster('manual-1')).toMatchObject({
        endpoint: 'https://m',
        kubeconfigRef: 'secret-m',
      });
      const third = await stores.clusters.upsertDiscoveredClusters([
        {
          name: 'a',
          endpoint: 'https://a:2',
          kubeconfigRef: '/k/new-a.yaml',
          context: 'a2',
        },
      ]);
      expect(third).toEqual({ inserted: [], updated: [], failed: [] });
    });

    it('rolls back every write of a cluster transaction that throws', async () => {
      const { stores } = await createStore();
      await stores.clusters.insertCluster({
        name: 'c1',
        endpoint: 'https://c1',
        kubeconfigRef: '/k',
        source: 'manual',
      });
      const app = await stores.applications.insertApplication({
        entityRef: 'component:default/web',
        name: 'web',
        spec: {},
      });
      const dep = await stores.deployments.insertDeployment(
        { applicationId: app.id, cluster: 'c1', status: 'DEPLOYED' },
        'test',
      );

      await expect(
        stores.clusters.inClusterTransaction(async tx => {
          await tx.updateClusterHealth('c1', {
            status: 'OFFLINE',
            consecutiveFailures: 2,
            consecutiveSuccesses: 0,
          });
          expect(
            await tx.degradeDeploymentsOnCluster('c1', 'test', 'down'),
          ).toBe(1);
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await stores.clusters.getCluster('c1')).toMatchObject({
        status: 'UNKNOWN',
        consecutiveFailures: 0,
      });
      expect(await stores.deployments.getDeployment(dep.id)).toMatchObject({
        status: 'DEPLOYED',
      });
      expect(
        await stores.events.listEvents({
          subjectKind: 'deployment',
          subject: dep.id,
        }),
      ).toHaveLength(1);
    });

    it('writes several clusters health in one statement, each with its own values, keeping what it does not set', async () => {
      const { knex, stores } = await createStore();
      for (const name of ['b1', 'b2', 'b3']) {
        await stores.clusters.insertCluster({
          name,
          endpoint: `https://${name}`,
          kubeconfigRef: `/k/${name}.yaml`,
          source: 'manual',
        });
      }
      const earlier = new Date('2026-11-29T10:00:00.000Z');
      const now = new Date('2026-11-29T10:05:00.000Z');
      await stores.clusters.inClusterTransaction(tx =>
        tx.updateClusterHealth('b2', {
          status: 'ONLINE',
          statusReason: 'PROBE_SUCCEEDED',
          consecutiveFailures: 0,
          consecutiveSuccesses: 1,
          lastProbeAt: earlier,
          lastSuccessAt: earlier,
          lastTransitionAt: earlier,
          probeLatencyMs: 7,
          serverVersion: 'v1.31.0',
        }),
      );

      const statements: string[] = [];
      const onQuery = (q: { sql: string }) => statements.push(q.sql);
      knex.on('query', onQuery);
      await stores.clusters.updateClustersHealth([
        {
          name: 'b1',
          update: {
            status: 'UNKNOWN',
            statusReason: 'NOT_PROBEABLE: opaque',
            consecutiveFailures: 0,
            consecutiveSuccesses: 0,
          },
        },
        {
          name: 'b2',
          update: {
            status: 'ONLINE',
            statusReason: 'PROBE_FAILED: timed out',
            consecutiveFailures: 1,
            consecutiveSuccesses: 0,
            lastProbeAt: now,
            probeLatencyMs: 2000,
          },
        },
        {
          name: 'gone',
          update: {
            status: 'ONLINE',
            consecutiveFailures: 0,
            consecutiveSuccesses: 3,
            lastProbeAt: now,
          },
        },
      ]);
      knex.off('query', onQuery);
      expect(statements).toHaveLength(1);

      expect(await stores.clusters.getCluster('b1')).toMatchObject({
        status: 'UNKNOWN',
        statusReason: 'NOT_PROBEABLE: opaque',
        lastProbeAt: undefined,
      });
      const b2 = await stores.clusters.getCluster('b2');
      expect(b2).toMatchObject({
        status: 'ONLINE',
        statusReason: 'PROBE_FAILED: timed out',
        consecutiveFailures: 1,
        consecutiveSuccesses: 0,
        probeLatencyMs: 2000,
        serverVersion: 'v1.31.0', // not set by this update: kept
      });
      expect(new Date(b2!.lastProbeAt!).toISOString()).toBe(now.toISOString());
      expect(new Date(b2!.lastSuccessAt!).toISOString()).toBe(
        earlier.toISOString(),
      );
      expect(new Date(b2!.lastTransitionAt!).toISOString()).toBe(
        earlier.toISOString(),
      );
      expect(await stores.clusters.getCluster('b3')).toMatchObject({
        status: 'UNKNOWN',
        consecutiveFailures: 0,
      });
      expect(await stores.clusters.getCluster('gone')).toBeUndefined();
      await stores.clusters.updateClustersHealth([]); // nothing to write: no statement, no error
    });

    it('degrades only DEPLOYED deployments and restores only those degraded by CLUSTER_OFFLINE', async () => {
      const { stores } = await createStore();
      await stores.clusters.insertCluster({
        name: 'c1',
        endpoint: 'https://c1',
        kubeconfigRef: '/k',
        source: 'manual',
      });
      const ids: Record<string, string> = {};
      for (const [name, status] of [
        ['ok', 'DEPLOYED'],
        ['failed', 'FAILED'],
        ['sick', 'DEGRADED'],
        ['new', 'PENDING'],
      ] as const) {
        const app = await stores.applications.insertApplication({
          entityRef: `component:default/${name}`,
          name,
          spec: {},
        });
        const dep = await stores.deployments.insertDeployment(
          {
            applicationId: app.id,
            cluster: 'c1',
            status,
            statusReason:
              status === 'DEGRADED' ? 'WORKLOAD_UNHEALTHY' : undefined,
          },
          'test',
        );
        ids[name] = dep.id;
      }
      await stores.clusters.inClusterTransaction(async tx => {
        expect(
          await tx.degradeDeploymentsOnCluster(
            'c1',
            'fleet-health',
            'c1 is OFFLINE',
          ),
        ).toBe(1);
      });
      expect(await stores.deployments.getDeployment(ids.ok)).toMatchObject({
        status: 'DEGRADED',
        statusReason: 'CLUSTER_OFFLINE',
        clusterStatus: 'UNKNOWN',
        entityRef: 'component:default/ok',
      });
      await stores.clusters.inClusterTransaction(async tx => {
        expect(
          await tx.restoreDeploymentsOnCluster('c1', 'fleet-health', 'back'),
        ).toBe(1);
      });
      const after = Object.fromEntries(
        await Promise.all(
          Object.entries(ids).map(async ([k, id]) => [
            k,
            (await stores.deployments.getDeployment(id))!.status,
          ]),
        ),
      );
      expect(after).toEqual({
        ok: 'DEPLOYED',
        failed: 'FAILED',
        sick: 'DEGRADED',
        new: 'PENDING',
      });
      const events = await stores.events.listEvents({
        subjectKind: 'deployment',
        subject: ids.ok,
      });
      expect(events.map(e => `${e.from ?? ''}->${e.to}`)).toEqual([
        'DEGRADED->DEPLOYED',
        'DEPLOYED->DEGRADED',
        '->DEPLOYED',
      ]);
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

    it('updates labels and the per-cluster failure threshold, and deletes clusters, recording who did each', async () => {
      const { stores } = await createStore();
      await stores.clusters.insertCluster({
        name: 'c1',
        endpoint: 'https://c1',
        kubeconfigRef: '/k',
        source: 'manual',
        actor: 'user:default/ada',
      });
      expect(
        await stores.clusters.updateClusterSettings(
          'c1',
          { labels: { env: 'dev' }, failureThreshold: 4 },
          'user:default/bob',
        ),
      ).toMatchObject({
        labels: { env: 'dev' },
        failureThreshold: 4,
      });
      expect(
        await stores.clusters.updateClusterSettings('c1', {
          failureThreshold: null,
        }),
      ).toMatchObject({ failureThreshold: undefined });
      expect(
        await stores.clusters.updateClusterSettings('nope', { labels: {} }),
      ).toBeUndefined();
      expect(await stores.clusters.deleteCluster('c1', 'fleet-dev-cli')).toBe(
        true,
      );
      expect(await stores.clusters.getCluster('c1')).toBeUndefined();
      expect(await stores.clusters.deleteCluster('c1')).toBe(false);
      const events = await stores.events.listEvents({
        subjectKind: 'cluster',
        subject: 'c1',
      });
      expect(
        events.map(e => [e.actor, e.from, e.to, e.reason, e.message]),
      ).toEqual([
        [
          'fleet-dev-cli',
          'UNKNOWN',
          'DELETED',
          'DELETED',
          'Cluster removed (manual)',
        ],
        [
          'user:default/bob',
          'UNKNOWN',
          'UNKNOWN',
          'SETTINGS_CHANGED',
          'labels set to env=dev; failure threshold set to 4',
        ],
        [
          'user:default/ada',
          undefined,
          'UNKNOWN',
          'NEVER_PROBED',
          'Cluster registered (manual)',
        ],
      ]);
    });
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

    it('refuses to delete a cluster that still has deployments with a ConflictError', async () => {
      const { stores } = await createStore();
      await stores.clusters.insertCluster({
        name: 'busy',
        endpoint: 'https://busy',
        kubeconfigRef: '/k',
        source: 'manual',
      });
      const app = await stores.applications.insertApplication({
        entityRef: 'component:default/web',
        name: 'web',
        spec: {},
      });
      await stores.deployments.insertDeployment(
        { applicationId: app.id, cluster: 'busy', status: 'DEPLOYED' },
        'test',
      );
      await expect(stores.clusters.deleteCluster('busy')).rejects.toMatchObject(
        {
          name: 'ConflictError',
        },
      );
      expect(await stores.clusters.getCluster('busy')).toBeDefined();
      await expect(
        stores.deployments.insertDeployment(
          {
            applicationId: app.id,
            cluster: 'never-registered',
            status: 'PENDING',
          },
          'test',
        ),
      ).rejects.toMatchObject({
        name: 'ConflictError',
        message: "Cluster 'never-registered' was removed meanwhile",
      });
    });
  },
);
