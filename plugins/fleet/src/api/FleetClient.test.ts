import { MockFetchApi, registerMswTestHooks } from '@backstage/test-utils';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { cluster, deployment, event, summary } from '../testUtils/fixtures';
import { apiErrorMessage, FleetClient } from './FleetClient';

const base = 'http://fleet.test/api/fleet';
const server = setupServer();
registerMswTestHooks(server);

const client = new FleetClient({
  discoveryApi: {
    getBaseUrl: async (id: string) => `http://fleet.test/api/${id}`,
  },
  fetchApi: new MockFetchApi({ injectIdentityAuth: { token: 'user-token' } }),
});

function errorBody(name: string, message: string, statusCode: number) {
  return HttpResponse.json(
    {
      error: { name, message },
      request: { method: 'X', url: '/' },
      response: { statusCode },
    },
    { status: statusCode },
  );
}

describe('FleetClient', () => {
  it('lists clusters with an optional status filter, sending the user token', async () => {
    const seen: string[] = [];
    server.use(
      http.get(`${base}/clusters`, ({ request }) => {
        seen.push(
          `${new URL(request.url).search} ${request.headers.get(
            'authorization',
          )}`,
        );
        return HttpResponse.json({ items: [cluster('sim-1', 'ONLINE')] });
      }),
    );
    expect(await client.listClusters()).toEqual([cluster('sim-1', 'ONLINE')]);
    await client.listClusters({ status: 'OFFLINE' });
    expect(seen).toEqual([
      ' Bearer user-token',
      '?status=OFFLINE Bearer user-token',
    ]);
  });

  it('gets one cluster and its events, encoding the name', async () => {
    const paths: string[] = [];
    server.use(
      http.get(`${base}/clusters/:name`, ({ request, params }) => {
        paths.push(new URL(request.url).pathname);
        return HttpResponse.json(cluster(String(params.name), 'OFFLINE'));
      }),
      http.get(`${base}/clusters/:name/events`, ({ request }) => {
        paths.push(new URL(request.url).pathname);
        return HttpResponse.json({ items: [event] });
      }),
    );
    // A space, a slash, a hash and a question mark: each would change the URL if sent as is.
    const name = 'team a/sim#2?x';
    expect((await client.getCluster(name)).status).toBe('OFFLINE');
    expect(await client.listClusterEvents(name)).toEqual([event]);
    expect(paths).toEqual([
      '/api/fleet/clusters/team%20a%2Fsim%232%3Fx',
      '/api/fleet/clusters/team%20a%2Fsim%232%3Fx/events',
    ]);
  });

  it('reads the summary, recent events and runs a health cycle', async () => {
    server.use(
      http.get(`${base}/summary`, () => HttpResponse.json(summary)),
      http.get(`${base}/events`, ({ request }) =>
        HttpResponse.json({
          items:
            new URL(request.url).searchParams.get('limit') === '5'
              ? [event]
              : [],
        }),
      ),
      http.post(`${base}/health/run`, () =>
        HttpResponse.json({ probed: 3, online: 3 }),
      ),
    );
    expect(await client.getSummary()).toEqual(summary);
    expect(await client.listRecentEvents({ limit: 5 })).toEqual([event]);
    expect(await client.runHealthCycle()).toMatchObject({ probed: 3 });
  });

  it('lists applications and deployments with their filters', async () => {
    const queries: string[] = [];
    server.use(
      http.get(`${base}/applications`, ({ request }) => {
        queries.push(new URL(request.url).search);
        return HttpResponse.json({ items: [] });
      }),
      http.get(`${base}/deployments`, ({ request }) => {
        queries.push(new URL(request.url).search);
        return HttpResponse.json({ items: [deployment('sim-1', 'DEPLOYED')] });
      }),
      http.get(`${base}/deployments/:id/events`, ({ params }) =>
        HttpResponse.json({ items: params.id === 'dep-sim-1' ? [event] : [] }),
      ),
    );
    expect(
      await client.listApplications({
        entityRef: 'component:default/payments',
      }),
    ).toEqual([]);
    expect(
      await client.listDeployments({
        entityRef: 'component:default/payments',
        cluster: 'sim-1',
      }),
    ).toHaveLength(1);
    expect(await client.listDeploymentEvents('dep-sim-1')).toEqual([event]);
    expect(queries).toEqual([
      '?entityRef=component%3Adefault%2Fpayments',
      '?entityRef=component%3Adefault%2Fpayments&cluster=sim-1',
    ]);
  });

  it('creates a deployment with a JSON body', async () => {
    let body: unknown;
    server.use(
      http.post(`${base}/deployments`, async ({ request }) => {
        body = await request.json();
        return HttpResponse.json(deployment('sim-1', 'PROGRESSING'), {
          status: 201,
        });
      }),
    );
    const created = await client.createDeployment({
      entityRef: 'component:default/payments',
      cluster: 'sim-1',
      image: 'nginx:1.27',
      replicas: 2,
    });
    expect(created.status).toBe('PROGRESSING');
    expect(body).toEqual({
      entityRef: 'component:default/payments',
      cluster: 'sim-1',
      image: 'nginx:1.27',
      replicas: 2,
    });
  });

  it.each([
    [
      409,
      'ConflictError',
      "Cluster 'sim-2' is OFFLINE; deployments to it are refused until it is back ONLINE",
    ],
    [
      400,
      'InputError',
      'Invalid deployment: image: an image reference has no spaces',
    ],
    [403, 'NotAllowedError', 'Not allowed: fleet.deployment.create'],
    [404, 'NotFoundError', "Cluster 'nope' not found"],
  ])(
    'throws a ResponseError carrying the API error body on %s',
    async (status, name, message) => {
      server.use(
        http.post(`${base}/deployments`, () =>
          errorBody(name, message, status),
        ),
      );
      const error = await client
        .createDeployment({
          entityRef: 'component:default/x',
          cluster: 'sim-2',
        })
        .catch(e => e);
      expect(error.name).toBe('ResponseError');
      expect(error.statusCode).toBe(status);
      expect(error.body.error).toEqual({ name, message });
      expect(apiErrorMessage(error)).toBe(message);
    },
  );

  it('throws a ResponseError for a failure without a JSON body', async () => {
    server.use(
      http.get(
        `${base}/summary`,
        () =>
          new HttpResponse('upstream broke', {
            status: 502,
            statusText: 'Bad Gateway',
          }),
      ),
    );
    const error = await client.getSummary().catch(e => e);
    expect(error.name).toBe('ResponseError');
    expect(error.statusCode).toBe(502);
    expect(apiErrorMessage(error)).toMatch(/502/);
  });
});
