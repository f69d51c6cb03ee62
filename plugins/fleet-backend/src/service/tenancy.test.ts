import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import type { Entity } from '@backstage/catalog-model';
import request from 'supertest';
import { useSimulator } from '@cnp/kube-simulator';
import { startFleetTestBackend } from '../testBackend';
import { createTestDatabases, snapshotFleetTables } from '../testing/databases';
import { eventually } from '../testing/eventually';

/*
 * Projects: what a team's components may make Fleet touch, with Fleet's own credentials, on
 * clusters shared by many teams. A write outside the component's project is a 403 naming the
 * project and the rule, and nothing is written, neither in Fleet's tables nor on a cluster.
 */

jest.setTimeout(90_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east', 'west'] });

function component(name: string, owner: string): Entity {
  return {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Component',
    metadata: { name, namespace: 'default' },
    spec: { type: 'service', lifecycle: 'production', owner },
  };
}

/** A component whose catalog entry opens its deploys to `deployers` (cnp.io/deployers). */
function openTo(name: string, owner: string, deployers: string): Entity {
  const entity = component(name, owner);
  entity.metadata.annotations = { 'cnp.io/deployers': deployers };
  return entity;
}

const entities = [
  component('payments', 'group:default/payments'),
  component('payments-admin', 'payments'),
  component('ledger', 'group:default/finance'),
  component('stray', 'group:default/nobody'),
  // Its author names finance as its owner and their own group as its deployers.
  openTo('ledger-copy', 'group:default/finance', 'guests'),
  openTo('ledger-ops', 'group:default/finance', 'group:default/finance'),
];

const projects = [
  {
    name: 'payments',
    owners: ['group:default/payments'],
    clusters: { names: ['east'] },
    namespaces: ['payments', 'payments-*'],
    secrets: ['payments-*'],
    ingressHosts: ['*.payments.example.com'],
  },
  {
    name: 'finance',
    owners: ['finance'],
    namespaces: ['finance'],
    secrets: ['ledger-*'],
    ingressHosts: ['*.finance.example.com'],
  },
];

const PAYMENTS = 'component:default/payments';

describe.each(databases.eachSupportedId())(
  'projects over HTTP (%s)',
  databaseId => {
    const running: Array<{ stop(): Promise<void> }> = [];
    afterEach(async () => {
      await Promise.all(running.splice(0).map(b => b.stop()));
    });

    async function start() {
      const knex = await databases.init(databaseId);
      const started = await startFleetTestBackend({
        knex,
        kubeconfigDir: sim.kubeconfigDir,
        features: [catalogServiceMock.factory({ entities })],
        config: {
          fleet: {
            discovery: { kubeconfigDir: sim.kubeconfigDir },
            health: {
              probeTimeout: { seconds: 2 },
              minOutage: { seconds: 0 },
              manualMinInterval: { seconds: 0 },
            },
            deploy: { pollInterval: { milliseconds: 100 } },
            projects,
          },
        },
      });
      running.push(started.backend);
      await request(started.server).post('/api/fleet/health/run').expect(200);
      return { ...started, knex };
    }

    /** The request is refused with a 403 saying `rule`, and no row and no object changed. */
    async function expectRefusedUntouched(
      started: Awaited<ReturnType<typeof start>>,
      send: () => request.Test,
      rule: string,
      status = 403,
    ) {
      const before = await snapshotFleetTables(started.knex);
      const objects = JSON.stringify([
        sim.objects('east'),
        sim.objects('west'),
      ]);
      const res = await send();
      expect({ status: res.status, message: res.body.error?.message }).toEqual({
        status,
        message: expect.stringContaining(rule),
      });
      expect(await snapshotFleetTables(started.knex)).toBe(before);
      expect(JSON.stringify([sim.objects('east'), sim.objects('west')])).toBe(
        objects,
      );
    }

    it("refuses a namespace outside the component's project (argocd), naming the project, and creates nothing", async () => {
      const started = await start();
      await expectRefusedUntouched(
        started,
        () =>
          request(started.server)
            .post('/api/fleet/applications')
            .send({
              entityRef: PAYMENTS,
              spec: {
                image: 'nginx:1.27',
                namespace: 'argocd',
                tolerations: [{ operator: 'Exists' }],
              },
              placement: { clusters: ['east'] },
            }),
        "namespace 'argocd' is not in project payments",
      );
      expect(
        sim
          .objects('east')
          .filter(o => o.kind === 'Namespace' && o.metadata.name === 'argocd'),
      ).toEqual([]);
    });

    it("refuses an env reference to a Secret outside the component's project (another team's admin Secret)", async () => {
      const started = await start();
      await expectRefusedUntouched(
        started,
        () =>
          request(started.server)
            .post('/api/fleet/applications')
            .send({
              entityRef: PAYMENTS,
              spec: {
                image: 'nginx:1.27',
                namespace: 'payments',
                env: {
                  PASSWORD: {
                    valueFrom: {
                      secretKeyRef: {
                        name: 'argocd-initial-admin-secret',
                        key: 'password',
                      },
                    },
                  },
                },
              },
            }),
        "Secret of PASSWORD: 'argocd-initial-admin-secret' is not in project payments",
      );
    });

    it('refuses a system namespace, and a namespace of another project on a change', async () => {
      const started = await start();
      await expectRefusedUntouched(
        started,
        () =>
          request(started.server)
            .post('/api/fleet/applications')
            .send({
              entityRef: PAYMENTS,
              spec: { image: 'nginx:1.27', namespace: 'kube-system' },
            }),
        "namespace 'kube-system' is a system namespace",
      );
      const created = await request(started.server)
        .post('/api/fleet/applications')
        .send({
          entityRef: PAYMENTS,
          spec: { image: 'nginx:1.27', namespace: 'payments' },
        })
        .expect(201);
      await expectRefusedUntouched(
        started,
        () =>
          request(started.server)
            .patch(`/api/fleet/applications/${created.body.id}`)
            .send({ spec: { namespace: 'finance' } }),
        "namespace 'finance' is not in project payments",
      );
    });

    it('refuses wildcard Ingress hosts, hosts and TLS Secrets outside the project, and a host another application holds (409 naming it)', async () => {
      const started = await start();
      const register = (entityRef: string, ingress: object) =>
        request(started.server)
          .post('/api/fleet/applications')
          .send({
            entityRef,
            spec: { image: 'nginx:1.27', namespace: 'payments', ingress },
          });
      await expectRefusedUntouched(
        started,
        () => register(PAYMENTS, { host: '*.example.com' }),
        "Ingress host '*.example.com' is a wildcard",
      );
      await expectRefusedUntouched(
        started,
        () => register(PAYMENTS, { host: 'books.finance.example.com' }),
        "Ingress host 'books.finance.example.com' is not in project payments",
      );
      await expectRefusedUntouched(
        started,
        () =>
          register(PAYMENTS, {
            host: 'shop.payments.example.com',
            tls: { secretName: 'ledger-tls' },
          }),
        "TLS Secret 'ledger-tls' is not in project payments",
      );
      await register(PAYMENTS, {
        host: 'shop.payments.example.com',
        tls: { secretName: 'payments-tls' },
      }).expect(201);
      await expectRefusedUntouched(
        started,
        () =>
          register('component:default/payments-admin', {
            host: 'shop.payments.example.com',
          }),
        "Ingress host 'shop.payments.example.com' is already used by component:default/payments",
        409,
      );
    });

    it('refuses clusters outside the project on a deploy and a placement, and components of no project', async () => {
      const started = await start();
      await request(started.server)
        .post('/api/fleet/applications')
        .send({
          entityRef: PAYMENTS,
          spec: { image: 'nginx:1.27', namespace: 'payments' },
        })
        .expect(201);
      await expectRefusedUntouched(
        started,
        () =>
          request(started.server).post('/api/fleet/deployments').send({
            entityRef: PAYMENTS,
            cluster: 'west',
            image: 'nginx:1.27',
          }),
        "cluster 'west' is not in project payments",
      );
      await expectRefusedUntouched(
        started,
        () =>
          request(started.server)
            .post('/api/fleet/applications')
            .send({
              entityRef: 'component:default/payments-admin',
              spec: { image: 'nginx:1.27', namespace: 'payments' },
              placement: { clusters: ['west'] },
            }),
        "cluster 'west' is not in project payments",
      );
      await expectRefusedUntouched(
        started,
        () =>
          request(started.server)
            .post('/api/fleet/applications')
            .send({
              entityRef: 'component:default/stray',
              spec: { image: 'nginx:1.27' },
            }),
        'component:default/stray belongs to no Fleet project',
      );
    });

    it("refuses a component opened to deployers outside its project: no way into another team's namespaces", async () => {
      const started = await start();
      const register = (name: string) =>
        request(started.server)
          .post('/api/fleet/applications')
          .send({
            entityRef: `component:default/${name}`,
            spec: {
              image: 'nginx:1.27',
              namespace: 'finance',
              env: {
                PASSWORD: {
                  valueFrom: {
                    secretKeyRef: { name: 'ledger-db', key: 'password' },
                  },
                },
              },
            },
          });
      await expectRefusedUntouched(
        started,
        () => register('ledger-copy'),
        'component:default/ledger-copy names group:default/guests in its cnp.io/deployers annotation, which is not among the owners of its project finance (group:default/finance)',
      );
      await expectRefusedUntouched(
        started,
        () =>
          request(started.server).post('/api/fleet/deployments').send({
            entityRef: 'component:default/ledger-copy',
            cluster: 'west',
            image: 'nginx:1.27',
          }),
        'is not among the owners of its project finance',
      );
      // Opened to a group of its own project, the same component is finance's as before.
      await register('ledger-ops').expect(201);
    });

    it("refuses a rollback to a revision recorded with another project's Secret, and writes nothing", async () => {
      const started = await start();
      await request(started.server)
        .post('/api/fleet/applications')
        .send({
          entityRef: PAYMENTS,
          spec: { image: 'nginx:1.27', namespace: 'payments', replicas: 1 },
        })
        .expect(201);
      const first = await request(started.server)
        .post('/api/fleet/deployments')
        .send({ entityRef: PAYMENTS, cluster: 'east' })
        .expect(201);
      // A revision recorded before the project existed (or under another owner) reading
      // finance's Secret; then a deploy within the project.
      await started.stores.deployments.startRevision(
        first.body.id,
        {
          image: 'nginx:1.26',
          namespace: 'payments',
          env: {
            DB: {
              valueFrom: { secretKeyRef: { name: 'ledger-db', key: 'p' } },
            },
          },
          cause: 'deploy',
          createdBy: 'test',
        },
        'seeded',
      );
      await request(started.server)
        .post('/api/fleet/deployments')
        .send({ entityRef: PAYMENTS, cluster: 'east', image: 'nginx:1.28' })
        .expect(201);
      // The deploy answers before its rollout ends: until it is DEPLOYED and its pod ready (the
      // pod may turn ready a moment after the Deployment's status), the cluster's objects and
      // Fleet's rows still change, whatever the refused rollback does.
      await eventually(async () => {
        expect(
          await started.stores.deployments.getDeployment(first.body.id),
        ).toMatchObject({ status: 'DEPLOYED', image: 'nginx:1.28' });
        const pods = sim
          .objects('east')
          .filter(
            o =>
              o.kind === 'Pod' &&
              o.metadata.namespace === 'payments' &&
              o.metadata.labels?.['app.kubernetes.io/name'] === 'payments',
          );
        expect(
          pods.map(p => ({
            image: p.spec.containers[0].image,
            ready: p.status.conditions.find((c: any) => c.type === 'Ready')
              ?.status,
          })),
        ).toEqual([{ image: 'nginx:1.28', ready: 'True' }]);
      });
      await expectRefusedUntouched(
        started,
        () =>
          request(started.server)
            .post(`/api/fleet/deployments/${first.body.id}/rollback`)
            .send({ toRevision: 2 }),
        "revision refused: Secret of DB: 'ledger-db' is not in project payments",
      );
    });

    it('creates only a namespace the project names exactly, labelled as Fleet’s; a namespace matched by a pattern must exist', async () => {
      const started = await start();
      const deployIn = async (namespace: string) => {
        const app = await request(started.server)
          .post('/api/fleet/applications')
          .send({
            entityRef: PAYMENTS,
            spec: { image: 'nginx:1.27', namespace, replicas: 1 },
          })
          .expect(201);
        const deployed = await request(started.server)
          .post('/api/fleet/deployments')
          .send({ entityRef: PAYMENTS, cluster: 'east' })
          .expect(201);
        return { app: app.body, deployment: deployed.body };
      };
      const namespaces = () =>
        sim.objects('east').filter(o => o.kind === 'Namespace');

      const patterned = await deployIn('payments-blue');
      expect(patterned.deployment.status).toBe('FAILED');
      expect(namespaces().map(n => n.metadata.name)).not.toContain(
        'payments-blue',
      );
      await request(started.server)
        .delete(`/api/fleet/deployments/${patterned.deployment.id}?force=true`)
        .expect(202);
      await request(started.server)
        .delete(`/api/fleet/applications/${patterned.app.id}`)
        .expect(202);

      const exact = await deployIn('payments');
      expect(exact.deployment.status).not.toBe('FAILED');
      const created = namespaces().find(n => n.metadata.name === 'payments');
      expect(created?.metadata.labels).toMatchObject({
        'app.kubernetes.io/managed-by': 'fleet',
      });
    });
  },
);
