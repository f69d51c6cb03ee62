/*
 * The Kubernetes tab with a cluster that accepts connections and never answers: the real
 * Kubernetes backend plugin, fed by this module from a real Fleet backend, against simulated
 * clusters over HTTPS. The tab's call answers once the per-cluster deadline is past, with the
 * other clusters' pods and an error naming the silent cluster; once Fleet's probe of that cluster
 * has failed, the tab does not ask it at all.
 */
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { createTestDatabases, useSimulator } from '@cnp/fleet-harness';
// eslint-disable-next-line @backstage/no-mixed-plugin-imports
import fleetPlugin from '@cnp/plugin-fleet-backend';
import kubernetesPlugin from '@backstage/plugin-kubernetes-backend';
import request from 'supertest';
import kubernetesModuleFleetClusters from './index';

jest.setTimeout(90_000);

/**
 * The deadline each cluster has here (kubernetes.fleet.requestTimeout): long enough for the
 * answering clusters on a loaded machine.
 */
const DEADLINE_MS = 5_000;
/**
 * A bound the tab's call must answer within: the deadline and a generous margin for a loaded
 * machine. Without a deadline the call never answers (the silent cluster holds it open).
 */
const ANSWER_BOUND_MS = DEADLINE_MS + 10_000;

const databases = createTestDatabases();
const sim = useSimulator({
  clusters: ['east', 'west', 'north'],
  readyDelayMs: 100,
});

const entity = {
  apiVersion: 'backstage.io/v1alpha1',
  kind: 'Component',
  metadata: {
    name: 'shop',
    namespace: 'default',
    annotations: { 'backstage.io/kubernetes-id': 'shop' },
  },
  spec: { type: 'service', lifecycle: 'production', owner: 'team-a' },
};

async function start(knex: Awaited<ReturnType<typeof databases.init>>) {
  const { server } = await startTestBackend({
    features: [
      fleetPlugin,
      kubernetesPlugin,
      kubernetesModuleFleetClusters,
      mockServices.database.factory({ knex }),
      mockServices.scheduler.factory(),
      mockServices.rootConfig.factory({
        data: {
          fleet: {
            discovery: { kubeconfigDir: sim.kubeconfigDir },
            health: {
              // Generous: a slow probe on a loaded machine must not fail a healthy cluster.
              probeTimeout: { seconds: 5 },
              // A failed probe leaves the cluster ONLINE in its grace period: an outage is
              // confirmed only after three.
              failureThreshold: 3,
              minOutage: { seconds: 0 },
              manualMinInterval: { seconds: 0 },
            },
            deploy: { pollInterval: { milliseconds: 100 } },
          },
          kubernetes: {
            serviceLocatorMethod: { type: 'multiTenant' },
            clusterLocatorMethods: [],
            objectTypes: ['pods', 'services', 'deployments', 'replicasets'],
            fleet: {
              refreshInterval: { milliseconds: 1 },
              skipMetricsLookup: true,
              requestTimeout: { milliseconds: DEADLINE_MS },
            },
          },
        },
      }),
      catalogServiceMock.factory({ entities: [entity] }),
    ],
  });
  return server;
}

async function waitFor(check: () => Promise<boolean> | boolean) {
  for (let i = 0; i < 300 && !(await check()); i++) {
    await new Promise(r => setTimeout(r, 50));
  }
  expect(await check()).toBe(true);
}

type Server = Awaited<ReturnType<typeof start>>;

/** The tab's call, and how long it took to answer (it must answer at all). */
async function tab(server: Server) {
  const started = Date.now();
  const response = await request(server)
    .post('/api/kubernetes/services/shop')
    .send({ entity })
    .timeout(ANSWER_BOUND_MS + 5_000)
    .expect(200);
  const byCluster = new Map<string, any>(
    response.body.items.map((item: any) => [item.cluster.name, item]),
  );
  return { byCluster, elapsedMs: Date.now() - started };
}

function pods(item: any): any[] {
  return item.resources.find((r: any) => r.type === 'pods').resources;
}

describe.each(databases.eachSupportedId())(
  'The Kubernetes tab with a silent cluster (%s)',
  databaseId => {
    it('answers by the per-cluster deadline with the other clusters and an error naming the silent one; skips a cluster Fleet saw failing', async () => {
      const server = await start(await databases.init(databaseId));
      await request(server).post('/api/fleet/health/run').expect(200);
      await request(server)
        .post('/api/fleet/applications')
        .send({
          entityRef: 'component:default/shop',
          spec: { image: 'shop:1.0', replicas: 2 },
        })
        .expect(201);
      for (const cluster of ['east', 'west', 'north']) {
        await request(server)
          .post('/api/fleet/deployments')
          .send({
            entityRef: 'component:default/shop',
            cluster,
            image: 'shop:1.0',
            replicas: 2,
          })
          .expect(201);
      }
      await waitFor(async () => {
        const list = await request(server)
          .get('/api/fleet/deployments?entityRef=component:default/shop')
          .expect(200);
        return (
          list.body.items.length === 3 &&
          list.body.items.every((d: any) => d.status === 'DEPLOYED')
        );
      });
      const healthy = await tab(server);
      expect([...healthy.byCluster.keys()].sort()).toEqual([
        'east',
        'north',
        'west',
      ]);

      // north accepts connections and never answers; Fleet has not probed it since.
      sim.setFault('north', { mode: 'timeout' });
      const silent = await tab(server);
      expect(silent.elapsedMs).toBeLessThan(ANSWER_BOUND_MS);
      expect([...silent.byCluster.keys()].sort()).toEqual([
        'east',
        'north',
        'west',
      ]);
      for (const name of ['east', 'west']) {
        const item = silent.byCluster.get(name);
        expect(item.errors).toEqual([]);
        expect(pods(item)).toHaveLength(2);
        expect(pods(item).map((p: any) => p.status.phase)).toEqual([
          'Running',
          'Running',
        ]);
      }
      const north = silent.byCluster.get('north');
      expect(north.resources).toEqual([]);
      expect(north.errors).toEqual([
        {
          errorType: 'FETCH_ERROR',
          message: expect.stringContaining(
            "Cluster 'north' did not answer within 5 s (kubernetes.fleet.requestTimeout): /api/v1/pods",
          ),
        },
      ]);
      // The requests past the deadline were cancelled, not left open on the silent cluster.
      await waitFor(() => sim.heldRequestCount('north') === 0);

      // Fleet's probe of north fails: still ONLINE (1 of 3 failures), but the tab no longer
      // asks it and says why at once.
      await request(server).post('/api/fleet/health/run').expect(200);
      const record = await request(server)
        .get('/api/fleet/clusters/north')
        .expect(200);
      expect(record.body).toMatchObject({
        status: 'ONLINE',
        consecutiveFailures: 1,
      });
      await waitFor(() => sim.heldRequestCount('north') === 0);
      const asked = sim.requestCount('north');
      const failing = await tab(server);
      expect(sim.requestCount('north')).toBe(asked);
      expect(failing.elapsedMs).toBeLessThan(ANSWER_BOUND_MS);
      expect(failing.byCluster.get('north')).toMatchObject({
        resources: [],
        errors: [
          {
            errorType: 'FETCH_ERROR',
            message: expect.stringMatching(
              /^Cluster 'north' was not asked: Fleet's latest health probe of it failed \(1 in a row, last at /,
            ),
          },
        ],
      });
      expect(pods(failing.byCluster.get('east'))).toHaveLength(2);
      expect(pods(failing.byCluster.get('west'))).toHaveLength(2);

      // Back: once Fleet's probe succeeds, the tab asks north again.
      sim.setFault('north', { mode: 'ok' });
      await request(server).post('/api/fleet/health/run').expect(200);
      const back = await tab(server);
      expect(back.byCluster.get('north').errors).toEqual([]);
      expect(pods(back.byCluster.get('north'))).toHaveLength(2);
    });
  },
);

describe('kubernetes.fleet.requestTimeout at startup', () => {
  it('stops the backend with a message naming the key when the value is bad', async () => {
    await expect(
      startTestBackend({
        features: [
          kubernetesPlugin,
          kubernetesModuleFleetClusters,
          mockServices.rootConfig.factory({
            data: {
              kubernetes: {
                serviceLocatorMethod: { type: 'multiTenant' },
                clusterLocatorMethods: [],
                fleet: { requestTimeout: '0s' },
              },
            },
          }),
        ],
      }),
    ).rejects.toThrow(
      'Invalid config value kubernetes.fleet.requestTimeout: must be above 0 and at most 10 minutes',
    );
  });
});
