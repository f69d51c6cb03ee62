/*
 * Components that bring their own manifests, through the whole backend, a real Git host and the
 * simulator: the `inventory` example repository (v1 on main, v2 on next) is served over Git's
 * smart HTTP by `git http-backend` and read through Backstage's URL reader, as an adopter's
 * GitHub would be. Deploys, overlays, prune, rollback, the project's kinds, ownership, health of
 * a StatefulSet, drift and self-heal, the project's pod security, and the preview.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { urlReaderServiceFactory } from '@backstage/backend-defaults/urlReader';
import { mockServices } from '@backstage/backend-test-utils';
import type { SchedulerService } from '@backstage/backend-plugin-api';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import {
  createExampleRepository,
  createInventoryRepository,
  gitHostUrlReaderFactory,
  serveGitRepositories,
} from '@cnp/git-host';
import { useSimulator } from '@cnp/kube-simulator';
import request from 'supertest';
import { RECONCILE_TASK_ID } from './reconcile/ReconcileWorker';
import { startFleetTestBackend } from './testBackend';
import { createTestDatabases } from './testing/databases';

jest.setTimeout(120_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east', 'west'], readyDelayMs: 100 });

let tmp: string;
let git: Awaited<ReturnType<typeof serveGitRepositories>>;
let commits: { v1: string; v2: string };

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'fleet-repo-manifests-'));
  const root = path.join(tmp, 'git');
  commits = await createInventoryRepository({ root });
  // A component whose manifests reach outside its namespace.
  await createExampleRepository({
    root,
    name: 'admin',
    message: 'Cluster-wide rights',
    files: {
      'deploy/binding.yaml': [
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: ClusterRoleBinding',
        'metadata: { name: admin-everywhere }',
        'roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin }',
        'subjects: [{ kind: ServiceAccount, name: admin, namespace: default }]',
        '---',
        'apiVersion: v1',
        'kind: ServiceAccount',
        'metadata: { name: admin }',
      ].join('\n'),
    },
  });
  // A component whose manifests name inventory's ConfigMap.
  await createExampleRepository({
    root,
    name: 'thief',
    message: 'Takes a ConfigMap',
    files: {
      'deploy/configmap.yaml': [
        'apiVersion: v1',
        'kind: ConfigMap',
        'metadata: { name: inventory-config }',
        'data: { stolen: "yes" }',
      ].join('\n'),
    },
  });
  // A component whose pods would be root on the node.
  await createExampleRepository({
    root,
    name: 'rooted',
    message: 'A privileged container',
    files: {
      'deploy/deployment.yaml': [
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata: { name: rooted }',
        'spec:',
        '  selector: { matchLabels: { app: rooted } }',
        '  template:',
        '    metadata: { labels: { app: rooted } }',
        '    spec:',
        '      containers:',
        '        - name: shell',
        '          image: "busybox:1.36"',
        '          securityContext: { privileged: true }',
        '---',
        'apiVersion: v1',
        'kind: ServiceAccount',
        'metadata: { name: rooted }',
      ].join('\n'),
    },
  });
  // A web front scaled by an HPA behind a load balancer: healthy once both report so.
  await createExampleRepository({
    root,
    name: 'storefront',
    message: 'Autoscaled behind a load balancer',
    files: {
      'deploy/all.yaml': [
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata: { name: storefront }',
        'spec:',
        '  replicas: 2',
        '  selector: { matchLabels: { app: storefront } }',
        '  template:',
        '    metadata: { labels: { app: storefront } }',
        '    spec:',
        '      containers: [{ name: web, image: "nginx:1.27", resources: { requests: { cpu: 100m } } }]',
        '---',
        'apiVersion: autoscaling/v2',
        'kind: HorizontalPodAutoscaler',
        'metadata: { name: storefront }',
        'spec:',
        '  scaleTargetRef: { apiVersion: apps/v1, kind: Deployment, name: storefront }',
        '  minReplicas: 2',
        '  maxReplicas: 4',
        '  metrics: [{ type: Resource, resource: { name: cpu, target: { type: Utilization, averageUtilization: 70 } } }]',
        '---',
        'apiVersion: v1',
        'kind: Service',
        'metadata: { name: storefront }',
        'spec:',
        '  type: LoadBalancer',
        '  selector: { app: storefront }',
        '  ports: [{ port: 80, targetPort: 80 }]',
      ].join('\n'),
    },
  });
  // A database that never becomes ready.
  await createExampleRepository({
    root,
    name: 'ledger',
    message: 'A StatefulSet',
    files: {
      'deploy/statefulset.yaml': [
        'apiVersion: apps/v1',
        'kind: StatefulSet',
        'metadata: { name: ledger-db }',
        'spec:',
        '  serviceName: ledger-db',
        '  replicas: 1',
        '  selector: { matchLabels: { app: ledger-db } }',
        '  template:',
        '    metadata: { labels: { app: ledger-db } }',
        '    spec:',
        '      containers: [{ name: db, image: "postgres:broken" }]',
      ].join('\n'),
    },
  });
  git = await serveGitRepositories({ root });
});

afterAll(async () => {
  await git?.close();
  await fs.rm(tmp, { recursive: true, force: true });
});

const component = (name: string, repository = name) => ({
  apiVersion: 'backstage.io/v1alpha1',
  kind: 'Component',
  metadata: {
    name,
    namespace: 'default',
    annotations: {
      'backstage.io/source-location': `url:${git.url}/${repository}.git/tree/main/`,
      'cnp.io/manifests-ref': 'dir:./deploy',
    },
  },
  spec: { type: 'service', lifecycle: 'production', owner: 'team-a' },
});

type Sim = typeof sim;
const live = (
  s: Sim,
  cluster: string,
  ns: string,
  kind: string,
  name: string,
) =>
  s
    .objects(cluster)
    .find(
      o =>
        o.kind === kind &&
        (o.metadata as { name?: string }).name === name &&
        (o.metadata as { namespace?: string }).namespace === ns,
    ) as any;

async function until<T>(what: string, probe: () => Promise<T | undefined>) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(r => setTimeout(r, 100));
  }
}

describe.each(databases.eachSupportedId())(
  'repository manifests (%s)',
  databaseId => {
    // Each database run deploys to its own namespace of the same simulated clusters.
    const namespace = `inv-${databaseId
      .toLowerCase()
      .replace(/[^a-z0-9]/g, '')}`;

    async function start(projects?: object[]) {
      const scheduler = mockServices.scheduler() as SchedulerService & {
        factory(options: { skipTaskRunOnStartup: boolean }): any;
      };
      const started = await startFleetTestBackend({
        knex: await databases.init(databaseId),
        kubeconfigDir: sim.kubeconfigDir,
        fleet: {
          deploy: {
            namespace,
            pollInterval: { milliseconds: 100 },
            progressDeadline: { seconds: 4 },
          },
          reconcile: { watch: false },
          ...(projects ? { projects } : {}),
          gitHost: {
            baseUrl: git.url,
            cacheDir: path.join(tmp, `cache-${namespace}`),
          },
        },
        features: [
          urlReaderServiceFactory,
          gitHostUrlReaderFactory,
          scheduler.factory({ skipTaskRunOnStartup: true }),
          catalogServiceMock.factory({
            entities: [
              component('inventory'),
              component('admin'),
              component('thief'),
              component('ledger'),
              component('storefront'),
              component('rooted'),
            ],
          }),
        ],
      });
      await request(started.server).post('/api/fleet/health/run').expect(200);
      return {
        ...started,
        reconcile: () => scheduler.triggerTask(RECONCILE_TASK_ID),
      };
    }

    async function deploy(
      server: any,
      entity: string,
      cluster: string,
      version?: string,
    ) {
      const created = await request(server)
        .post('/api/fleet/deployments')
        .send({ entityRef: `component:default/${entity}`, cluster, version });
      return created;
    }

    async function deployed(server: any, id: string) {
      return until(`deployment ${id} to settle`, async () => {
        const { body } = await request(server).get(
          `/api/fleet/deployments/${id}`,
        );
        return body.status !== 'PENDING' && body.status !== 'PROGRESSING'
          ? body
          : undefined;
      });
    }

    it('deploys inventory v1 to two clusters with an overlay, prunes what v2 drops, and rolls back', async () => {
      const { server } = await start();
      // The application, with a patch for west only.
      await request(server)
        .post('/api/fleet/applications')
        .send({
          entityRef: 'component:default/inventory',
          spec: { image: 'ghcr.io/acme/inventory:2.0.0' },
          placement: {
            overrides: [
              {
                clusters: ['west'],
                patches: [
                  {
                    target: { kind: 'Deployment', name: 'inventory' },
                    patch: { spec: { replicas: 3 } },
                  },
                ],
              },
            ],
          },
        })
        .expect(201);

      const ids: Record<string, string> = {};
      for (const cluster of ['east', 'west']) {
        const created = await deploy(server, 'inventory', cluster, 'v1');
        expect(created.status).toBe(201);
        ids[cluster] = created.body.id;
        expect(await deployed(server, created.body.id)).toMatchObject({
          status: 'DEPLOYED',
        });
      }
      for (const cluster of ['east', 'west']) {
        const deployment = live(
          sim,
          cluster,
          namespace,
          'Deployment',
          'inventory',
        );
        expect(
          deployment.spec.template.spec.containers.map((c: any) => c.name),
        ).toEqual(['app', 'log-shipper']);
        expect(deployment.spec.template.spec.volumes).toEqual([
          expect.objectContaining({
            name: 'config',
            configMap: expect.objectContaining({ name: 'inventory-config' }),
          }),
        ]);
        expect(deployment.metadata.labels['app.kubernetes.io/managed-by']).toBe(
          'fleet',
        );
        expect(deployment.metadata.annotations['cnp.io/entity-ref']).toBe(
          'component:default/inventory',
        );
        expect(
          live(sim, cluster, namespace, 'ServiceAccount', 'inventory'),
        ).toBeDefined();
        expect(
          live(sim, cluster, namespace, 'ConfigMap', 'inventory-config'),
        ).toBeDefined();
      }
      // The overlay differs: west runs 3 replicas, east the manifests' 2.
      expect(
        live(sim, 'east', namespace, 'Deployment', 'inventory').spec.replicas,
      ).toBe(2);
      expect(
        live(sim, 'west', namespace, 'Deployment', 'inventory').spec.replicas,
      ).toBe(3);

      // The revision records where it came from.
      const revisions = await request(server)
        .get(`/api/fleet/deployments/${ids.east}/revisions`)
        .expect(200);
      expect(revisions.body.items[0].source).toMatchObject({
        version: 'v1',
        commit: commits.v1,
        url: `${git.url}/inventory.git/tree/v1/deploy`,
        digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      });
      const configMapV1 = live(
        sim,
        'east',
        namespace,
        'ConfigMap',
        'inventory-config',
      );

      // The preview of v2: the ConfigMap pruned, the Job created, the Deployment updated.
      const { applicationId } = (
        await request(server).get(`/api/fleet/deployments/${ids.east}`)
      ).body;
      const preview = await request(server)
        .post(`/api/fleet/applications/${applicationId}/preview`)
        .send({ version: 'v2', clusters: ['east'] })
        .expect(200);
      expect(preview.body.source).toMatchObject({
        version: 'v2',
        commit: commits.v2,
      });
      const actions = Object.fromEntries(
        preview.body.clusters[0].objects.map((o: any) => [
          `${o.kind}/${o.name}`,
          o.action,
        ]),
      );
      expect(actions).toMatchObject({
        'ConfigMap/inventory-config': 'prune',
        'Job/inventory-migrate': 'create',
        'Deployment/inventory': 'update',
        'ServiceAccount/inventory': 'unchanged',
      });
      // The volume v2 drops is a change even when the image is kept.
      const keptImage = await request(server)
        .post(`/api/fleet/applications/${applicationId}/preview`)
        .send({
          version: 'v2',
          clusters: ['east'],
          image: 'ghcr.io/acme/inventory:2.0.0',
        })
        .expect(200);
      const deploymentPreview = keptImage.body.clusters[0].objects.find(
        (o: any) => o.kind === 'Deployment',
      );
      expect(deploymentPreview.action).toBe('update');
      expect(deploymentPreview.paths).toEqual(
        expect.arrayContaining(['/spec/template/spec/volumes']),
      );
      // Nothing was written by the preview.
      expect(
        live(sim, 'east', namespace, 'Job', 'inventory-migrate'),
      ).toBeUndefined();

      // v2 on east: the ConfigMap goes, the Job comes.
      const v2 = await deploy(server, 'inventory', 'east', 'v2');
      expect(v2.status).toBe(201);
      expect(await deployed(server, v2.body.id)).toMatchObject({
        status: 'DEPLOYED',
      });
      expect(
        live(sim, 'east', namespace, 'ConfigMap', 'inventory-config'),
      ).toBeUndefined();
      expect(
        live(sim, 'east', namespace, 'Job', 'inventory-migrate'),
      ).toBeDefined();
      expect(
        live(sim, 'east', namespace, 'Deployment', 'inventory').spec.template
          .spec.volumes,
      ).toBeUndefined();

      // Rollback to revision 1 restores the ConfigMap exactly.
      await request(server)
        .post(`/api/fleet/deployments/${ids.east}/rollback`)
        .send({ toRevision: 1 })
        .expect(201);
      expect(await deployed(server, ids.east)).toMatchObject({
        status: 'DEPLOYED',
      });
      const restored = live(
        sim,
        'east',
        namespace,
        'ConfigMap',
        'inventory-config',
      );
      expect(restored.data).toEqual(configMapV1.data);
      expect(restored.metadata.labels).toEqual(configMapV1.metadata.labels);
      expect(
        live(sim, 'east', namespace, 'Job', 'inventory-migrate'),
      ).toBeUndefined();
    });

    it("reads manifests only from the project's sources (403 naming the URL, nothing applied)", async () => {
      const { server } = await start([
        {
          name: 'team-a',
          owners: ['team-a'],
          namespaces: [namespace],
          secrets: ['inventory*', 'storefront*'],
          sources: [`${git.url}/inventory.git`],
        },
      ]);
      const refused = await deploy(server, 'storefront', 'east');
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toBe(
        `manifests from ${git.url}/storefront.git/tree/main/deploy are not among project team-a's sources (${git.url}/inventory.git)`,
      );
      expect(
        live(sim, 'east', namespace, 'Deployment', 'storefront'),
      ).toBeUndefined();
      // Refused before anything is read: not even the application is imported.
      const applications = await request(server).get(
        '/api/fleet/applications?entityRef=component:default/storefront',
      );
      expect(applications.body.items).toEqual([]);
      const allowed = await deploy(server, 'inventory', 'west', 'v1');
      expect(allowed.status).toBe(201);
      expect((await deployed(server, allowed.body.id)).status).toBe('DEPLOYED');
    });

    it('refuses a ClusterRoleBinding under the default project (403), applying nothing', async () => {
      const { server } = await start();
      const refused = await deploy(server, 'admin', 'east');
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toMatch(
        /ClusterRoleBinding 'admin-everywhere'.*not allowed in project default/,
      );
      expect(
        live(sim, 'east', namespace, 'ServiceAccount', 'admin'),
      ).toBeUndefined();
      expect(
        sim.objects('east').find(o => o.kind === 'ClusterRoleBinding'),
      ).toBeUndefined();
    });

    it("refuses a privileged container under the default project's pod security (403), applying nothing", async () => {
      const { server, stores } = await start();
      const refused = await deploy(server, 'rooted', 'east');
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toBe(
        "Deployment 'rooted' container 'shell': privileged containers are not allowed by project default's pod security (baseline)",
      );
      expect(
        live(sim, 'east', namespace, 'Deployment', 'rooted'),
      ).toBeUndefined();
      expect(
        live(sim, 'east', namespace, 'ServiceAccount', 'rooted'),
      ).toBeUndefined();
      expect(
        await stores.deployments.listDeployments({
          entityRef: 'component:default/rooted',
        }),
      ).toEqual([]);
    });

    it("ends OWNERSHIP_CONFLICT when another component's object holds the name", async () => {
      const { server } = await start();
      const first = await deploy(server, 'inventory', 'east');
      expect(await deployed(server, first.body.id)).toMatchObject({
        status: 'DEPLOYED',
      });
      const before = live(
        sim,
        'east',
        namespace,
        'ConfigMap',
        'inventory-config',
      );
      const taken = await deploy(server, 'thief', 'east');
      expect(taken.status).toBe(201);
      const failed = await deployed(server, taken.body.id);
      expect(failed).toMatchObject({
        status: 'FAILED',
        statusReason: 'OWNERSHIP_CONFLICT',
      });
      expect(failed.message).toMatch(/ConfigMap .*inventory-config/);
      const after = live(
        sim,
        'east',
        namespace,
        'ConfigMap',
        'inventory-config',
      );
      expect(after.data).toEqual(before.data);
      expect(after.metadata.annotations['cnp.io/entity-ref']).toBe(
        'component:default/inventory',
      );
    });

    it('deploys an autoscaled Deployment behind a load balancer once the HPA and the address report', async () => {
      const { server } = await start();
      const created = await deploy(server, 'storefront', 'east');
      expect(created.status).toBe(201);
      expect(await deployed(server, created.body.id)).toMatchObject({
        status: 'DEPLOYED',
      });
      const service = live(sim, 'east', namespace, 'Service', 'storefront');
      expect(service.status.loadBalancer.ingress).toHaveLength(1);
      const hpa = live(
        sim,
        'east',
        namespace,
        'HorizontalPodAutoscaler',
        'storefront',
      );
      expect(hpa.status.conditions).toContainEqual(
        expect.objectContaining({ type: 'ScalingActive', status: 'True' }),
      );
    });

    it('fails a StatefulSet that never becomes ready, naming it', async () => {
      const { server } = await start();
      const created = await deploy(server, 'ledger', 'west');
      expect(created.status).toBe(201);
      const failed = await deployed(server, created.body.id);
      expect(failed.status).toBe('FAILED');
      expect(failed.message).toMatch(/StatefulSet ledger-db/);
    });

    it('finds a ConfigMap edited by hand OUT_OF_SYNC, and self-heal restores it', async () => {
      const { server, reconcile } = await start();
      const created = await deploy(server, 'inventory', 'west');
      expect(await deployed(server, created.body.id)).toMatchObject({
        status: 'DEPLOYED',
      });
      const original = live(
        sim,
        'west',
        namespace,
        'ConfigMap',
        'inventory-config',
      ).data;
      sim.drift('west', {
        kind: 'ConfigMap',
        namespace,
        name: 'inventory-config',
        patch: { data: { LOG_LEVEL: 'debug' } },
      });
      await reconcile();
      const drifted = await until('drift to be seen', async () => {
        const { body } = await request(server).get(
          `/api/fleet/deployments/${created.body.id}`,
        );
        return body.syncStatus === 'OUT_OF_SYNC' ? body : undefined;
      });
      expect(drifted.syncDifferences).toContainEqual(
        expect.objectContaining({
          kind: 'ConfigMap',
          name: 'inventory-config',
          path: '/data/LOG_LEVEL',
        }),
      );
      await request(server)
        .patch(`/api/fleet/applications/${created.body.applicationId}`)
        .send({ spec: { selfHeal: true } })
        .expect(200);
      await reconcile();
      await until('self-heal', async () => {
        const { body } = await request(server).get(
          `/api/fleet/deployments/${created.body.id}`,
        );
        return body.syncStatus === 'SYNCED' ? body : undefined;
      });
      expect(
        live(sim, 'west', namespace, 'ConfigMap', 'inventory-config').data,
      ).toEqual(original);
    });

    it('releases a version to every cluster, and refuses a canary of manifests without a Deployment to steer', async () => {
      const { server } = await start();
      const ids: string[] = [];
      for (const cluster of ['east', 'west']) {
        const created = await deploy(server, 'inventory', cluster, 'v1');
        ids.push(created.body.id);
        expect(await deployed(server, created.body.id)).toMatchObject({
          status: 'DEPLOYED',
        });
      }
      const { applicationId } = (
        await request(server).get(`/api/fleet/deployments/${ids[0]}`)
      ).body;
      const release = await request(server)
        .post(`/api/fleet/applications/${applicationId}/releases`)
        .send({ version: 'v2' });
      expect(release.status).toBe(201);
      expect(release.body).toMatchObject({ version: 'v2', image: null });
      for (const id of ids) {
        expect(await deployed(server, id)).toMatchObject({
          status: 'DEPLOYED',
          revision: 2,
        });
        const revisions = await request(server).get(
          `/api/fleet/deployments/${id}/revisions`,
        );
        expect(revisions.body.items[0].source).toMatchObject({
          version: 'v2',
          commit: commits.v2,
        });
      }
      for (const cluster of ['east', 'west']) {
        expect(
          live(sim, cluster, namespace, 'Job', 'inventory-migrate'),
        ).toBeDefined();
      }

      const ledger = await deploy(server, 'ledger', 'east');
      const canary = await request(server)
        .post(`/api/fleet/applications/${ledger.body.applicationId}/releases`)
        .send({
          clusters: ['east'],
          strategy: { canary: { steps: [{ setWeight: 50 }, { pause: {} }] } },
        });
      expect(canary.status).toBe(400);
      expect(canary.body.error.message).toMatch(
        /A progressive release steers one Deployment/,
      );
    });

    it('refuses a version that does not exist (400), recording nothing', async () => {
      const { server, stores } = await start();
      const refused = await deploy(server, 'inventory', 'east', 'v9');
      expect(refused.status).toBe(400);
      expect(refused.body.error.message).toMatch(/No manifests at .*v9/);
      expect(await stores.deployments.listDeployments({})).toEqual([]);
    });
  },
);
