import { createTestDatabases, createTestStores } from '../testing/databases';

// The cluster store: registration, discovery upserts, settings and removal.

jest.setTimeout(60_000);

const databases = createTestDatabases();

describe.each(databases.eachSupportedId())(
  'DatabaseClusterStore (%s)',
  databaseId => {
    const createStore = () => createTestStores(databases, databaseId);

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

    it('upserts discovered clusters: inserts new ones, updates ref and context of the same API server, leaves manual ones alone', async () => {
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
          endpoint: 'https://a:1',
          kubeconfigRef: '/k/new-a.yaml',
          context: 'a2',
        },
      ]);
      expect(second).toEqual({ inserted: [], updated: ['a'], failed: [] });
      expect(await stores.clusters.getCluster('a')).toMatchObject({
        endpoint: 'https://a:1',
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
          endpoint: 'https://a:1',
          kubeconfigRef: '/k/new-a.yaml',
          context: 'a2',
        },
      ]);
      expect(third).toEqual({ inserted: [], updated: [], failed: [] });
    });

    it('refuses a second registration of one API server (server URL and CA) under another name: 409 naming the cluster that holds it', async () => {
      const { stores } = await createStore();
      await stores.clusters.upsertDiscoveredClusters([
        {
          name: 'prod',
          endpoint: 'https://prod.example:6443',
          kubeconfigRef: '/k/prod.yaml',
          context: 'prod',
          identityCa: 'sha256:aa',
        },
      ]);
      const again = (endpoint: string, identityCa?: string) =>
        stores.clusters.insertCluster({
          name: 'prod-too',
          endpoint,
          kubeconfigRef: '/k/prod.yaml',
          source: 'manual',
          labels: { env: 'staging' },
          identityCa,
        });
      for (const [endpoint, ca] of [
        ['https://prod.example:6443', 'sha256:aa'],
        ['https://PROD.example:6443/', 'sha256:aa'],
        // A kubeconfig that cannot be read: the endpoint alone is the identity.
        ['https://prod.example:6443', undefined],
      ] as const) {
        await expect(again(endpoint, ca)).rejects.toMatchObject({
          name: 'ConflictError',
          message: expect.stringContaining(
            "is already registered as cluster 'prod'",
          ),
        });
      }
      expect(await stores.clusters.getCluster('prod-too')).toBeUndefined();
      // Another CA at the same URL is another API server.
      await expect(
        again('https://prod.example:6443', 'sha256:bb'),
      ).resolves.toMatchObject({ name: 'prod-too' });
      // And a registration whose CA is unknown may not take a URL that is taken at all.
      await expect(
        stores.clusters.insertCluster({
          name: 'unknown-ca',
          endpoint: 'https://prod.example:6443',
          kubeconfigRef: 'vault:prod',
          source: 'manual',
        }),
      ).rejects.toMatchObject({ name: 'ConflictError' });
    });

    it('refuses a manual cluster whose endpoint is a known API server written another way: 409 naming it', async () => {
      const { stores } = await createStore();
      await stores.clusters.insertCluster({
        name: 'sim-1',
        endpoint: 'https://127.0.0.1:6550/clusters/sim-1',
        kubeconfigRef: '/k/sim-1.yaml',
        source: 'manual',
        identityCa: 'sha256:aa',
      });
      for (const alias of [
        'https://localhost:6550/clusters/sim-1',
        'https://[::ffff:127.0.0.1]:6550/clusters/sim-1',
        'https://[::1]:6550/clusters/sim-1',
        'https://127.0.0.1:6550//clusters/sim-1',
        'https://127.0.0.1:6550/clusters/sim-1/',
        'https://LOCALHOST.:6550/clusters/./sim-1',
        'https://127.0.0.1:6550/clusters/sim%2D1',
      ]) {
        await expect(
          stores.clusters.insertCluster({
            name: 'sim-1-twin',
            endpoint: alias,
            kubeconfigRef: 'vault:twin',
            source: 'manual',
          }),
        ).rejects.toMatchObject({
          name: 'ConflictError',
          message: expect.stringContaining(
            "is already registered as cluster 'sim-1'",
          ),
        });
      }
      expect(await stores.clusters.getCluster('sim-1-twin')).toBeUndefined();
      // Another path on the same host is another cluster (paths are case-sensitive).
      await expect(
        stores.clusters.insertCluster({
          name: 'sim-1-upper',
          endpoint: 'https://127.0.0.1:6550/clusters/SIM-1',
          kubeconfigRef: 'vault:upper',
          source: 'manual',
        }),
      ).resolves.toMatchObject({ name: 'sim-1-upper' });
    });

    it('never re-points a discovered cluster at another API server', async () => {
      const { stores } = await createStore();
      const prod = {
        name: 'prod',
        endpoint: 'https://prod.example:6443',
        kubeconfigRef: '/k/prod.yaml',
        context: 'prod',
        identityCa: 'sha256:aa',
      };
      await stores.clusters.upsertDiscoveredClusters([prod]);
      const result = await stores.clusters.upsertDiscoveredClusters([
        {
          ...prod,
          endpoint: 'https://lab.example:6443',
          identityCa: 'sha256:bb',
        },
      ]);
      expect(result).toMatchObject({
        updated: [],
        failed: [
          { name: 'prod', message: expect.stringContaining('not re-pointed') },
        ],
      });
      expect(await stores.clusters.getCluster('prod')).toMatchObject({
        endpoint: 'https://prod.example:6443',
      });
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
      ).toMatchObject({ failureThreshold: null });
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
          null,
          'UNKNOWN',
          'NEVER_PROBED',
          'Cluster registered (manual)',
        ],
      ]);
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

    it("lists only the clusters of the names given, in name order, also past one statement's parameters", async () => {
      const { stores } = await createStore();
      for (const name of ['c', 'a', 'b']) {
        await stores.clusters.insertCluster({
          name,
          endpoint: `https://${name}`,
          kubeconfigRef: `/k/${name}.yaml`,
          source: 'manual',
        });
      }
      const names = async (
        filter: Parameters<typeof stores.clusters.listClusters>[0],
      ) => (await stores.clusters.listClusters(filter)).map(c => c.name);
      expect(await names({ names: ['c', 'a', 'gone', 'a'] })).toEqual([
        'a',
        'c',
      ]);
      expect(await names({ names: [] })).toEqual([]);
      expect(await names({ names: ['b'], status: 'ONLINE' })).toEqual([]);
      expect(await names({ names: ['b'], status: 'UNKNOWN' })).toEqual(['b']);
      // More names than one statement binds: read in parts, still in name order.
      const many = Array.from({ length: 1200 }, (_, i) => `x-${i}`);
      expect(await names({ names: [...many, 'c', 'b'] })).toEqual(['b', 'c']);
      expect(await names({})).toEqual(['a', 'b', 'c']);
    });
  },
);
