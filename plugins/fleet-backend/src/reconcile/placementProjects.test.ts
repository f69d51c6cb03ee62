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
import { RECONCILE_TASK_ID } from './ReconcileWorker';

/*
 * The reconcile places an application by label selector with no caller to ask: it places it
 * only on the clusters of the component's project, and lists the others as refused, with the
 * rule, on the application.
 */

jest.setTimeout(60_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east', 'west'], readyDelayMs: 50 });

describe.each(databases.eachSupportedId())(
  'placement within projects (%s)',
  databaseId => {
    it("places by selector only on the project's clusters and shows the others refused with the rule", async () => {
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
            // Every cluster: none has the label.
            placement: {
              clusterSelector: {
                matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }],
              },
            },
          })
          .expect(201);
        await scheduler.triggerTask(RECONCILE_TASK_ID);
        const deployments = await request(backend.server)
          .get('/api/fleet/deployments?entityRef=component:default/payments')
          .expect(200);
        expect(deployments.body.items.map((d: any) => d.cluster)).toEqual([
          'east',
        ]);
        const application = await request(backend.server)
          .get(`/api/fleet/applications/${created.body.id}`)
          .expect(200);
        expect(application.body.placementRefused).toEqual([
          {
            cluster: 'west',
            reason: expect.stringContaining(
              "cluster 'west' is not in project payments",
            ),
          },
        ]);
        expect(
          sim.objects('west').filter(o => o.kind === 'Deployment'),
        ).toEqual([]);
      } finally {
        await backend.stop();
      }
    });
  },
);
