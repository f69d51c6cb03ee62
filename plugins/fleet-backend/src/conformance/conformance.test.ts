import { schedulerServiceFactory } from '@backstage/backend-defaults/scheduler';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { AppsV1Api, CoreV1Api, PatchStrategy } from '@kubernetes/client-node';
import { setHeaderOptions } from '@kubernetes/client-node';
import request from 'supertest';
import { fleetPlugin } from '../plugin';
import { createTestDatabases } from '../testing/databases';
import { useConformanceCluster } from '../__testUtils__/conformanceCluster';

/*
 * Fleet's conformance suite: apply, drift, watch and canary against one cluster, the one
 * FLEET_CONFORMANCE_KUBECONFIG names (a real kind or k3s cluster) or else the kube simulator
 * (`yarn test:conformance`; docs/development.md says how to run it on kind). Everything goes
 * through Fleet's HTTP API; the tests read and change the live objects as another tool on the
 * cluster would, with their own field manager.
 */

jest.setTimeout(180_000);

const cluster = useConformanceCluster();
const databases = createTestDatabases();
const OTHER_MANAGER = 'conformance-other-tool';

type Server = Awaited<ReturnType<typeof startTestBackend>>['server'];

async function until<T>(
  what: string,
  read: () => Promise<T>,
  ok: (value: T) => boolean,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!ok(value)) {
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting for ${what}: last seen ${JSON.stringify(value)}`,
      );
    }
    await new Promise(r => setTimeout(r, 100));
    value = await read();
  }
  return value;
}

describe(`conformance against ${
  cluster.simulated ? 'the kube simulator' : 'FLEET_CONFORMANCE_KUBECONFIG'
}`, () => {
  let server: Server;
  let stop: () => Promise<void>;
  const apps = () => cluster.kubeConfig.makeApiClient(AppsV1Api);
  const core = () => cluster.kubeConfig.makeApiClient(CoreV1Api);
  const created: string[] = [];

  beforeAll(async () => {
    const backend = await startTestBackend({
      features: [
        fleetPlugin,
        mockServices.database.factory({
          knex: await databases.init('SQLITE_3'),
        }),
        mockServices.rootConfig.factory({
          data: {
            fleet: {
              discovery: { kubeconfigDir: cluster.kubeconfigDir },
              health: { probeTimeout: { seconds: 5 } },
              deploy: { namespace: cluster.namespace },
              // Only the watches can see a change between two runs this far apart.
              reconcile: {
                watch: true,
                interval: { minutes: 30 },
                resyncInterval: { minutes: 30 },
              },
            },
          },
        }),
        schedulerServiceFactory,
        catalogServiceMock.factory({ entities: [] }),
      ],
    });
    server = backend.server;
    stop = () => backend.stop();
    await request(server).post('/api/fleet/health/run').expect(200);
    const listed = await request(server).get(
      `/api/fleet/clusters/${cluster.name}`,
    );
    if (listed.body.status !== 'ONLINE') {
      throw new Error(
        `Fleet does not see the cluster ${
          cluster.name
        } ONLINE: ${JSON.stringify(listed.body)}`,
      );
    }
  });

  afterAll(async () => {
    // Undeploy what the suite deployed, so a real cluster is left as it was.
    const undeploy = async (id: string) => {
      await request(server).delete(`/api/fleet/deployments/${id}`);
      await until(
        `deployment ${id} undeployed`,
        async () =>
          (
            await request(server).get(`/api/fleet/deployments/${id}`)
          ).status,
        status => status === 404,
      ).catch(() => undefined);
    };
    await Promise.all(created.map(undeploy));
    await stop?.();
  });

  async function deploy(name: string, image = cluster.images[0]) {
    const entityRef = `component:default/${name}`;
    const res = await request(server)
      .post('/api/fleet/deployments')
      .send({ entityRef, cluster: cluster.name, image, replicas: 2 })
      .expect(201);
    created.push(res.body.id);
    const deployment = await until(
      `${name} DEPLOYED`,
      async () =>
        (
          await request(server).get(`/api/fleet/deployments/${res.body.id}`)
        ).body,
      d => d.status === 'DEPLOYED' || d.status === 'FAILED',
      120_000,
    );
    expect(deployment).toMatchObject({ status: 'DEPLOYED' });
    return { id: res.body.id as string, entityRef, name };
  }

  const readDeployment = async (id: string) =>
    (await request(server).get(`/api/fleet/deployments/${id}`).expect(200))
      .body;

  it('applies: the live Deployment runs what Fleet sent, and applying it again changes nothing', async () => {
    const { id, name } = await deploy('conf-apply');
    const live = await apps().readNamespacedDeployment({
      name,
      namespace: cluster.namespace,
    });
    expect(live.spec?.replicas).toBe(2);
    expect(live.spec?.template.spec?.containers[0].image).toBe(
      cluster.images[0],
    );
    expect(live.metadata?.labels?.['app.kubernetes.io/managed-by']).toBe(
      'fleet',
    );
    expect(live.status?.readyReplicas).toBe(2);
    const generation = live.metadata?.generation;

    // The same spec again: a new revision, the same object.
    await request(server)
      .post('/api/fleet/deployments')
      .send({
        entityRef: `component:default/${name}`,
        cluster: cluster.name,
        image: cluster.images[0],
        replicas: 2,
      })
      .expect(201);
    await until(
      'the second apply',
      () => readDeployment(id),
      d => d.status === 'DEPLOYED',
    );
    const again = await apps().readNamespacedDeployment({
      name,
      namespace: cluster.namespace,
    });
    expect(again.metadata?.generation).toBe(generation);
  });

  it('sees drift on the fields Fleet sets, and none on a field another tool adds', async () => {
    const { id, name } = await deploy('conf-drift');
    const patch = (body: object) =>
      apps().patchNamespacedDeployment(
        {
          name,
          namespace: cluster.namespace,
          body,
          fieldManager: OTHER_MANAGER,
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    // Another tool's annotation is not Fleet's: no drift.
    await patch({
      metadata: { annotations: { 'conformance.cnp.io/touched': 'yes' } },
    });
    await new Promise(r => setTimeout(r, 3_000));
    expect(await readDeployment(id)).toMatchObject({ syncStatus: 'SYNCED' });

    // A field Fleet sets, changed behind its back, is drift, named by its path.
    await patch({ spec: { replicas: 1 } });
    const drifted = await until(
      'drift seen',
      () => readDeployment(id),
      d => d.syncStatus === 'OUT_OF_SYNC',
    );
    expect(drifted.syncDifferences).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'Deployment', name }),
      ]),
    );
    expect(JSON.stringify(drifted.syncDifferences)).toContain('replicas');
  });

  it('watches: a Service deleted behind Fleet is seen without waiting for the next reconcile', async () => {
    const { id, name } = await deploy('conf-watch');
    const services = await core().listNamespacedService({
      namespace: cluster.namespace,
      labelSelector: `app.kubernetes.io/name=${name}`,
    });
    expect(services.items).toHaveLength(1);
    const serviceName = services.items[0].metadata!.name!;
    await core().deleteNamespacedService({
      name: serviceName,
      namespace: cluster.namespace,
    });
    // The reconcile runs every 30 minutes here: only a watch can tell Fleet in time.
    const seen = await until(
      'the deletion seen',
      () => readDeployment(id),
      d => d.syncStatus === 'OUT_OF_SYNC',
      30_000,
    );
    expect(seen.syncDifferences).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'Service', name: serviceName }),
      ]),
    );
  });

  it('runs a canary: the new image serves beside the old at the pause, and alone once promoted', async () => {
    const { entityRef, name } = await deploy('conf-canary');
    const [application] = (
      await request(server)
        .get(`/api/fleet/applications?entityRef=${entityRef}`)
        .expect(200)
    ).body.items;
    const release = await request(server)
      .post(`/api/fleet/applications/${application.id}/releases`)
      .send({
        image: cluster.images[1],
        strategy: { canary: { steps: [{ setWeight: 50 }, { pause: {} }] } },
      })
      .expect(201);
    const read = async () =>
      (
        await request(server)
          .get(`/api/fleet/releases/${release.body.id}`)
          .expect(200)
      ).body;
    await until(
      'the canary at its pause',
      read,
      r =>
        r.progress.clusters[0]?.awaitingPromote === true ||
        r.status === 'ROLLED_BACK',
      120_000,
    );
    const images = async () =>
      (
        await core().listNamespacedPod({
          namespace: cluster.namespace,
          labelSelector: `app.kubernetes.io/name=${name}`,
        })
      ).items
        .filter(pod => !pod.metadata?.deletionTimestamp)
        .map(pod => pod.spec!.containers[0].image);
    const atPause = await until(
      'both images running',
      images,
      list =>
        list.includes(cluster.images[0]) && list.includes(cluster.images[1]),
    );
    expect(new Set(atPause)).toEqual(new Set(cluster.images));

    await request(server)
      .post(`/api/fleet/releases/${release.body.id}/promote`)
      .expect(200);
    const done = await until(
      'the release completed',
      read,
      r => ['COMPLETED', 'ROLLED_BACK'].includes(r.status),
      120_000,
    );
    expect(done.status).toBe('COMPLETED');
    const after = await until('only the new image', images, list =>
      list.every(image => image === cluster.images[1]),
    );
    expect(after.length).toBeGreaterThan(0);
  });
});
