/*
 * The manifest-source extension point, through the whole backend and the simulator: a backend
 * module adds a source, and a deploy of an application it applies to applies that source's
 * objects (with Fleet's ownership marks); every other application gets Fleet's generated
 * workload; a source's object that claims another owner is refused.
 */
import { createBackendModule } from '@backstage/backend-plugin-api';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import {
  fleetManifestSourcesExtensionPoint,
  type FleetManifestRenderRequest,
} from '@cnp/plugin-fleet-node';
import type { KubernetesObject } from '@kubernetes/client-node';
import request from 'supertest';
import { useSimulator } from '@cnp/kube-simulator';
import { startFleetTestBackend } from './testBackend';
import { createTestDatabases } from './testing/databases';

jest.setTimeout(60_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east'] });

const component = (name: string) => ({
  apiVersion: 'backstage.io/v1alpha1',
  kind: 'Component',
  metadata: { name, namespace: 'default' },
  spec: { type: 'service', lifecycle: 'production', owner: 'team-a' },
});

const SOURCED = 'component:default/sourced';
const THIEF = 'component:default/thief';

/** What the module's source was asked to render. */
const rendered: FleetManifestRenderRequest[] = [];

/** The component's own manifests, as a repository would hold them: no Fleet labels. */
function repositoryManifests(
  asked: FleetManifestRenderRequest,
): KubernetesObject[] {
  const { name } = asked.application;
  const labels = { app: name, source: 'repository' };
  return [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, labels },
      spec: {
        replicas: asked.spec.replicas ?? 1,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: {
            containers: [
              {
                name: 'app',
                image: asked.spec.image,
                ports: [{ containerPort: 9090 }],
              },
            ],
          },
        },
      },
    } as KubernetesObject,
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, labels },
      spec: {
        selector: { app: name },
        ports: [{ port: 9090, targetPort: 9090 }],
      },
    } as KubernetesObject,
  ];
}

const repositoryManifestsModule = createBackendModule({
  pluginId: 'fleet',
  moduleId: 'test-repository-manifests',
  register(env) {
    env.registerInit({
      deps: { sources: fleetManifestSourcesExtensionPoint },
      async init({ sources }) {
        sources.addManifestSource(
          {
            id: 'repository',
            appliesTo: application => application.entityRef === SOURCED,
            render: async req => {
              rendered.push(req);
              return repositoryManifests(req);
            },
          },
          {
            id: 'thieving',
            appliesTo: application => application.entityRef === THIEF,
            render: async req =>
              repositoryManifests(req).map(object => ({
                ...object,
                metadata: {
                  ...object.metadata,
                  annotations: { 'cnp.io/entity-ref': SOURCED },
                },
              })),
          },
        );
      },
    });
  },
});

async function until(what: string, probe: () => Promise<boolean>) {
  const deadline = Date.now() + 20_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(r => setTimeout(r, 50));
  }
}

const live = (kind: string, name: string) =>
  sim
    .objects('east')
    .find(
      o =>
        o.kind === kind &&
        (o.metadata as { name?: string; namespace?: string }).name === name &&
        (o.metadata as { namespace?: string }).namespace === 'default',
    ) as
    | {
        metadata: {
          labels?: Record<string, string>;
          annotations?: Record<string, string>;
        };
        spec: any;
      }
    | undefined;

describe.each(databases.eachSupportedId())(
  'manifest sources added by a module (%s)',
  databaseId => {
    async function start() {
      const knex = await databases.init(databaseId);
      const started = await startFleetTestBackend({
        knex,
        kubeconfigDir: sim.kubeconfigDir,
        features: [
          repositoryManifestsModule,
          catalogServiceMock.factory({
            entities: [
              component('sourced'),
              component('plain'),
              component('thief'),
            ],
          }),
        ],
      });
      await request(started.server).post('/api/fleet/health/run').expect(200);
      return started;
    }

    async function deploy(
      server: Awaited<ReturnType<typeof start>>['server'],
      entityRef: string,
    ) {
      const created = await request(server)
        .post('/api/fleet/deployments')
        .send({ entityRef, cluster: 'east', image: 'nginx:1.27', replicas: 2 })
        .expect(201);
      return created.body as { id: string; status: string };
    }

    beforeEach(() => {
      rendered.length = 0;
    });

    it("applies the source's objects, with Fleet's ownership marks, and follows their rollout", async () => {
      const { server } = await start();
      const deployment = await deploy(server, SOURCED);
      expect(rendered).toHaveLength(1);
      expect(rendered[0]).toMatchObject({
        application: { entityRef: SOURCED, name: 'sourced' },
        spec: { image: 'nginx:1.27', replicas: 2 },
        revision: { image: 'nginx:1.27', replicas: 2 },
        cluster: { name: 'east' },
        namespace: 'default',
      });

      const applied = live('Deployment', 'sourced');
      expect(applied?.metadata.labels).toEqual({
        app: 'sourced',
        source: 'repository',
        'app.kubernetes.io/managed-by': 'fleet',
        'backstage.io/kubernetes-id': 'sourced',
      });
      expect(applied?.metadata.annotations).toMatchObject({
        'cnp.io/entity-ref': SOURCED,
      });
      expect(applied?.spec.template.spec.containers[0]).toMatchObject({
        image: 'nginx:1.27',
        ports: [{ containerPort: 9090 }],
      });
      expect(live('Service', 'sourced')?.spec.ports[0].port).toBe(9090);
      // Nothing of the generated workload: no probes, no PodDisruptionBudget.
      expect(
        applied?.spec.template.spec.containers[0].readinessProbe,
      ).toBeUndefined();
      expect(live('PodDisruptionBudget', 'sourced')).toBeUndefined();

      await until('the rollout of the sourced Deployment', async () => {
        const current = await request(server).get(
          `/api/fleet/deployments/${deployment.id}`,
        );
        return current.body.status === 'DEPLOYED';
      });
    });

    it('gives an application no added source applies to the generated workload', async () => {
      const { server } = await start();
      await deploy(server, 'component:default/plain');
      expect(rendered).toHaveLength(0);
      const applied = live('Deployment', 'plain');
      expect(applied?.metadata.labels).toMatchObject({
        'app.kubernetes.io/name': 'plain',
        'app.kubernetes.io/managed-by': 'fleet',
      });
      expect(
        applied?.spec.template.spec.containers[0].readinessProbe,
      ).toBeDefined();
      expect(live('PodDisruptionBudget', 'plain')).toBeDefined();
    });

    it("refuses a source's object that claims another owner, and applies nothing", async () => {
      const { server } = await start();
      const deployment = await deploy(server, THIEF);
      const current = await request(server)
        .get(`/api/fleet/deployments/${deployment.id}`)
        .expect(200);
      expect(current.body).toMatchObject({
        status: 'FAILED',
        statusReason: 'OWNERSHIP_CONFLICT',
      });
      expect(current.body.message).toMatch(
        /manifest source 'thieving' rendered Deployment default\/thief for component:default\/sourced/,
      );
      expect(live('Deployment', 'thief')).toBeUndefined();
      expect(live('Service', 'thief')).toBeUndefined();
    });
  },
);
