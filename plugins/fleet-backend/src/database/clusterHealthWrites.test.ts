import { createTestDatabases, createTestStores } from '../testing/databases';

// The cluster store's health writes: the per-cluster transaction, its cascade, the batched write.

jest.setTimeout(60_000);

const databases = createTestDatabases();

describe.each(databases.eachSupportedId())(
  'clusterHealthWrites (%s)',
  databaseId => {
    const createStore = () => createTestStores(databases, databaseId);

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
        lastProbeAt: null,
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
  },
);
