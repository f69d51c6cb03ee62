/*
 * Release gates through the whole backend and the simulator: a release to prod that waited for
 * its approval starts only with a version staging still verifies when it is approved, and the
 * placement puts nothing on a prod cluster by itself.
 */
import type {
  SchedulerService,
  ServiceFactory,
} from '@backstage/backend-plugin-api';
import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { useSimulator } from '@cnp/kube-simulator';
import request from 'supertest';
import { startFleetTestBackend } from './testBackend';
import { createTestDatabases } from './testing/databases';
import { deployedApplication, waitUntil } from './testing/apiCalls';
import { RECONCILE_TASK_ID } from './reconcile/ReconcileWorker';

jest.setTimeout(120_000);

const databases = createTestDatabases();
const sim = useSimulator({
  clusters: ['stg-a', 'prd-a', 'prd-b'],
  readyDelayMs: 100,
});

const V1 = 'ghcr.io/acme/payments:1.4.0';
const V2 = 'ghcr.io/acme/payments:1.5.0';
const V3 = 'ghcr.io/acme/payments:1.6.0';
const sre = 'group:default/sre';

describe.each(databases.eachSupportedId())('release gates (%s)', databaseId => {
  const name = `gated-${databaseId.toLowerCase().replace(/[^a-z0-9]/g, '')}`;
  const entityRef = `component:default/${name}`;

  it('starts an approved release only with a version staging still verifies', async () => {
    const { backend, server } = await startFleetTestBackend({
      knex: await databases.init(databaseId),
      kubeconfigDir: sim.kubeconfigDir,
      fleet: {
        deploy: {
          namespace: name,
          pollInterval: { milliseconds: 100 },
          progressDeadline: { seconds: 2 },
        },
        reconcile: { watch: false },
      },
      features: [
        mockServices.scheduler.factory(),
        catalogServiceMock.factory({
          entities: [
            {
              apiVersion: 'backstage.io/v1alpha1',
              kind: 'Component',
              metadata: { name, namespace: 'default' },
              spec: { type: 'service', lifecycle: 'production', owner: 'a' },
            },
            {
              apiVersion: 'backstage.io/v1alpha1',
              kind: 'User',
              metadata: { name: 'carol', namespace: 'default' },
              spec: {},
              relations: [{ type: 'memberOf', targetRef: sre }],
            },
          ],
        }),
      ],
    });
    try {
      const { id } = await deployedApplication(server, {
        entityRef,
        image: V1,
        clusters: ['stg-a', 'prd-a'],
      });
      await request(server)
        .patch('/api/fleet/clusters/prd-a')
        .send({ labels: { env: 'prod' } })
        .expect(200);
      await request(server)
        .patch(`/api/fleet/applications/${id}`)
        .send({
          spec: {
            stages: [
              { name: 'staging', clusters: ['stg-a'] },
              {
                name: 'prod',
                clusterSelector: 'env=prod',
                requires: {
                  stage: 'staging',
                  soak: '0s',
                  approvals: { groups: [sre] },
                },
              },
            ],
          },
        })
        .expect(200);
      const release = (body: object) =>
        request(server)
          .post(`/api/fleet/applications/${id}/releases`)
          .send(body);
      const completed = (releaseId: string) =>
        waitUntil(
          async () =>
            (await request(server).get(`/api/fleet/releases/${releaseId}`)).body
              .status,
          status => status === 'COMPLETED',
        );
      const prodImage = async () =>
        (
          await request(server).get(
            `/api/fleet/deployments?entityRef=${entityRef}&cluster=prd-a`,
          )
        ).body.items[0].image;

      // Staging verifies V2; a release to prod takes it and waits for an approval.
      await completed(
        (
          await release({ stage: 'staging', image: V2 }).expect(201)
        ).body.id,
      );
      const waiting = await release({ stage: 'prod' }).expect(201);
      expect(waiting.body).toMatchObject({
        status: 'WAITING_FOR_APPROVAL',
        image: V2,
      });

      // Meanwhile staging moves on to V3: it no longer verifies V2.
      await completed(
        (
          await release({ stage: 'staging', image: V3 }).expect(201)
        ).body.id,
      );

      // The approval cannot start what staging no longer verifies.
      const approval = await request(server)
        .post(`/api/fleet/releases/${waiting.body.id}/approve`)
        .set('Authorization', mockCredentials.user.header('user:default/carol'))
        .send({})
        .expect(409);
      expect(approval.body.error.message).toBe(
        `stage prod requires a version staging verified: staging verified ${V3}, not ${V2}`,
      );
      expect(
        (await request(server).get(`/api/fleet/releases/${waiting.body.id}`))
          .body.status,
      ).toBe('WAITING_FOR_APPROVAL');
      expect(await prodImage()).toBe(V1);

      // The owner who is not an approver cannot drop the approvals that hold them back; an
      // approver can change the stages.
      const noApprovals = {
        spec: {
          stages: [
            { name: 'staging', clusters: ['stg-a'] },
            {
              name: 'prod',
              clusterSelector: 'env=prod',
              requires: { stage: 'staging' },
            },
          ],
        },
      };
      const dropped = await request(server)
        .patch(`/api/fleet/applications/${id}`)
        .send(noApprovals)
        .expect(403);
      expect(dropped.body.error.message).toBe(
        `Only members of ${sre} may change the stages of ${entityRef}: they hold its approvals`,
      );
      // Other changes of the spec stay the owner's.
      await request(server)
        .patch(`/api/fleet/applications/${id}`)
        .send({ spec: { replicas: 1 } })
        .expect(200);

      // Removing the application withdraws the release that waited: nothing may start it.
      await request(server).delete(`/api/fleet/applications/${id}`).expect(202);
      const withdrawn = await request(server)
        .get(`/api/fleet/releases/${waiting.body.id}`)
        .expect(200);
      expect(withdrawn.body).toMatchObject({
        status: 'REJECTED',
        gate: {
          decisions: [
            expect.objectContaining({
              decision: 'REJECTED',
              comment: 'the application was removed',
            }),
          ],
        },
      });
      expect(
        (await request(server).get('/api/fleet/releases').expect(200)).body
          .items,
      ).toEqual([]);
    } finally {
      await backend.stop();
    }
  });

  it('places the application on no cluster of a stage that takes versions by releases only', async () => {
    const scheduler = mockServices.scheduler() as SchedulerService & {
      factory(options: { skipTaskRunOnStartup: boolean }): ServiceFactory;
    };
    const placed = `${name}-placed`;
    const placedRef = `component:default/${placed}`;
    const { backend, server } = await startFleetTestBackend({
      knex: await databases.init(databaseId),
      kubeconfigDir: sim.kubeconfigDir,
      fleet: {
        deploy: { namespace: placed, pollInterval: { milliseconds: 100 } },
        reconcile: { watch: false },
      },
      features: [
        scheduler.factory({ skipTaskRunOnStartup: true }),
        catalogServiceMock.factory({
          entities: [
            {
              apiVersion: 'backstage.io/v1alpha1',
              kind: 'Component',
              metadata: { name: placed, namespace: 'default' },
              spec: { type: 'service', lifecycle: 'production', owner: 'a' },
            },
          ],
        }),
      ],
    });
    try {
      const { id } = await deployedApplication(server, {
        entityRef: placedRef,
        image: V1,
        clusters: ['stg-a', 'prd-a'],
      });
      for (const cluster of ['prd-a', 'prd-b']) {
        await request(server)
          .patch(`/api/fleet/clusters/${cluster}`)
          .send({ labels: { env: 'prod' } })
          .expect(200);
      }
      await request(server)
        .patch(`/api/fleet/applications/${id}`)
        .send({
          spec: {
            stages: [
              { name: 'staging', clusters: ['stg-a'] },
              {
                name: 'prod',
                clusterSelector: 'env=prod',
                requires: { stage: 'staging' },
              },
            ],
          },
        })
        .expect(200);

      // A version staging never ran, and a placement that reaches a new prod cluster.
      await request(server)
        .patch(`/api/fleet/applications/${id}`)
        .send({
          spec: { image: V3 },
          placement: { clusters: ['stg-a', 'prd-a', 'prd-b'] },
        })
        .expect(200);
      await scheduler.triggerTask(RECONCILE_TASK_ID);

      const onPrdB = await request(server)
        .get(`/api/fleet/deployments?entityRef=${placedRef}&cluster=prd-b`)
        .expect(200);
      expect(onPrdB.body.items).toEqual([]);
      const application = await request(server)
        .get(`/api/fleet/applications/${id}`)
        .expect(200);
      expect(application.body.placementRefused).toEqual([
        {
          cluster: 'prd-b',
          reason: expect.stringContaining("Cluster 'prd-b' is in stage 'prod'"),
        },
      ]);
    } finally {
      await backend.stop();
    }
  });
});
