import { createMockActionContext } from '@backstage/plugin-scaffolder-node-test-utils';
import type { KubeSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '@cnp/fleet-harness';
import { FleetApiClient } from '@cnp/plugin-fleet-node';
import request from 'supertest';
import { createFleetDeployAction } from './createFleetDeployAction';
import { createFleetRegisterApplicationAction } from './createFleetRegisterApplicationAction';
import { startFleetForActions } from './__testUtils__/fleetForActions';

jest.setTimeout(60_000);

const databases = createTestDatabases();
let sim: KubeSimulator;
let fleet: Awaited<ReturnType<typeof startFleetForActions>>['fleet'];
let client: FleetApiClient;

describe.each(databases.eachSupportedId())('fleet:deploy (%s)', databaseId => {
  beforeAll(async () => {
    ({ sim, fleet, client } = await startFleetForActions(
      databases,
      databaseId,
    ));
  });

  beforeAll(async () => {
    // The application the deploys below use, registered as the template's first step does.
    await createFleetRegisterApplicationAction({ client }).handler(
      createMockActionContext({
        input: {
          entityRef: 'component:default/scaffolded-app',
          spec: {
            image: 'ghcr.io/acme/scaffolded-app:1.0',
            replicas: 2,
            port: 8080,
          },
          placement: { clusters: ['alpha'] },
        },
      }),
    );
  });

  const action = () => createFleetDeployAction({ client, pollIntervalMs: 50 });
  const outputs = (ctx: { output: unknown }) =>
    Object.fromEntries(
      (ctx.output as jest.Mock).mock.calls.map(([name, value]) => [
        name,
        value,
      ]),
    );

  it('passes a version on to Fleet, which takes it only for a component with its own manifests', async () => {
    const ctx = createMockActionContext({
      input: {
        entityRef: 'component:default/scaffolded-app',
        cluster: 'alpha',
        version: 'v2',
      },
    });
    await expect(action().handler(ctx)).rejects.toThrow(
      /Fleet did not deploy component:default\/scaffolded-app to 'alpha': .*a version applies only to those/,
    );
  });

  it('deploys and reports the final status of the rollout', async () => {
    const ctx = createMockActionContext({
      input: {
        entityRef: 'component:default/scaffolded-app',
        cluster: 'alpha',
        replicas: 2,
      },
    });
    await action().handler(ctx);
    expect(outputs(ctx)).toEqual({
      deploymentId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: 'DEPLOYED',
      // What a template shows: words, no id.
      statusText: 'Deployed',
    });
    expect(
      sim
        .objects('alpha')
        .some(
          o =>
            o.kind === 'Deployment' &&
            (o.metadata as { name?: string }).name === 'scaffolded-app',
        ),
    ).toBe(true);
    const events = await request(fleet.server)
      .get(`/api/fleet/deployments/${outputs(ctx).deploymentId}/events`)
      .expect(200);
    expect(
      events.body.items.map((e: { to: string; actor: string }) => [
        e.to,
        e.actor,
      ]),
    ).toEqual([
      ['DEPLOYED', 'fleet-rollout'],
      ['PROGRESSING', 'user:default/mock'],
      ['PENDING', 'user:default/mock'],
    ]);
  });

  it('reports PROGRESSING without waiting when asked not to wait', async () => {
    const ctx = createMockActionContext({
      input: {
        entityRef: 'component:default/no-wait',
        cluster: 'alpha',
        image: 'nginx:1.27',
        waitForRollout: false,
      },
    });
    await action().handler(ctx);
    expect(outputs(ctx)).toMatchObject({ status: 'PROGRESSING' });
  });

  it('fails the step with the 409 reason when the cluster is OFFLINE, and touches nothing', async () => {
    sim.setFault('bravo', { mode: 'down' });
    try {
      await request(fleet.server).post('/api/fleet/health/run').expect(200);
      await request(fleet.server).post('/api/fleet/health/run').expect(200);
      expect(
        (await request(fleet.server).get('/api/fleet/clusters/bravo')).body
          .status,
      ).toBe('OFFLINE');
      const bravoRequests = sim.requestCount('bravo');

      const ctx = createMockActionContext({
        input: {
          entityRef: 'component:default/scaffolded-app',
          cluster: 'bravo',
        },
      });
      await expect(action().handler(ctx)).rejects.toThrow(
        /Fleet did not deploy component:default\/scaffolded-app to 'bravo': Fleet answered 409 Conflict: Cluster 'bravo' is OFFLINE/,
      );
      expect(ctx.output).not.toHaveBeenCalled();
      expect(sim.requestCount('bravo')).toBe(bravoRequests);
      const deployments = await request(fleet.server)
        .get('/api/fleet/deployments?cluster=bravo')
        .expect(200);
      expect(deployments.body.items).toEqual([]);
    } finally {
      sim.setFault('bravo', { mode: 'ok' });
    }
  });

  it('fails the step when the deployment FAILED, with its reason in the output', async () => {
    await request(fleet.server)
      .post('/api/fleet/clusters')
      .send({
        name: 'vaulted',
        endpoint: 'https://10.9.9.9:6443',
        kubeconfigRef: 'secret/vaulted',
      })
      .expect(201);
    const ctx = createMockActionContext({
      input: {
        entityRef: 'component:default/scaffolded-app',
        cluster: 'vaulted',
      },
    });
    await expect(action().handler(ctx)).rejects.toThrow(
      /Deployment of component:default\/scaffolded-app to 'vaulted' FAILED \(CLUSTER_NOT_CONFIGURED\)/,
    );
    expect(outputs(ctx)).toMatchObject({
      status: 'FAILED',
      statusReason: 'CLUSTER_NOT_CONFIGURED',
      statusText: 'Failed (Cluster not configured)',
    });
  });
});
