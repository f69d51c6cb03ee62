/*
 * Live state from watches, against the kube simulator through client-node (list, watch, 410
 * Gone, server-side timeouts, dropped connections, a kind the cluster forbids listing).
 */
import { mockServices } from '@backstage/backend-test-utils';
import {
  AppsV1Api,
  AutoscalingV2Api,
  CoreV1Api,
  KubeConfig,
} from '@kubernetes/client-node';
import { useSimulator, type KubeSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import { createFleet } from '../testing/fleet';
import type { ClusterRecord } from '../database/types';
import { buildManifests, type Manifests } from '../deploy/manifests';
import { ManifestApplier } from '../deploy/ManifestApplier';
import type { ClusterClients } from '../kubernetes/ClusterClients';
import { ClusterWatches, matters, type ObjectChange } from './ClusterWatches';

jest.setTimeout(60_000);

const databases = createTestDatabases();
const namespace = 'live';

async function until<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(r => setTimeout(r, 20));
  }
}

function manifestsFor(name: string): Manifests {
  return buildManifests({
    name,
    entityRef: `component:default/${name}`,
    namespace,
    spec: { image: 'nginx:1.27' },
    defaultReplicas: 1,
  });
}

function apiOn(sim: KubeSimulator, cluster: string) {
  const kc = new KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath(cluster));
  return {
    apps: kc.makeApiClient(AppsV1Api),
    core: kc.makeApiClient(CoreV1Api),
    hpa: kc.makeApiClient(AutoscalingV2Api),
  };
}

/** Fleet's objects for `name` on `cluster`, as a deploy applies them. */
async function appliedOn(
  sim: KubeSimulator,
  cluster: string,
  name: string,
): Promise<Manifests> {
  const m = manifestsFor(name);
  const { apps, core } = apiOn(sim, cluster);
  await core
    .createNamespace({ body: { metadata: { name: namespace } } })
    .catch(() => undefined);
  await apps.createNamespacedDeployment({ namespace, body: m.deployment });
  await core.createNamespacedService({ namespace, body: m.service });
  return m;
}

// Each database its own simulator: the tests apply objects of fixed names.
describe.each(databases.eachSupportedId())(
  'ClusterWatches (%s)',
  databaseId => {
    const sim = useSimulator({
      clusters: ['east', 'west'],
      readyDelayMs: 50,
      watch: { bookmarkIntervalMs: 200, controllerTickMs: 50 },
    });
    const api = (cluster: string) => apiOn(sim, cluster);
    const applied = (cluster: string, name: string) =>
      appliedOn(sim, cluster, name);
    let clusters: ClusterRecord[];
    let clients: ClusterClients;
    const started: ClusterWatches[] = [];
    afterEach(() => started.splice(0).forEach(w => w.stop()));

    beforeAll(async () => {
      const harness = await createFleet({
        knex: await databases.init(databaseId),
        kubeconfigDir: sim.kubeconfigDir,
        logger: mockServices.logger.mock(),
      });
      await harness.worker.runCycle();
      clusters = await harness.stores.clusters.listClusters();
      clients = harness.clients;
    });

    function watches(timings: Record<string, number> = {}) {
      const changes: ObjectChange[] = [];
      const applier = ManifestApplier.create({ clients });
      const reads = jest.spyOn(applier, 'readLive');
      const w = ClusterWatches.create({
        clients,
        applier,
        logger: mockServices.logger.mock(),
        onChange: c => changes.push(c),
        timings: { backoffMs: 50, maxBackoffMs: 200, ...timings },
      });
      started.push(w);
      return { w, changes, reads };
    }
    const cluster = (name: string) => clusters.find(c => c.name === name)!;
    const liveImage = async (w: ClusterWatches, c: string, m: Manifests) => {
      const live = await w.readLive(cluster(c), namespace, m);
      return live.kind === 'read'
        ? live.deployment?.spec?.template.spec?.containers[0].image
        : undefined;
    };

    it('answers reads from memory once synced, and reports a change of spec, not of status', async () => {
      const m = await applied('east', 'mem');
      const { apps } = api('east');
      // Ready before the watches start: from then on, its status only moves on without mattering.
      await until('mem available', async () => {
        const d = await apps.readNamespacedDeployment({
          namespace,
          name: 'mem',
        });
        return (d.status?.availableReplicas ?? 0) >= 1;
      });
      const { w, changes, reads } = watches();
      w.setClusters(clusters);
      await until('east watched', () => w.watching('east'));
      expect(await liveImage(w, 'east', m)).toBe('nginx:1.27');
      // Bookmarks and the simulator's controller ticks (status writes) pass: nothing is reported.
      await new Promise(r => setTimeout(r, 500));
      expect(changes).toEqual([]);
      sim.drift('east', {
        kind: 'Deployment',
        namespace,
        name: 'mem',
        patch: { metadata: { labels: { extra: 'x' } } },
      });
      await until('the change', () =>
        changes.find(c => c.cluster === 'east' && c.name === 'mem'),
      );
      expect(changes).toEqual([
        {
          cluster: 'east',
          namespace,
          name: 'mem',
          entityRef: 'component:default/mem',
        },
      ]);
      // The cache holds the change: read from memory, not from the API.
      const live = await w.readLive(cluster('east'), namespace, m);
      expect(
        live.kind === 'read'
          ? live.deployment?.metadata?.labels?.extra
          : 'none',
      ).toBe('x');
      expect(reads).not.toHaveBeenCalled();
    });

    it("opens a cluster's watches as streams on one HTTP/2 connection, and watches again when it breaks", async () => {
      const { w } = watches();
      clients.closeIdleConnections();
      const connectionsBefore = sim.connectionCount();
      w.setClusters(clusters);
      await until('west watched', () => w.watching('west'));
      await until('east watched', () => w.watching('east'));
      // Five kinds: five watches, one connection, none of the pool's sockets held
      await until('five watches', () => sim.openWatches('west') === 5);
      expect(sim.watchConnections('west')).toBe(1);
      // The lists went over that connection too: one TLS connection per cluster in all
      expect(sim.connectionCount() - connectionsBefore).toBe(clusters.length);
      const loaded = await clients.kubeConfigFor(cluster('west'));
      if (loaded.kind !== 'ok' || !loaded.agent) throw new Error('no pool');
      expect(Object.values(loaded.agent.sockets).flat()).toHaveLength(0);
      // The cluster goes down for a moment: the connection drops with every stream on it
      sim.setFault('west', { mode: 'down' });
      await until('watches gone', () => sim.openWatches('west') === 0);
      sim.setFault('west', { mode: 'ok' });
      await until('five watches again', () => sim.openWatches('west') === 5);
      expect(sim.watchConnections('west')).toBe(1);
      await until('west watched again', () => w.watching('west'));
    });

    it("probes a watched cluster on its watches' connection, and on the pool once they stop", async () => {
      const { w } = watches();
      w.setClusters(clusters);
      await until('east watched', () => w.watching('east'));
      clients.closeIdleConnections();
      const loaded = await clients.kubeConfigFor(cluster('east'));
      if (loaded.kind !== 'ok' || !loaded.agent) throw new Error('no pool');
      const pooled = () =>
        [
          ...Object.values(loaded.agent!.sockets),
          ...Object.values(loaded.agent!.freeSockets),
        ].flat().length;
      const requests = sim.requestCount('east', '/api/v1/namespaces');
      // no version stored: /version is asked too
      const probed = await clients.probe(
        { ...cluster('east'), serverVersion: null },
        2_000,
      );
      expect(probed).toMatchObject({
        kind: 'success',
        serverVersion: expect.stringMatching(/^v1\./),
      });
      expect(sim.requestCount('east', '/api/v1/namespaces')).toBe(requests + 1);
      expect(pooled()).toBe(0); // no TLS connection of its own
      // a status other than 2xx is told as over the pool
      sim.setFault('east', { mode: 'error' });
      expect(await clients.probe(cluster('east'), 2_000)).toMatchObject({
        kind: 'failure',
        message: expect.stringMatching(/^HTTP 500/),
      });
      // a cluster that stops answering: the probe times out as over the pool
      sim.setFault('east', { mode: 'timeout' });
      expect(await clients.probe(cluster('east'), 300)).toMatchObject({
        kind: 'failure',
        message: 'timed out after 300 ms',
      });
      sim.setFault('east', { mode: 'ok' });
      expect(pooled()).toBe(0);
      w.stopCluster('east');
      expect((await clients.probe(cluster('east'), 2_000)).kind).toBe(
        'success',
      );
      expect(pooled()).toBeGreaterThanOrEqual(1); // the pool's connections
    });

    it('tells spec changes and health changes from status-only ones', () => {
      const base = {
        metadata: { name: 'a', namespace, resourceVersion: '1' },
        spec: { replicas: 2 },
        status: { availableReplicas: 2, observedGeneration: 1 },
      };
      const statusOnly = {
        ...base,
        metadata: { ...base.metadata, resourceVersion: '2' },
        status: { availableReplicas: 2, observedGeneration: 2 },
      };
      const unhealthy = { ...base, status: { availableReplicas: 1 } };
      const respec = { ...base, spec: { replicas: 3 } };
      expect(matters('deployment', base, statusOnly)).toBe(false);
      expect(matters('deployment', base, unhealthy)).toBe(true);
      expect(matters('deployment', base, respec)).toBe(true);
      expect(matters('service', base, unhealthy)).toBe(false);
      expect(matters('service', base, undefined)).toBe(true);
      // listed through client-node (a Date, written with milliseconds), then seen by a watch
      const listed = {
        ...base,
        metadata: {
          ...base.metadata,
          creationTimestamp: '2026-12-02T03:00:00.000Z',
        },
      };
      const watched = {
        ...statusOnly,
        metadata: {
          ...statusOnly.metadata,
          creationTimestamp: '2026-12-02T03:00:00Z',
        },
      };
      expect(matters('deployment', listed as any, watched as any)).toBe(false);
    });

    it('lists again after a 410 Gone and reports what changed while it was not watching', async () => {
      const m = await applied('west', 'gone');
      const { w, changes } = watches();
      w.setClusters(clusters);
      await until('west watched', () => w.watching('west'));
      const lists = w.lists('west');
      await until('west has open watches', () => sim.openWatches('west') >= 5);
      // The cluster stops answering: the open watches go silent, and miss what follows.
      sim.setFault('west', { mode: 'timeout' });
      await new Promise(r => setTimeout(r, 100));
      sim.setFault('west', { mode: 'ok' });
      sim.drift('west', {
        kind: 'Deployment',
        namespace,
        name: 'gone',
        patch: {
          spec: {
            template: {
              spec: { containers: [{ name: 'gone', image: 'nginx:9' }] },
            },
          },
        },
      });
      // The history they would resume from is gone, and their connections are dropped.
      sim.expireWatchHistory('west');
      expect(sim.dropWatches('west')).toBeGreaterThanOrEqual(5);
      await until('the relist', () => w.lists('west') > lists);
      await until('west watched again', () => w.watching('west'));
      await until('the missed change', () =>
        changes.find(c => c.cluster === 'west' && c.name === 'gone'),
      );
      expect(await liveImage(w, 'west', m)).toBe('nginx:9');
    });

    it('watches again from where it was when the server ends a watch (its timeout), without listing', async () => {
      const m = await applied('east', 'timed');
      const { w } = watches({ watchTimeoutSeconds: 1 });
      w.setClusters(clusters);
      await until('east watched', () => w.watching('east'));
      const lists = w.lists('east');
      // Past the server's timeout (1 to 2 s): every watch was ended and opened again.
      await new Promise(r => setTimeout(r, 2_500));
      sim.drift('east', {
        kind: 'Deployment',
        namespace,
        name: 'timed',
        patch: {
          spec: {
            template: {
              spec: { containers: [{ name: 'timed', image: 'nginx:2' }] },
            },
          },
        },
      });
      await until(
        'the change after the rewatch',
        async () => (await liveImage(w, 'east', m)) === 'nginx:2',
      );
      expect(w.lists('east')).toBe(lists);
    });

    it('keeps the HPAs per cluster: which Deployments they scale, reported as a change of those', async () => {
      const m = await applied('east', 'scaled');
      const { w, changes, reads } = watches();
      w.setClusters(clusters);
      await until('east watched', () => w.watching('east'));
      const autoscaled = async () => {
        const live = await w.readLive(cluster('east'), namespace, m);
        return live.kind === 'read' && live.autoscaled;
      };
      expect(await autoscaled()).toBe(false);
      await api('east').hpa.createNamespacedHorizontalPodAutoscaler({
        namespace,
        body: {
          metadata: { name: 'scaler' },
          spec: {
            scaleTargetRef: {
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              name: 'scaled',
            },
            minReplicas: 1,
            maxReplicas: 5,
          },
        },
      });
      await until('the HPA seen', () => autoscaled());
      expect(changes).toContainEqual({
        cluster: 'east',
        namespace,
        name: 'scaled',
      });
      expect(reads).not.toHaveBeenCalled();
    });

    it('reads a kind the cluster forbids listing from the API, and keeps the others from memory', async () => {
      sim.denyClusterScope('west', 'ingresses.networking.k8s.io');
      try {
        const m = buildManifests({
          name: 'fenced',
          entityRef: 'component:default/fenced',
          namespace,
          spec: {
            image: 'nginx:1.27',
            ingress: { host: 'fenced.example.com' },
          },
          defaultReplicas: 1,
        });
        expect(m.ingress).toBeDefined();
        await applied('west', 'fenced');
        const { w, changes, reads } = watches();
        w.setClusters(clusters);
        await until('the others synced', () => w.watching('east'));
        // west is not fully watched: its changes are not all reported, so the reconcile keeps
        // reading its deployments at each run; its other kinds still answer from memory.
        await new Promise(r => setTimeout(r, 300));
        expect(w.watching('west')).toBe(false);
        const live = await w.readLive(cluster('west'), namespace, m);
        expect(live).toMatchObject({ kind: 'read', ingress: undefined });
        expect(live.kind === 'read' && live.deployment?.metadata?.name).toBe(
          'fenced',
        );
        expect(reads).toHaveBeenCalledTimes(1);
        const known = reads.mock.calls[0][3]?.known;
        expect(
          Object.entries(known ?? {})
            .filter(([, v]) => v !== undefined)
            .map(([k]) => k)
            .sort(),
        ).toEqual(
          ['autoscaled', 'deployment', 'podDisruptionBudget', 'service'].filter(
            k => k !== 'podDisruptionBudget' || m.podDisruptionBudget,
          ),
        );
        expect(known?.ingress).toBeUndefined();
        // a change of a kind it can watch is still reported
        sim.drift('west', {
          kind: 'Service',
          namespace,
          name: 'fenced',
          patch: { metadata: { labels: { extra: 'y' } } },
        });
        await until('the Service change', () =>
          changes.find(c => c.cluster === 'west' && c.name === 'fenced'),
        );
      } finally {
        sim.denyClusterScope('west', 'ingresses.networking.k8s.io', false);
      }
    });

    it('stops the watches of a cluster that is no longer ONLINE, and of a health transition away from ONLINE', async () => {
      const { w } = watches();
      w.setClusters(clusters);
      await until(
        'both watched',
        () => w.watching('east') && w.watching('west'),
      );
      await until('west has open watches', () => sim.openWatches('west') >= 5);
      w.setClusters(
        clusters.map(c =>
          c.name === 'west' ? { ...c, status: 'OFFLINE' as const } : c,
        ),
      );
      expect(w.clusters()).toEqual(['east']);
      expect(w.watching('west')).toBe(false);
      await until('west watches closed', () => sim.openWatches('west') === 0);
      w.healthCycleFinished({
        transitions: [
          { cluster: 'east', from: 'ONLINE', to: 'OFFLINE', reason: '' },
        ],
      } as any);
      expect(w.clusters()).toEqual([]);
      await until('east watches closed', () => sim.openWatches('east') === 0);
    });
  },
);

describe.each(databases.eachSupportedId())(
  'ClusterWatches against a server without HTTP/2 (%s)',
  databaseId => {
    const old = useSimulator({
      clusters: ['old'],
      readyDelayMs: 50,
      http2: false,
      watch: { bookmarkIntervalMs: 200, controllerTickMs: 50 },
    });

    it('watches over HTTP/1.1, a connection per watch, through the pool', async () => {
      const harness = await createFleet({
        knex: await databases.init(databaseId),
        kubeconfigDir: old.kubeconfigDir,
        logger: mockServices.logger.mock(),
      });
      await harness.worker.runCycle();
      const records = await harness.stores.clusters.listClusters();
      const w = ClusterWatches.create({
        clients: harness.clients,
        applier: ManifestApplier.create({ clients: harness.clients }),
        logger: mockServices.logger.mock(),
        timings: { backoffMs: 50, maxBackoffMs: 200 },
      });
      try {
        w.setClusters(records);
        await until('old watched', () => w.watching('old'));
        await until('five watches', () => old.openWatches('old') === 5);
        expect(old.watchConnections('old')).toBe(5);
        const loaded = await harness.clients.kubeConfigFor(records[0]);
        if (loaded.kind !== 'ok' || !loaded.agent) throw new Error('no pool');
        expect(
          Object.values(loaded.agent.sockets).flat().length,
        ).toBeGreaterThanOrEqual(5);
      } finally {
        w.stop();
      }
    });
  },
);
