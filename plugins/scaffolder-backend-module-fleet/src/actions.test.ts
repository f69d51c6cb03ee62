import type { DiscoveryService } from '@backstage/backend-plugin-api';
import {
  mockCredentials,
  mockServices,
  startTestBackend,
} from '@backstage/backend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { scaffolderActionsExtensionPoint } from '@backstage/plugin-scaffolder-node';
import { createMockActionContext } from '@backstage/plugin-scaffolder-node-test-utils';
import type { KubeSimulator } from '@cnp/kube-simulator';
import {
  createTestDatabases,
  startFleetTestBackend,
  startSimulator,
} from '@cnp/fleet-harness';
import { FleetApiClient, type FleetService } from '@cnp/plugin-fleet-node';
import request from 'supertest';
import { createFleetDeployAction } from './createFleetDeployAction';
import { createFleetReleaseAction } from './createFleetReleaseAction';
import { createFleetRegisterApplicationAction } from './createFleetRegisterApplicationAction';
import { scaffolderModuleFleetActions } from './scaffolderModuleFleetActions';

jest.setTimeout(60_000);

const databases = createTestDatabases();
let sim: KubeSimulator;
let fleet: Awaited<ReturnType<typeof startFleetTestBackend>>;
let client: FleetApiClient;
/** What the Fleet API was asked to authorize, and for whom. */
const authorized: Array<{
  permission: string;
  resourceRef?: string;
  user?: string;
}> = [];

beforeAll(async () => {
  sim = await startSimulator({
    clusters: ['alpha', 'bravo'],
    readyDelayMs: 50,
  });
  const permissions = mockServices.permissions.mock({
    // The caller's decision on fleet.cluster.deploy in general, kept with what it places.
    authorizeConditional: async (requests, options) =>
      requests.map(() => ({
        result:
          (options?.credentials.principal as { userEntityRef?: string })
            .userEntityRef === 'user:default/mallory'
            ? AuthorizeResult.DENY
            : AuthorizeResult.ALLOW,
      })),
    authorize: async (requests, options) => {
      const user = (
        options?.credentials.principal as { userEntityRef?: string }
      ).userEntityRef;
      return requests.map(r => {
        authorized.push({
          permission: r.permission.name,
          resourceRef: (r as { resourceRef?: string }).resourceRef,
          user,
        });
        return {
          result:
            user === 'user:default/mallory'
              ? AuthorizeResult.DENY
              : AuthorizeResult.ALLOW,
        };
      });
    },
  });
  fleet = await startFleetTestBackend({
    knex: await databases.init('SQLITE_3'),
    kubeconfigDir: sim.kubeconfigDir,
    features: [permissions.factory],
  });
  const port = fleet.server.port();
  const discovery: DiscoveryService = {
    getBaseUrl: async pluginId => `http://localhost:${port}/api/${pluginId}`,
    getExternalBaseUrl: async pluginId =>
      `http://localhost:${port}/api/${pluginId}`,
  };
  // The scaffolder's own auth: it asks for a token to Fleet on behalf of the task's initiator.
  client = FleetApiClient.create({
    discovery,
    auth: mockServices.auth({ pluginId: 'scaffolder' }),
  });
  await request(fleet.server).post('/api/fleet/health/run').expect(200);
});

describe('fleet:application:register', () => {
  const action = () => createFleetRegisterApplicationAction({ client });

  it('records the application with origin scaffolded, on behalf of the initiator', async () => {
    const ctx = createMockActionContext({
      input: {
        entityRef: 'component:default/scaffolded-app',
        spec: {
          image: 'ghcr.io/acme/scaffolded-app:1.0',
          replicas: 2,
          port: 8080,
        },
        placement: { clusters: ['alpha'] },
      },
    });
    authorized.length = 0;
    await action().handler(ctx);

    const [applicationId] = (ctx.output as jest.Mock).mock.calls
      .filter(([name]) => name === 'applicationId')
      .map(([, value]) => value);
    expect(applicationId).toMatch(/^[0-9a-f-]{36}$/);
    const apps = await request(fleet.server)
      .get('/api/fleet/applications?entityRef=component:default/scaffolded-app')
      .expect(200);
    expect(apps.body.items).toEqual([
      expect.objectContaining({
        id: applicationId,
        origin: 'scaffolded',
        name: 'scaffolded-app',
        spec: {
          image: 'ghcr.io/acme/scaffolded-app:1.0',
          replicas: 2,
          port: 8080,
        },
        placement: { clusters: ['alpha'] },
      }),
    ]);
    expect(authorized).toEqual([
      // The registration: the component, then the cluster its placement names.
      {
        permission: 'fleet.deployment.create',
        resourceRef: 'component:default/scaffolded-app',
        user: 'user:default/mock',
      },
      {
        permission: 'fleet.cluster.deploy',
        resourceRef: 'alpha',
        user: 'user:default/mock',
      },
      // The test's read of the application (who may see its env values).
      {
        permission: 'fleet.deployment.create',
        resourceRef: 'component:default/scaffolded-app',
        user: 'user:default/mock',
      },
    ]);
  });

  it("fails the step with Fleet's words when Fleet refuses", async () => {
    const again = createMockActionContext({
      input: {
        entityRef: 'component:default/scaffolded-app',
        spec: { image: 'nginx:1.27' },
      },
    });
    await expect(action().handler(again)).rejects.toThrow(
      /Fleet did not register component:default\/scaffolded-app: Fleet answered 409 Conflict: .*already/,
    );

    const denied = {
      ...createMockActionContext({
        input: {
          entityRef: 'component:default/not-mine',
          spec: { image: 'nginx:1.27' },
        },
      }),
      getInitiatorCredentials: async () =>
        mockCredentials.user('user:default/mallory'),
    };
    await expect(action().handler(denied)).rejects.toThrow(
      /403 Forbidden: Not allowed: fleet.deployment.create/,
    );
    const unknownCluster = createMockActionContext({
      input: {
        entityRef: 'component:default/elsewhere',
        spec: { image: 'nginx:1.27' },
        placement: { clusters: ['nope'] },
      },
    });
    await expect(action().handler(unknownCluster)).rejects.toThrow(
      /400 Bad Request: Placement names an unknown cluster 'nope'/,
    );
    const apps = await request(fleet.server)
      .get('/api/fleet/applications')
      .expect(200);
    expect(
      apps.body.items.map((a: { entityRef: string }) => a.entityRef),
    ).not.toContain('component:default/not-mine');
  });

  it('changes nothing in a dry run', async () => {
    const ctx = {
      ...createMockActionContext({
        input: {
          entityRef: 'component:default/dry',
          spec: { image: 'nginx:1.27' },
        },
      }),
      isDryRun: true,
    };
    await action().handler(ctx);
    expect(ctx.output).toHaveBeenCalledWith('applicationId', 'dry-run');
    const apps = await request(fleet.server)
      .get('/api/fleet/applications?entityRef=component:default/dry')
      .expect(200);
    expect(apps.body.items).toEqual([]);
  });
});

describe('fleet:deploy', () => {
  const action = () => createFleetDeployAction({ client, pollIntervalMs: 50 });
  const outputs = (ctx: { output: unknown }) =>
    Object.fromEntries(
      (ctx.output as jest.Mock).mock.calls.map(([name, value]) => [
        name,
        value,
      ]),
    );

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
    });
  });
});

describe('fleet:release', () => {
  const outputs = (ctx: { output: unknown }) =>
    Object.fromEntries(
      (ctx.output as jest.Mock).mock.calls.map(([name, value]) => [
        name,
        value,
      ]),
    );

  it('releases a new image to every cluster the component runs on, as the initiator', async () => {
    const entityRef = 'component:default/released-app';
    // (bravo is OFFLINE since the test of the 409 above)
    for (const cluster of ['alpha']) {
      await createFleetDeployAction({ client, pollIntervalMs: 50 }).handler(
        createMockActionContext({
          input: { entityRef, cluster, image: 'nginx:1.27', replicas: 1 },
        }),
      );
    }
    const ctx = createMockActionContext({
      input: { entityRef, image: 'nginx:1.28' },
    });
    await createFleetReleaseAction({ client }).handler(ctx);
    expect(outputs(ctx)).toEqual({
      releaseId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      clusters: ['alpha'],
      skipped: [],
    });
    const deployments = await client.listDeployments({ entityRef });
    expect(
      deployments.map(d => [d.cluster, d.image, d.revision]).sort(),
    ).toEqual([['alpha', 'nginx:1.28', 2]]);
    const events = await request(fleet.server)
      .get(`/api/fleet/deployments/${deployments[0].id}/events`)
      .expect(200);
    expect(
      events.body.items.some(
        (e: { reason: string; actor: string }) =>
          e.reason === 'REVISION_RELEASE' && e.actor === 'user:default/mock',
      ),
    ).toBe(true);
  });

  describe('with a strategy', () => {
    const strategy = {
      waves: [{ clusters: ['alpha'] }, { percent: 50 }, { percent: 100 }],
      canary: {
        steps: [
          { setWeight: 20 },
          { pause: {} },
          { setWeight: 60 },
          { pause: { duration: '30s' } },
          { setWeight: 100 },
        ],
        maxSurge: '25%',
        maxUnavailable: 0,
      },
      analysis: {
        templates: [
          {
            name: 'http-success-rate',
            interval: '10s',
            failureLimit: 1,
            successCondition: 'result[0] >= 0.995',
            provider: {
              prometheus: {
                address: 'http://127.0.0.1:9090',
                query: 'sum(rate(http_requests_total{app="{{app}}"}[2m]))',
              },
            },
          },
        ],
      },
      rollback: { enabled: true, timeout: '15m' },
    };
    /** A Fleet that has the application app-9 and answers a release with `answer`. */
    const fakeFleet = (answer: () => Promise<unknown>) => {
      const fake = {
        listApplications: jest.fn().mockResolvedValue([{ id: 'app-9' }]),
        release: jest.fn().mockImplementation(answer),
      };
      return fake as typeof fake &
        Pick<FleetService, 'listApplications' | 'release'>;
    };

    it('passes the strategy to Fleet unchanged, as the initiator', async () => {
      const fake = fakeFleet(async () => ({
        id: 'rel-9',
        status: 'PROGRESSING',
        targets: [],
        skipped: [],
        progress: { waves: [['alpha'], ['bravo']] },
      }));
      const ctx = createMockActionContext({
        input: {
          entityRef: 'component:default/payments',
          image: 'ghcr.io/acme/payments:1.5.0',
          strategy,
        },
      });
      await createFleetReleaseAction({ client: fake }).handler(ctx);
      expect(fake.release).toHaveBeenCalledWith(
        'app-9',
        {
          image: 'ghcr.io/acme/payments:1.5.0',
          replicas: undefined,
          clusters: undefined,
          strategy,
        },
        { credentials: expect.anything() },
      );
      expect(outputs(ctx)).toEqual({
        releaseId: 'rel-9',
        clusters: ['alpha', 'bravo'],
        skipped: [],
      });
    });

    it('describes an optional strategy in its input schema, keeping keys it does not name', () => {
      const action = createFleetReleaseAction({ client: fakeFleet(jest.fn()) });
      const input = action.schema?.input as {
        required?: string[];
        properties: Record<
          string,
          {
            properties: Record<string, unknown>;
            additionalProperties?: unknown;
          }
        >;
      };
      expect(input.required).toEqual(['entityRef']);
      const described = input.properties.strategy;
      expect(Object.keys(described.properties)).toEqual([
        'waves',
        'canary',
        'analysis',
        'rollback',
      ]);
      // Fleet validates the strategy: the action refuses none of its keys.
      expect(described.additionalProperties).not.toBe(false);
    });

    it('fails the step with the reason Fleet gives for an invalid strategy', async () => {
      const invalid = {
        ...strategy,
        canary: { steps: [{ setWeight: 140 }] },
      };
      // Through the real client, against a Fleet that refuses the strategy with a 400.
      const sent: unknown[] = [];
      const refusing = FleetApiClient.create({
        discovery: {
          getBaseUrl: async () => 'http://fleet.invalid/api/fleet',
          getExternalBaseUrl: async () => 'http://fleet.invalid/api/fleet',
        },
        auth: mockServices.auth({ pluginId: 'scaffolder' }),
        fetch: (async (url: string, init?: RequestInit) => {
          if (String(url).endsWith('/releases')) {
            sent.push(JSON.parse(String(init?.body)).strategy);
            return new Response(
              JSON.stringify({
                error: {
                  name: 'InputError',
                  message:
                    'Invalid strategy: canary.steps[0].setWeight must be at most 100',
                },
              }),
              {
                status: 400,
                statusText: 'Bad Request',
                headers: { 'Content-Type': 'application/json' },
              },
            );
          }
          return new Response(JSON.stringify({ items: [{ id: 'app-9' }] }), {
            status: 200,
            headers: { 'Content-Type': 'application/json' },
          });
        }) as typeof fetch,
      });
      await expect(
        createFleetReleaseAction({ client: refusing }).handler(
          createMockActionContext({
            input: {
              entityRef: 'component:default/payments',
              strategy: invalid,
            },
          }),
        ),
      ).rejects.toThrow(
        /Fleet did not release component:default\/payments: .*400.*Invalid strategy: canary.steps\[0\].setWeight must be at most 100/,
      );
      expect(sent).toEqual([invalid]);
    });
  });

  it('fails the step when the component has no Fleet application', async () => {
    await expect(
      createFleetReleaseAction({ client }).handler(
        createMockActionContext({
          input: { entityRef: 'component:default/never-deployed' },
        }),
      ),
    ).rejects.toThrow(/has no Fleet application/);
  });
});

describe('FleetApiClient', () => {
  it('returns every cluster of a fleet larger than one page, following nextCursor', async () => {
    const before = (await client.listClusters()).length;
    for (let i = 0; i < 1001; i++) {
      await fleet.stores.clusters.insertCluster({
        name: `paged-${String(i).padStart(4, '0')}`,
        // One API server is one cluster: each its own.
        endpoint: `https://paged-${i}.example:6443`,
        kubeconfigRef: `vault:paged-${i}`,
        source: 'manual',
      });
    }
    const all = await client.listClusters();
    expect(all).toHaveLength(before + 1001);
    expect(new Set(all.map(c => c.name)).size).toBe(all.length);
    // The API itself answers at most 1,000 at a time.
    const page = await request(fleet.server)
      .get('/api/fleet/clusters?limit=1000')
      .expect(200);
    expect(page.body.items).toHaveLength(1000);
    expect(page.body.nextCursor).toEqual(expect.any(String));
    for (const c of all.filter(x => x.name.startsWith('paged-')))
      await fleet.stores.clusters.deleteCluster(c.name);
  });
});

describe('scaffolderModuleFleetActions', () => {
  it('adds its three actions to the scaffolder', async () => {
    const addActions = jest.fn();
    await startTestBackend({
      extensionPoints: [[scaffolderActionsExtensionPoint, { addActions }]],
      features: [scaffolderModuleFleetActions],
    });
    expect(
      addActions.mock.calls.flat().map((a: { id: string }) => a.id),
    ).toEqual(['fleet:application:register', 'fleet:deploy', 'fleet:release']);
  });
});
