/*
 * The hub cluster, through the whole backend and the simulator with real client-node calls:
 * kubeconfigs held in Secrets (`secret:<namespace>/<name>[#key]`, and discovery by label), and
 * in-cluster config (KUBERNETES_SERVICE_HOST/PORT and a service-account directory, no kubeconfig).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import request from 'supertest';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from './testing/databases';
import { fleetPlugin } from './plugin';
import { eventually } from './testing/eventually';

jest.setTimeout(60_000);

const databases = createTestDatabases();
const sim = useSimulator({
  clusters: ['hub', 'edge', 'far', 'near'],
  rootCluster: 'hub',
});

const component = (name: string) => ({
  apiVersion: 'backstage.io/v1alpha1',
  kind: 'Component',
  metadata: { name, namespace: 'default' },
  spec: { type: 'service', lifecycle: 'production', owner: 'team-a' },
});

function hubCore(): CoreV1Api {
  const kc = new KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath('hub'));
  return kc.makeApiClient(CoreV1Api);
}

async function ensureNamespace(name: string) {
  await hubCore()
    .createNamespace({ body: { metadata: { name } } })
    .catch(() => undefined);
}

/** The labels that mark a kubeconfig Secret for Fleet (fleet.discovery.secretSelector). */
const KUBECONFIG_LABELS = { 'cnp.io/kubeconfig': 'true' };
const SECRET_SELECTOR = 'cnp.io/kubeconfig=true';

async function putKubeconfigSecret(
  name: string,
  content: string,
  options: {
    key?: string;
    labels?: Record<string, string>;
    namespace?: string;
  } = {},
) {
  const namespace = options.namespace ?? 'fleet-system';
  await ensureNamespace(namespace);
  await hubCore()
    .deleteNamespacedSecret({ name, namespace })
    .catch(() => undefined);
  await hubCore().createNamespacedSecret({
    namespace,
    body: {
      metadata: { name, labels: options.labels ?? KUBECONFIG_LABELS },
      stringData: { [options.key ?? 'kubeconfig']: content },
    },
  });
}

/** Each test starts with no kubeconfig Secret on the hub (discovery would find the last one's). */
async function deleteKubeconfigSecrets() {
  const secrets = await hubCore().listSecretForAllNamespaces();
  for (const secret of secrets.items) {
    await hubCore()
      .deleteNamespacedSecret({
        name: secret.metadata!.name!,
        namespace: secret.metadata!.namespace!,
      })
      .catch(() => undefined);
  }
}

const kubeconfigOf = (cluster: string) =>
  fs.readFileSync(sim.kubeconfigPath(cluster), 'utf8');

/** Every token and kubeconfig of the simulated clusters, as text and base64. */
function secretsOfTheFleet(): string[] {
  return sim.clusterNames().flatMap(name => {
    const content = kubeconfigOf(name);
    return [
      sim.token(name),
      Buffer.from(content).toString('base64'),
      Buffer.from(sim.caPem).toString('base64'),
    ];
  });
}

function expectNoSecretIn(body: unknown) {
  const text = JSON.stringify(body);
  for (const secret of secretsOfTheFleet()) expect(text).not.toContain(secret);
  expect(text).not.toMatch(/BEGIN CERTIFICATE|certificate-authority-data/);
}

describe.each(databases.eachSupportedId())(
  'the hub cluster (%s)',
  databaseId => {
    beforeEach(deleteKubeconfigSecrets);

    async function start(fleet: Record<string, unknown>) {
      const knex = await databases.init(databaseId);
      const backend = await startTestBackend({
        features: [
          fleetPlugin,
          mockServices.database.factory({ knex }),
          mockServices.rootConfig.factory({
            data: {
              fleet: {
                health: {
                  probeTimeout: { seconds: 2 },
                  minOutage: { seconds: 0 },
                  manualMinInterval: { seconds: 0 },
                },
                deploy: { pollInterval: { milliseconds: 100 } },
                discovery: { secretSelector: SECRET_SELECTOR },
                ...fleet,
              },
            },
          }),
          mockServices.rootLogger.factory({ level: 'debug' }),
          mockServices.scheduler.factory(),
          catalogServiceMock.factory({
            entities: [component('hubbed'), component('incluster')],
          }),
        ],
      });
      return { server: backend.server };
    }

    it('probes a Secret-referenced cluster: ONLINE, UNKNOWN while its Secret is gone, ONLINE when it is back, with no deployment degraded', async () => {
      const { server } = await start({
        hub: { kubeconfigPath: sim.kubeconfigPath('hub') },
      });
      // Put after startup's discovery: registered by hand first, the cluster stays manual.
      await putKubeconfigSecret('edge-kubeconfig', kubeconfigOf('edge'));
      const registered = await request(server)
        .post('/api/fleet/clusters')
        .send({
          name: 'edge',
          endpoint: sim.endpoint('edge'),
          kubeconfigRef: 'secret:fleet-system/edge-kubeconfig',
        })
        .expect(201);
      expectNoSecretIn(registered.body);

      const cycle = async () =>
        (await request(server).post('/api/fleet/health/run').expect(200)).body;
      const clusterNow = async () =>
        (await request(server).get('/api/fleet/clusters/edge').expect(200))
          .body;
      await cycle();
      expect(await clusterNow()).toMatchObject({ status: 'ONLINE' });

      const entityRef = 'component:default/hubbed';
      const deployed = await request(server)
        .post('/api/fleet/deployments')
        .send({ entityRef, cluster: 'edge', image: 'ghcr.io/acme/hubbed:1.0' })
        .expect(201);
      const deploymentNow = async () =>
        (
          await request(server)
            .get(`/api/fleet/deployments/${deployed.body.id}`)
            .expect(200)
        ).body;
      await eventually(async () =>
        expect(await deploymentNow()).toMatchObject({ status: 'DEPLOYED' }),
      );
      expect(
        sim
          .objects('edge')
          .some(o => o.kind === 'Deployment' && o.metadata.name === 'hubbed'),
      ).toBe(true);

      // The Secret goes: the cluster cannot be probed, so it is UNKNOWN (never OFFLINE, whatever
      // the number of cycles), and nothing cascades.
      await hubCore().deleteNamespacedSecret({
        name: 'edge-kubeconfig',
        namespace: 'fleet-system',
      });
      for (let i = 0; i < 3; i++) await cycle();
      const gone = await clusterNow();
      expect(gone.status).toBe('UNKNOWN');
      expect(gone.statusReason).toContain(
        "kubeconfig Secret 'fleet-system/edge-kubeconfig'",
      );
      expect(gone.statusReason).toContain('not found');
      expect(await deploymentNow()).toMatchObject({ status: 'DEPLOYED' });

      // A Secret that holds no kubeconfig under the key: UNKNOWN too, with the reason.
      await putKubeconfigSecret('edge-kubeconfig', kubeconfigOf('edge'), {
        key: 'other',
      });
      await cycle();
      expect(await clusterNow()).toMatchObject({ status: 'UNKNOWN' });
      expect((await clusterNow()).statusReason).toContain('has no such key');
      await putKubeconfigSecret('edge-kubeconfig', 'clusters: [ {{ not yaml');
      await cycle();
      expect((await clusterNow()).statusReason).toContain(
        'is not a valid kubeconfig',
      );

      // Restored: ONLINE at the next cycle, the deployment still DEPLOYED.
      await putKubeconfigSecret('edge-kubeconfig', kubeconfigOf('edge'));
      await cycle();
      expect(await clusterNow()).toMatchObject({ status: 'ONLINE' });
      expect(await deploymentNow()).toMatchObject({ status: 'DEPLOYED' });

      const events = await request(server)
        .get('/api/fleet/clusters/edge/events')
        .expect(200);
      expect(events.body.items.map((e: any) => e.to)).not.toContain('OFFLINE');
      for (const route of [
        '/api/fleet/clusters',
        '/api/fleet/clusters/edge',
        '/api/fleet/clusters/edge/events',
        `/api/fleet/deployments?entityRef=${entityRef}`,
        `/api/fleet/deployments/${deployed.body.id}/events`,
        '/api/fleet/summary',
      ]) {
        expectNoSecretIn((await request(server).get(route).expect(200)).body);
      }
    });

    it('picks up a rotated Secret at the next cycle', async () => {
      // The Secret first names the wrong API server's kubeconfig: the cluster stays UNKNOWN
      // (Fleet never sends a kubeconfig's credentials to another server), then is fixed.
      const { server } = await start({
        hub: { kubeconfigPath: sim.kubeconfigPath('hub') },
      });
      await putKubeconfigSecret('near-kubeconfig', kubeconfigOf('far'));
      await request(server)
        .post('/api/fleet/clusters')
        .send({
          name: 'near',
          endpoint: sim.endpoint('near'),
          kubeconfigRef: 'secret:fleet-system/near-kubeconfig',
        })
        .expect(201);
      await request(server).post('/api/fleet/health/run').expect(200);
      const before = (
        await request(server).get('/api/fleet/clusters/near').expect(200)
      ).body;
      expect(before.status).toBe('UNKNOWN');
      expect(before.statusReason).toContain('is not the server of');
      await hubCore().patchNamespacedSecret(
        {
          name: 'near-kubeconfig',
          namespace: 'fleet-system',
          body: { stringData: { kubeconfig: kubeconfigOf('near') } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await request(server).post('/api/fleet/health/run').expect(200);
      expect(
        (await request(server).get('/api/fleet/clusters/near').expect(200))
          .body,
      ).toMatchObject({ status: 'ONLINE' });
    });

    it('discovers the clusters of the Secrets with the configured labels', async () => {
      await putKubeconfigSecret('far-kubeconfig', kubeconfigOf('far'), {
        labels: { 'cnp.io/kubeconfig': 'true' },
      });
      await putKubeconfigSecret('unlabelled', kubeconfigOf('edge'), {
        labels: {},
      });
      await putKubeconfigSecret('capi-style', kubeconfigOf('near'), {
        key: 'value',
        labels: { 'cnp.io/kubeconfig': 'true' },
      });
      const { server } = await start({
        hub: { kubeconfigPath: sim.kubeconfigPath('hub') },
      });
      const list = await request(server).get('/api/fleet/clusters').expect(200);
      const byName = new Map<string, any>(
        list.body.items.map((c: any) => [c.name, c]),
      );
      expect(byName.get('far')).toMatchObject({
        source: 'discovered',
        endpoint: sim.endpoint('far'),
        kubeconfigRef: 'secret:fleet-system/far-kubeconfig',
      });
      expect(byName.get('near')).toMatchObject({
        kubeconfigRef: 'secret:fleet-system/capi-style#value',
      });
      expect(byName.has('edge')).toBe(false);
      await request(server).post('/api/fleet/health/run').expect(200);
      const far = (
        await request(server).get('/api/fleet/clusters/far').expect(200)
      ).body;
      expect(far.status).toBe('ONLINE');
      expectNoSecretIn(list.body);
    });

    describe('in a pod', () => {
      const saved = {
        host: process.env.KUBERNETES_SERVICE_HOST,
        port: process.env.KUBERNETES_SERVICE_PORT,
      };
      let prefix: string;
      beforeEach(() => {
        prefix = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-sa-'));
        const dir = path.join(
          prefix,
          'var/run/secrets/kubernetes.io/serviceaccount',
        );
        fs.mkdirSync(dir, { recursive: true });
        fs.writeFileSync(path.join(dir, 'token'), sim.token('hub'));
        fs.writeFileSync(path.join(dir, 'ca.crt'), sim.caPem);
        fs.writeFileSync(path.join(dir, 'namespace'), 'fleet-system');
        const url = new URL(sim.url);
        process.env.KUBERNETES_SERVICE_HOST = url.hostname;
        process.env.KUBERNETES_SERVICE_PORT = url.port;
      });
      afterEach(() => {
        for (const [key, value] of [
          ['KUBERNETES_SERVICE_HOST', saved.host],
          ['KUBERNETES_SERVICE_PORT', saved.port],
        ] as const) {
          if (value === undefined) delete process.env[key];
          else process.env[key] = value;
        }
        fs.rmSync(prefix, { recursive: true, force: true });
      });

      it('registers and probes the cluster it runs in, with no kubeconfig configured', async () => {
        const { server } = await start({
          hub: { serviceAccountPathPrefix: prefix },
        });
        const list = await request(server)
          .get('/api/fleet/clusters')
          .expect(200);
        expect(list.body.items).toEqual([
          expect.objectContaining({
            name: 'in-cluster',
            endpoint: sim.url,
            kubeconfigRef: 'in-cluster',
            source: 'discovered',
            status: 'UNKNOWN',
          }),
        ]);
        const before = sim.requestCount('hub', '/api/v1/namespaces');
        await request(server).post('/api/fleet/health/run').expect(200);
        expect(sim.requestCount('hub', '/api/v1/namespaces')).toBeGreaterThan(
          before,
        );
        const cluster = (
          await request(server)
            .get('/api/fleet/clusters/in-cluster')
            .expect(200)
        ).body;
        expect(cluster).toMatchObject({
          status: 'ONLINE',
          serverVersion: 'v1.30.0',
        });
        expectNoSecretIn(cluster);

        // Secrets are read through the same service account.
        await putKubeconfigSecret('edge-kubeconfig', kubeconfigOf('edge'));
        await request(server)
          .post('/api/fleet/clusters')
          .send({
            name: 'edge',
            endpoint: sim.endpoint('edge'),
            kubeconfigRef: 'secret:fleet-system/edge-kubeconfig',
          })
          .expect(201);
        await request(server).post('/api/fleet/health/run').expect(200);
        expect(
          (await request(server).get('/api/fleet/clusters/edge').expect(200))
            .body,
        ).toMatchObject({ status: 'ONLINE' });
      });

      it('registers it under the configured name', async () => {
        const { server } = await start({
          hub: { serviceAccountPathPrefix: prefix, inClusterName: 'mgmt' },
        });
        await request(server).post('/api/fleet/health/run').expect(200);
        expect(
          (await request(server).get('/api/fleet/clusters/mgmt').expect(200))
            .body,
        ).toMatchObject({ status: 'ONLINE', kubeconfigRef: 'in-cluster' });
      });
    });
  },
);
