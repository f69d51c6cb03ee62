import { mockServices } from '@backstage/backend-test-utils';
import { createMockActionContext } from '@backstage/plugin-scaffolder-node-test-utils';
import { createTestDatabases } from '@cnp/fleet-harness';
import { FleetApiClient, type FleetService } from '@cnp/plugin-fleet-node';
import request from 'supertest';
import { createFleetDeployAction } from './createFleetDeployAction';
import { createFleetReleaseAction } from './createFleetReleaseAction';
import { startFleetForActions } from './__testUtils__/fleetForActions';

jest.setTimeout(60_000);

const databases = createTestDatabases();
let fleet: Awaited<ReturnType<typeof startFleetForActions>>['fleet'];
let client: FleetApiClient;

describe.each(databases.eachSupportedId())('fleet:release (%s)', databaseId => {
  beforeAll(async () => {
    ({ fleet, client } = await startFleetForActions(databases, databaseId));
  });

  const outputs = (ctx: { output: unknown }) =>
    Object.fromEntries(
      (ctx.output as jest.Mock).mock.calls.map(([name, value]) => [
        name,
        value,
      ]),
    );

  it('releases a new image to every cluster the component runs on, as the initiator', async () => {
    const entityRef = 'component:default/released-app';
    // Deployed to alpha only: the release goes where the component runs, not to bravo.
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

  it('passes a stage on to Fleet, which refuses one the application does not name', async () => {
    const entityRef = 'component:default/released-app';
    await expect(
      createFleetReleaseAction({ client }).handler(
        createMockActionContext({ input: { entityRef, stage: 'prod' } }),
      ),
    ).rejects.toThrow(
      /Fleet did not release component:default\/released-app: .*stage 'prod' is not one of/,
    );
  });

  it('says that a release to a governed stage waits, instead of listing no cluster', async () => {
    const fake = {
      listApplications: jest.fn().mockResolvedValue([{ id: 'app-9' }]),
      release: jest.fn().mockResolvedValue({
        id: 'rel-7',
        status: 'WAITING_FOR_APPROVAL',
        stage: 'prod',
        targets: [],
        skipped: [],
        progress: null,
        gate: {
          approvals: { groups: ['group:default/sre'], count: 1 },
          decisions: [],
          window: null,
        },
      }),
    } as unknown as Pick<FleetService, 'listApplications' | 'release'>;
    const ctx = createMockActionContext({
      input: { entityRef: 'component:default/payments', stage: 'prod' },
    });
    const info = jest.spyOn(ctx.logger, 'info');
    await createFleetReleaseAction({ client: fake }).handler(ctx);
    expect(info).toHaveBeenCalledWith(
      'The release of component:default/payments to stage prod is waiting for approval: nothing is applied until then',
    );
    expect(outputs(ctx)).toEqual({
      releaseId: 'rel-7',
      clusters: [],
      skipped: [],
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
