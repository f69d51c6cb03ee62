import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import type {
  SchedulerService,
  ServiceFactory,
} from '@backstage/backend-plugin-api';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import request from 'supertest';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import { fleetPlugin } from '../plugin';

/*
 * A preview is a server-side dry run on each cluster named: it reads the cluster as a deploy
 * would, so it holds to the same project rules as a deploy, a rollback and a release.
 */

jest.setTimeout(60_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east', 'west'], readyDelayMs: 50 });

describe.each(databases.eachSupportedId())(
  'preview within projects (%s)',
  databaseId => {
    it("previews only on the project's clusters (403 elsewhere)", async () => {
      const scheduler = mockServices.scheduler() as SchedulerService & {
        factory(options: { skipTaskRunOnStartup: boolean }): ServiceFactory;
      };
      const backend = await startTestBackend({
        features: [
          fleetPlugin,
          mockServices.database.factory({
            knex: await databases.init(databaseId),
          }),
          mockServices.rootConfig.factory({
            data: {
              fleet: {
                discovery: { kubeconfigDir: sim.kubeconfigDir },
                health: { probeTimeout: { seconds: 2 } },
                reconcile: { watch: false },
                deploy: { pollInterval: { milliseconds: 100 } },
                projects: [
                  {
                    name: 'payments',
                    owners: ['group:default/payments'],
                    clusters: { names: ['east'] },
                    namespaces: ['default'],
                  },
                ],
              },
            },
          }),
          scheduler.factory({ skipTaskRunOnStartup: true }),
          catalogServiceMock.factory({
            entities: [
              {
                apiVersion: 'backstage.io/v1alpha1',
                kind: 'Component',
                metadata: { name: 'payments', namespace: 'default' },
                spec: { type: 'service', owner: 'group:default/payments' },
              },
            ],
          }),
        ],
      });
      try {
        await request(backend.server).post('/api/fleet/health/run').expect(200);
        const created = await request(backend.server)
          .post('/api/fleet/applications')
          .send({
            entityRef: 'component:default/payments',
            spec: { image: 'nginx:1.27', replicas: 1 },
          })
          .expect(201);
        const preview = (clusters: string[]) =>
          request(backend.server)
            .post(`/api/fleet/applications/${created.body.id}/preview`)
            .send({ clusters });
        const inside = await preview(['east']);
        expect(inside.status).toBe(200);
        expect(inside.body.clusters).toEqual([
          expect.objectContaining({ cluster: 'east', status: 'previewed' }),
        ]);
        const outside = await preview(['west']);
        expect(outside.status).toBe(403);
        expect(outside.body.error.message).toContain(
          "cluster 'west' is not in project payments",
        );
      } finally {
        await backend.stop();
      }
    });
  },
);
