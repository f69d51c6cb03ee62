/*
 * Kubeconfigs held in Secrets of the hub are written by whoever may write those Secrets: through
 * the whole backend, the simulator and real client-node calls, such a kubeconfig never makes
 * Fleet read a file of its own host (a token file) or send it anywhere, and a manual `secret:`
 * reference is read only when discovery would read that Secret too.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import request from 'supertest';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from './testing/databases';
import { fleetPlugin } from './plugin';

jest.setTimeout(60_000);

const databases = createTestDatabases();
const sim = useSimulator({
  clusters: ['hub', 'edge', 'far'],
  rootCluster: 'hub',
});

const SECRET_SELECTOR = 'cnp.io/kubeconfig=true';
const KUBECONFIG_LABELS = { 'cnp.io/kubeconfig': 'true' };

function hubCore(): CoreV1Api {
  const kc = new KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath('hub'));
  return kc.makeApiClient(CoreV1Api);
}

async function putSecret(
  namespace: string,
  name: string,
  kubeconfig: string,
  labels: Record<string, string>,
) {
  await hubCore()
    .createNamespace({ body: { metadata: { name: namespace } } })
    .catch(() => undefined);
  await hubCore()
    .deleteNamespacedSecret({ name, namespace })
    .catch(() => undefined);
  await hubCore().createNamespacedSecret({
    namespace,
    body: { metadata: { name, labels }, stringData: { kubeconfig } },
  });
}

async function deleteAllSecrets() {
  for (const secret of (await hubCore().listSecretForAllNamespaces()).items) {
    await hubCore()
      .deleteNamespacedSecret({
        name: secret.metadata!.name!,
        namespace: secret.metadata!.namespace!,
      })
      .catch(() => undefined);
  }
}

/** A plain HTTP server that records the Authorization header of every request it receives. */
async function startListener() {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers.authorization ?? '');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"kind":"NamespaceList","items":[]}');
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise(resolve => server.close(resolve)),
  };
}

describe.each(databases.eachSupportedId())(
  'kubeconfigs held in Secrets (%s)',
  databaseId => {
    let tmp: string;
    beforeEach(async () => {
      await deleteAllSecrets();
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-secret-kc-'));
    });
    afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

    async function start(discovery: { [key: string]: string }) {
      const knex = await databases.init(databaseId);
      const backend = await startTestBackend({
        features: [
          fleetPlugin,
          mockServices.database.factory({ knex }),
          mockServices.rootConfig.factory({
            data: {
              fleet: {
                hub: { kubeconfigPath: sim.kubeconfigPath('hub') },
                discovery,
                health: {
                  probeTimeout: { seconds: 2 },
                  minOutage: { seconds: 0 },
                  manualMinInterval: { seconds: 0 },
                },
              },
            },
          }),
          mockServices.scheduler.factory(),
          catalogServiceMock.factory({ entities: [] }),
        ],
      });
      const server = backend.server;
      return {
        server,
        cycle: () => request(server).post('/api/fleet/health/run').expect(200),
        cluster: async (name: string) =>
          (await request(server).get(`/api/fleet/clusters/${name}`).expect(200))
            .body,
      };
    }

    it('never reads the token-file a Secret kubeconfig names: the server it names receives no request with that token', async () => {
      const listener = await startListener();
      try {
        // The backend's own token, as a pod's service account token or a dev token file is.
        const tokenFile = path.join(tmp, 'token');
        fs.writeFileSync(tokenFile, 'backend-own-token-7f3a');
        // Each its own server URL on the listener (one API server is one cluster).
        const kubeconfig = (context: string) =>
          JSON.stringify({
            apiVersion: 'v1',
            kind: 'Config',
            clusters: [
              {
                name: 'l',
                // Plain HTTP: client-node sends to it only without TLS verification.
                cluster: {
                  server: `${listener.url}/${context}`,
                  'insecure-skip-tls-verify': true,
                },
              },
            ],
            users: [{ name: 'u', user: { 'token-file': tokenFile } }],
            contexts: [{ name: context, context: { cluster: 'l', user: 'u' } }],
            'current-context': context,
          });
        // Found by discovery (labelled), and named by a manual registration.
        await putSecret(
          'fleet-system',
          'listener',
          kubeconfig('listener'),
          KUBECONFIG_LABELS,
        );
        const { server, cycle, cluster } = await start({
          secretSelector: SECRET_SELECTOR,
        });
        await putSecret(
          'fleet-system',
          'manual-listener',
          kubeconfig('manual-listener'),
          KUBECONFIG_LABELS,
        );
        await request(server)
          .post('/api/fleet/clusters')
          .send({
            name: 'manual-listener',
            endpoint: `${listener.url}/manual-listener`,
            kubeconfigRef: 'secret:fleet-system/manual-listener',
          })
          .expect(201);
        await cycle();
        await cycle();

        expect(listener.seen.join('\n')).not.toContain(
          'backend-own-token-7f3a',
        );
        expect(listener.seen).toEqual([]);
        // Discovery skipped the Secret: no cluster of it.
        await request(server).get('/api/fleet/clusters/listener').expect(404);
        const manual = await cluster('manual-listener');
        expect(manual.status).toBe('UNKNOWN');
        expect(manual.statusReason).toContain(
          "kubeconfig Secret 'fleet-system/manual-listener'",
        );
        expect(manual.statusReason).toContain("sets 'token-file'");
        expect(JSON.stringify(manual)).not.toContain(tokenFile);
      } finally {
        await listener.close();
      }
    });

    it('reads a manual secret: reference only for a Secret with the discovery labels, in the discovery namespace', async () => {
      const edge = fs.readFileSync(sim.kubeconfigPath('edge'), 'utf8');
      const far = fs.readFileSync(sim.kubeconfigPath('far'), 'utf8');
      // Another team's admin kubeconfig, unlabelled (as Cluster API writes them) ...
      await putSecret('fleet-system', 'edge-admin', edge, {});
      // ... and a labelled one, outside the namespace Fleet reads kubeconfigs from.
      await putSecret('team-b', 'far-admin', far, KUBECONFIG_LABELS);
      const { server, cycle, cluster } = await start({
        secretSelector: SECRET_SELECTOR,
        secretNamespace: 'fleet-system',
      });
      const before = {
        edge: sim.requestCount('edge', '/api/v1/namespaces'),
        far: sim.requestCount('far', '/api/v1/namespaces'),
      };
      for (const [name, ref] of [
        ['edge', 'secret:fleet-system/edge-admin'],
        ['far', 'secret:team-b/far-admin'],
      ]) {
        await request(server)
          .post('/api/fleet/clusters')
          .send({ name, endpoint: sim.endpoint(name), kubeconfigRef: ref })
          .expect(201);
      }
      await cycle();
      await cycle();
      const edgeNow = await cluster('edge');
      expect(edgeNow.status).toBe('UNKNOWN');
      expect(edgeNow.statusReason).toContain(
        `does not carry the labels '${SECRET_SELECTOR}'`,
      );
      const farNow = await cluster('far');
      expect(farNow.status).toBe('UNKNOWN');
      expect(farNow.statusReason).toContain(
        "are read only in namespace 'fleet-system'",
      );
      expect(sim.requestCount('edge', '/api/v1/namespaces')).toBe(before.edge);
      expect(sim.requestCount('far', '/api/v1/namespaces')).toBe(before.far);

      // Labelled by its owner, the Secret is Fleet's to use.
      await putSecret('fleet-system', 'edge-admin', edge, KUBECONFIG_LABELS);
      await cycle();
      expect(await cluster('edge')).toMatchObject({ status: 'ONLINE' });
    });

    it('reads no secret: reference when no fleet.discovery.secretSelector is configured', async () => {
      const edge = fs.readFileSync(sim.kubeconfigPath('edge'), 'utf8');
      await putSecret('fleet-system', 'edge-kc', edge, KUBECONFIG_LABELS);
      const { server, cycle, cluster } = await start({});
      const before = sim.requestCount('edge', '/api/v1/namespaces');
      await request(server)
        .post('/api/fleet/clusters')
        .send({
          name: 'edge',
          endpoint: sim.endpoint('edge'),
          kubeconfigRef: 'secret:fleet-system/edge-kc',
        })
        .expect(201);
      await cycle();
      const edgeNow = await cluster('edge');
      expect(edgeNow.status).toBe('UNKNOWN');
      expect(edgeNow.statusReason).toContain(
        'fleet.discovery.secretSelector, and none is configured',
      );
      expect(sim.requestCount('edge', '/api/v1/namespaces')).toBe(before);
    });
  },
);
