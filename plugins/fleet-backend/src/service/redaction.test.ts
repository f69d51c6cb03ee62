import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import request from 'supertest';
import { useSimulator } from '@cnp/kube-simulator';
import { startFleetTestBackend } from '../testBackend';
import { createTestDatabases, snapshotFleetTables } from '../testing/databases';
import { initialProgress } from '../progressive/releaseMachine';

// Nothing is shown to a caller who may not see it: the answers of writes that carry a release
// are redacted as the reads are, Secret references only reach those allowed to deploy, and an
// analysis may query only the platform's Prometheus servers.

jest.setTimeout(60_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east', 'west'] });

const GUEST = 'user:default/guest';
const PROMETHEUS = 'http://prometheus.monitoring.svc:9090';
const KUBECONFIG_REASON =
  "kubeconfig file '/srv/fleet/kubeconfigs/prod-admin.yaml' is not readable (ENOENT)";

/**
 * The guest may manage releases and read everything, but is no cluster admin
 * (`fleet.cluster.update`) and may not deploy the component (`fleet.deployment.create`).
 */
const releaseManagerOnly = () =>
  mockServices.permissions.mock({
    authorizeConditional: async requests =>
      requests.map(() => ({ result: AuthorizeResult.ALLOW })),
    authorize: async requests =>
      requests.map(r => ({
        result: ['fleet.cluster.update', 'fleet.deployment.create'].includes(
          r.permission.name,
        )
          ? AuthorizeResult.DENY
          : AuthorizeResult.ALLOW,
      })),
  });

const strategy = (address: string) => ({
  canary: { steps: [{ setWeight: 50 }, { pause: {} }] },
  analysis: {
    templates: [
      {
        name: 'success-rate',
        successCondition: 'result[0] >= 0.99',
        provider: { prometheus: { address, query: 'up' } },
      },
    ],
  },
});

describe.each(databases.eachSupportedId())(
  'What the API shows to whom (%s)',
  databaseId => {
    const running: Array<{ stop(): Promise<void> }> = [];
    afterEach(async () => {
      await Promise.all(running.splice(0).map(b => b.stop()));
    });

    async function start(fleet: Record<string, unknown> = {}) {
      const knex = await databases.init(databaseId);
      const started = await startFleetTestBackend({
        knex,
        kubeconfigDir: sim.kubeconfigDir,
        features: [releaseManagerOnly().factory],
        config: {
          fleet: {
            discovery: { kubeconfigDir: sim.kubeconfigDir },
            health: {
              probeTimeout: { seconds: 2 },
              minOutage: { seconds: 0 },
              manualMinInterval: { seconds: 0 },
            },
            deploy: { pollInterval: { milliseconds: 100 } },
            ...fleet,
          },
        },
      });
      running.push(started.backend);
      const { stores } = started;
      const application = await stores.applications.insertApplication({
        entityRef: 'component:default/payments',
        name: 'payments',
        spec: {
          image: 'nginx:1.27',
          env: {
            API_TOKEN: 'plain-secret-value-91c2',
            DB_PASSWORD: {
              valueFrom: {
                secretKeyRef: { name: 'payments-db-creds', key: 'pg-password' },
              },
            },
          },
        },
      });
      const deployment = await stores.deployments.insertDeployment(
        {
          applicationId: application.id,
          cluster: 'east',
          status: 'DEPLOYED',
          firstRevision: {
            image: 'nginx:1.27',
            cause: 'deploy',
            createdBy: 'test',
          },
        },
        'test',
      );
      return { ...started, knex, application, deployment };
    }

    const as = (who: string) => mockCredentials.user.header(who);

    it('hides secretKeyRef names and keys, and plain values, in GET /applications, revisions and releases from a non-deployer', async () => {
      const { server, stores, application, deployment } = await start();
      await stores.releases.insertRelease({
        id: '0c4b2d6e-1f3a-4b5c-8d7e-9f0a1b2c3d4e',
        applicationId: application.id,
        createdBy: 'test',
        request: { image: 'nginx:1.28', env: application.spec.env },
        targets: [],
        skipped: [],
      });
      await stores.deployments.startRevision(
        deployment.id,
        {
          image: 'nginx:1.28',
          env: application.spec.env,
          cause: 'deploy',
          createdBy: 'test',
        },
        'test',
      );
      let text = '';
      for (const read of [
        '/applications',
        `/applications/${application.id}`,
        `/applications/${application.id}/releases`,
        `/deployments/${deployment.id}/revisions`,
      ]) {
        const res = await request(server)
          .get(`/api/fleet${read}`)
          .set('Authorization', as(GUEST))
          .expect(200);
        text += res.text;
      }
      expect(text).toContain('"DB_PASSWORD":null');
      expect(text).not.toMatch(
        /payments-db-creds|pg-password|secretKeyRef|plain-secret-value/,
      );
    });

    it('redacts the answers of POST /applications/:id/releases and of promote, pause, resume and abort for a non-admin who may not deploy', async () => {
      const { server, stores, application } = await start();
      const created = await request(server)
        .post(`/api/fleet/applications/${application.id}/releases`)
        .set('Authorization', as(GUEST))
        .send({
          image: 'nginx:1.28',
          clusters: ['east'],
          env: { API_TOKEN: 'another-plain-value-7a1e' },
        })
        .expect(201);
      expect(created.body.env).toEqual({ API_TOKEN: null });
      expect(created.text).not.toContain('another-plain-value-7a1e');

      const release = await stores.releases.insertRelease({
        id: '6f1c2b9e-0d4a-4e8b-9a53-2f7c1d0e4b11',
        applicationId: application.id,
        createdBy: 'test',
        request: { image: 'nginx:1.28', env: { API_TOKEN: 'plain-3' } },
        strategy: { canary: { steps: [{ setWeight: 50 }, { pause: {} }] } },
        phase: 'PROGRESSING',
        progress: {
          ...initialProgress([['east']], new Date()),
          clusters: [
            {
              cluster: 'east',
              wave: 0,
              state: 'RUNNING',
              stepIndex: 1,
              weight: 50,
              awaitingPromote: true,
              failures: 0,
              inconclusive: 0,
              message: `cannot read what east serves: ${KUBECONFIG_REASON}`,
            },
          ],
        },
        targets: [],
        skipped: [{ cluster: 'west', reason: KUBECONFIG_REASON }],
      });
      for (const action of ['pause', 'resume', 'promote', 'abort']) {
        const res = await request(server)
          .post(`/api/fleet/releases/${release.id}/${action}`)
          .set('Authorization', as(GUEST))
          .expect(200);
        expect({ action, text: res.text }).toEqual({
          action,
          text: expect.not.stringMatching(
            /\/srv\/fleet|prod-admin|ENOENT|plain-3/,
          ),
        });
        expect(res.body.skipped).toEqual([
          {
            cluster: 'west',
            reason: 'the details are shown to cluster admins',
          },
        ]);
      }
    });

    it('refuses a strategy whose Prometheus address is not in fleet.analysis.prometheus.allowedAddresses with a 400 naming both, writing nothing', async () => {
      const { server, knex, application } = await start({
        analysis: { prometheus: { allowedAddresses: [PROMETHEUS] } },
      });
      const before = await snapshotFleetTables(knex);
      for (const address of [
        'http://127.0.0.1:7007/internal-admin',
        `${PROMETHEUS}/internal-admin`,
        'http://prometheus.monitoring.svc.evil.example:9090',
        'http://prometheus.monitoring.svc:9090@127.0.0.1:7007',
      ]) {
        const res = await request(server)
          .post(`/api/fleet/applications/${application.id}/releases`)
          .set('Authorization', as(GUEST))
          .send({ image: 'nginx:1.28', strategy: strategy(address) })
          .expect(400);
        expect(res.body.error.message).toContain(`'${address}'`);
        expect(res.body.error.message).toContain(
          'fleet.analysis.prometheus.allowedAddresses',
        );
      }
      expect(await snapshotFleetTables(knex)).toBe(before);
      // The listed one, in another spelling, passes this check.
      const ok = await request(server)
        .post(`/api/fleet/applications/${application.id}/releases`)
        .set('Authorization', as(GUEST))
        .send({ image: 'nginx:1.28', strategy: strategy(`${PROMETHEUS}/`) });
      expect(ok.text).not.toContain('allowedAddresses');
      expect(ok.status).toBe(201);
    });

    it('accepts no analysis while no Prometheus address is allowed (fail closed)', async () => {
      const { server, application } = await start();
      const res = await request(server)
        .post(`/api/fleet/applications/${application.id}/releases`)
        .set('Authorization', as(GUEST))
        .send({ image: 'nginx:1.28', strategy: strategy(PROMETHEUS) })
        .expect(400);
      expect(res.body.error.message).toMatch(
        /fleet\.analysis\.prometheus\.allowedAddresses \(it lists no address/,
      );
    });
  },
);
