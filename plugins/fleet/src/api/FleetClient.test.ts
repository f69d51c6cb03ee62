import { MockFetchApi, registerMswTestHooks } from '@backstage/test-utils';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import {
  applicationStatus,
  cluster,
  deployment,
  event,
  manifestsPreview,
  release,
  revision,
  summary,
} from '../testUtils/fixtures';
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
    // Built once: a fixture's timestamps are taken when it is built.
    const sim1 = cluster('sim-1', 'ONLINE');
    server.use(
      http.get(`${base}/clusters`, ({ request }) => {
        seen.push(
          `${new URL(request.url).search} ${request.headers.get(
            'authorization',
          )}`,
        );
        return HttpResponse.json({ items: [sim1] });
      }),
    );
    expect(await client.listClusters()).toEqual([sim1]);
    await client.listClusters({ status: 'OFFLINE' });
    expect(seen).toEqual([
      '?limit=1000 Bearer user-token',
      '?status=OFFLINE&limit=1000 Bearer user-token',
    ]);
  });

  it('lists clusters by name with the name parameter repeated, at most 100 a request', async () => {
    const asked: string[][] = [];
    server.use(
      http.get(`${base}/clusters`, ({ request }) => {
        const names = new URL(request.url).searchParams.getAll('name');
        asked.push(names);
        return HttpResponse.json({
          items: names.map(name => cluster(name, 'ONLINE')),
        });
      }),
    );
    expect(
      (await client.listClusters({ names: ['sim-2', 'sim-1', 'sim-2'] })).map(
        c => c.name,
      ),
    ).toEqual(['sim-1', 'sim-2']);
    expect(asked).toEqual([['sim-2', 'sim-1']]);

    asked.length = 0;
    const many = Array.from(
      { length: 150 },
      (_, i) => `c-${String(i).padStart(3, '0')}`,
    );
    const answer = await client.listClusters({ names: many });
    expect(asked.map(names => names.length)).toEqual([100, 50]);
    expect(answer.map(c => c.name)).toEqual(many);
  });

  it('follows nextCursor through every page of a paged list, keeping the filter', async () => {
    const pages: Record<string, { items: unknown[]; nextCursor?: string }> = {
      '': { items: [deployment('sim-1', 'DEPLOYED')], nextCursor: 'c1' },
      c1: { items: [deployment('sim-2', 'DEPLOYED')], nextCursor: 'c2' },
      c2: { items: [deployment('sim-3', 'FAILED')] },
    };
    const queries: string[] = [];
    server.use(
      http.get(`${base}/deployments`, ({ request }) => {
        const url = new URL(request.url);
        queries.push(url.search);
        return HttpResponse.json(pages[url.searchParams.get('cursor') ?? '']);
      }),
    );
    const all = await client.listDeployments({
      entityRef: 'component:default/payments',
    });
    expect(all.map(d => d.cluster)).toEqual(['sim-1', 'sim-2', 'sim-3']);
    expect(queries).toEqual([
      '?entityRef=component%3Adefault%2Fpayments&limit=1000',
      '?entityRef=component%3Adefault%2Fpayments&limit=1000&cursor=c1',
      '?entityRef=component%3Adefault%2Fpayments&limit=1000&cursor=c2',
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
      '?entityRef=component%3Adefault%2Fpayments&limit=1000',
      '?entityRef=component%3Adefault%2Fpayments&cluster=sim-1&limit=1000',
    ]);
  });

  it('creates a deployment with a JSON body, a version among it', async () => {
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

    await client.createDeployment({
      entityRef: 'component:default/ledger',
      cluster: 'sim-1',
      version: 'release/2.1',
    });
    expect(body).toEqual({
      entityRef: 'component:default/ledger',
      cluster: 'sim-1',
      version: 'release/2.1',
    });
  });

  describe('revisions, rollback and undeploy', () => {
    // A space, a slash, a hash and a question mark: each would change the URL if sent as is.
    const id = 'dep a/1#2?x';
    const encoded = '/api/fleet/deployments/dep%20a%2F1%232%3Fx';
    type Seen = {
      method: string;
      path: string;
      search: string;
      body?: unknown;
    };
    let seen: Seen[];

    beforeEach(() => {
      seen = [];
      const record = async (request: Request) => {
        const url = new URL(request.url);
        const text = await request.text();
        seen.push({
          method: request.method,
          path: url.pathname,
          search: url.search,
          ...(text ? { body: JSON.parse(text) } : {}),
        });
      };
      server.use(
        http.get(`${base}/deployments/:id/revisions`, async ({ request }) => {
          await record(request);
          return HttpResponse.json({
            items: [
              revision('sim-1', 2, '1.4.2'),
              revision('sim-1', 1, '1.4.1'),
            ],
          });
        }),
        http.get(`${base}/deployments/:id/events`, async ({ request }) => {
          await record(request);
          return HttpResponse.json({ items: [event] });
        }),
        http.post(`${base}/deployments/:id/rollback`, async ({ request }) => {
          await record(request);
          return HttpResponse.json(deployment('sim-1', 'PROGRESSING'), {
            status: 201,
          });
        }),
        http.delete(`${base}/deployments/:id`, async ({ request }) => {
          await record(request);
          return HttpResponse.json(deployment('sim-1', 'REMOVING'), {
            status: 202,
          });
        }),
      );
    });

    it('lists the revisions and events of a deployment, encoding its id', async () => {
      expect((await client.listRevisions(id)).map(r => r.revision)).toEqual([
        2, 1,
      ]);
      expect(await client.listDeploymentEvents(id)).toEqual([event]);
      expect(seen).toEqual([
        { method: 'GET', path: `${encoded}/revisions`, search: '' },
        { method: 'GET', path: `${encoded}/events`, search: '' },
      ]);
    });

    it('rolls back to the revision asked for, or lets the API pick', async () => {
      expect((await client.rollback(id, 3)).status).toBe('PROGRESSING');
      await client.rollback(id);
      expect(seen).toEqual([
        {
          method: 'POST',
          path: `${encoded}/rollback`,
          search: '',
          body: { toRevision: 3 },
        },
        { method: 'POST', path: `${encoded}/rollback`, search: '', body: {} },
      ]);
    });

    it('undeploys with DELETE, forcing only when asked', async () => {
      expect((await client.undeploy(id)).status).toBe('REMOVING');
      await client.undeploy(id, { force: false });
      await client.undeploy(id, { force: true });
      expect(seen).toEqual([
        { method: 'DELETE', path: encoded, search: '' },
        { method: 'DELETE', path: encoded, search: '' },
        { method: 'DELETE', path: encoded, search: '?force=true' },
      ]);
    });

    it.each([
      [
        'rollback',
        () => client.rollback('dep-sim-1'),
        http.post(`${base}/deployments/:id/rollback`, () =>
          errorBody(
            'ConflictError',
            "Deployment 'dep-sim-1' has no earlier DEPLOYED revision to roll back to",
            409,
          ),
        ),
        409,
        "Deployment 'dep-sim-1' has no earlier DEPLOYED revision to roll back to",
      ],
      [
        'undeploy',
        () => client.undeploy('dep-gone'),
        http.delete(`${base}/deployments/:id`, () =>
          errorBody('NotFoundError', "Deployment 'dep-gone' not found", 404),
        ),
        404,
        "Deployment 'dep-gone' not found",
      ],
      [
        'listRevisions',
        () => client.listRevisions('dep-sim-1'),
        http.get(`${base}/deployments/:id/revisions`, () =>
          errorBody('NotAllowedError', 'Not allowed: fleet.read', 403),
        ),
        403,
        'Not allowed: fleet.read',
      ],
    ] as const)(
      '%s throws the API error in its own words',
      async (_name, call, handler, status, message) => {
        server.use(handler);
        const error = await call().catch(e => e);
        expect(error.name).toBe('ResponseError');
        expect(error.statusCode).toBe(status);
        expect(apiErrorMessage(error)).toBe(message);
      },
    );
  });

  describe('releases and application status', () => {
    // A space, a slash, a hash and a question mark: each would change the URL if sent as is.
    const id = 'app a/1#2?x';
    const encoded = 'app%20a%2F1%232%3Fx';
    let seen: Array<{ method: string; path: string; body?: unknown }>;
    const record = async (request: Request) => {
      const text = await request.text();
      seen.push({
        method: request.method,
        path: new URL(request.url).pathname,
        ...(text ? { body: JSON.parse(text) } : {}),
      });
    };

    beforeEach(() => {
      seen = [];
      server.use(
        http.post(`${base}/applications/:id/releases`, async ({ request }) => {
          await record(request);
          return HttpResponse.json(release(['sim-1'], ['sim-2']), {
            status: 201,
          });
        }),
        http.get(`${base}/applications/:id/releases`, async ({ request }) => {
          await record(request);
          return HttpResponse.json({ items: [release(['sim-1'])] });
        }),
        http.get(`${base}/releases/:id`, async ({ request }) => {
          await record(request);
          return HttpResponse.json(release(['sim-1']));
        }),
        http.get(`${base}/applications/:id/status`, async ({ request }) => {
          await record(request);
          return HttpResponse.json(
            applicationStatus(id, [['sim-1', '1.4.2', 'SYNCED']], '1 of 1'),
          );
        }),
      );
    });

    it('creates a release with POST and the JSON body, encoding the application id', async () => {
      const created = await client.createRelease(id, {
        image: 'ghcr.io/acme/payments:1.5.0',
        clusters: ['sim-1', 'sim-2'],
      });
      expect(created.skipped).toEqual([
        { cluster: 'sim-2', reason: "Cluster 'sim-2' is OFFLINE" },
      ]);
      expect(seen).toEqual([
        {
          method: 'POST',
          path: `/api/fleet/applications/${encoded}/releases`,
          body: {
            image: 'ghcr.io/acme/payments:1.5.0',
            clusters: ['sim-1', 'sim-2'],
          },
        },
      ]);
    });

    it('previews with POST and the JSON body, answering the preview of each cluster', async () => {
      const answer = manifestsPreview();
      server.use(
        http.post(`${base}/applications/:id/preview`, async ({ request }) => {
          await record(request);
          return HttpResponse.json(answer);
        }),
      );
      expect(
        await client.previewApplication(id, {
          clusters: ['sim-1', 'sim-2'],
          version: 'v2.1.0',
          replicas: 2,
        }),
      ).toEqual(answer);
      expect(seen).toEqual([
        {
          method: 'POST',
          path: `/api/fleet/applications/${encoded}/preview`,
          body: {
            clusters: ['sim-1', 'sim-2'],
            version: 'v2.1.0',
            replicas: 2,
          },
        },
      ]);
    });

    it('previewApplication throws the API error in its own words', async () => {
      const message =
        "Could not read the manifests of component:default/ledger at 'nope': no such ref";
      server.use(
        http.post(`${base}/applications/:id/preview`, () =>
          errorBody('InputError', message, 400),
        ),
      );
      const error = await client
        .previewApplication('app-1', { version: 'nope' })
        .catch(e => e);
      expect(error.name).toBe('ResponseError');
      expect(error.statusCode).toBe(400);
      expect(apiErrorMessage(error)).toBe(message);
    });

    it('sends the version of a release', async () => {
      await client.createRelease(id, { version: 'v2.1.0' });
      expect(seen).toEqual([
        {
          method: 'POST',
          path: `/api/fleet/applications/${encoded}/releases`,
          body: { version: 'v2.1.0' },
        },
      ]);
    });

    it('lists and gets releases and reads the application status with GET', async () => {
      expect((await client.listReleases(id)).map(r => r.id)).toEqual(['rel-1']);
      expect((await client.getRelease('rel 1/x')).status).toBe('PROGRESSING');
      expect((await client.getApplicationStatus(id)).summary).toBe('1 of 1');
      expect(seen).toEqual([
        { method: 'GET', path: `/api/fleet/applications/${encoded}/releases` },
        { method: 'GET', path: '/api/fleet/releases/rel%201%2Fx' },
        { method: 'GET', path: `/api/fleet/applications/${encoded}/status` },
      ]);
    });

    it.each([
      [
        400,
        'InputError',
        "Invalid release: cluster 'nope' is not registered in Fleet",
      ],
      [
        409,
        'ConflictError',
        "Application 'app-1' is placed on no cluster; nothing to release",
      ],
      [403, 'NotAllowedError', 'Not allowed: fleet.release.manage'],
    ])(
      'createRelease throws the API error of a %s in its own words',
      async (status, name, message) => {
        server.use(
          http.post(`${base}/applications/:id/releases`, () =>
            errorBody(name, message, status),
          ),
        );
        const error = await client
          .createRelease('app-1', { clusters: ['nope'] })
          .catch(e => e);
        expect(error.name).toBe('ResponseError');
        expect(error.statusCode).toBe(status);
        expect(apiErrorMessage(error)).toBe(message);
      },
    );

    it('sends the strategy of a progressive release unchanged', async () => {
      const strategy = {
        waves: [{ clusters: ['sim-1'] }, { percent: 100 }],
        canary: {
          steps: [{ setWeight: 20 }, { pause: {} }, { setWeight: 100 }],
          maxSurge: '25%',
        },
        rollback: { enabled: true, timeout: '15m' },
      };
      await client.createRelease(id, { image: 'payments:2', strategy });
      expect(seen).toEqual([
        {
          method: 'POST',
          path: `/api/fleet/applications/${encoded}/releases`,
          body: { image: 'payments:2', strategy },
        },
      ]);
    });

    describe.each([
      ['promote', (r: string) => client.promoteRelease(r)],
      ['pause', (r: string) => client.pauseRelease(r)],
      ['resume', (r: string) => client.resumeRelease(r)],
      ['abort', (r: string) => client.abortRelease(r)],
    ] as const)('%s', (action, call) => {
      it(`POSTs /releases/:id/${action} without a body, encoding the id`, async () => {
        const requests: Array<{ path: string; body: string; type: string }> =
          [];
        server.use(
          http.post(`${base}/releases/:id/${action}`, async ({ request }) => {
            requests.push({
              path: new URL(request.url).pathname,
              body: await request.text(),
              type: request.headers.get('content-type') ?? '',
            });
            return HttpResponse.json({ ...release(['sim-1']), id: 'rel 1/x' });
          }),
        );
        expect((await call('rel 1/x')).id).toBe('rel 1/x');
        expect(requests).toEqual([
          {
            path: `/api/fleet/releases/rel%201%2Fx/${action}`,
            body: '',
            type: '',
          },
        ]);
      });

      it.each([
        [
          409,
          'ConflictError',
          `Release 'rel-1' is COMPLETED; cannot ${action}`,
        ],
        [404, 'NotFoundError', "Release 'rel-1' not found"],
        [403, 'NotAllowedError', 'Not allowed: fleet.release.manage'],
      ])(
        'throws the API error of a %s in its own words',
        async (status, name, message) => {
          server.use(
            http.post(`${base}/releases/:id/${action}`, () =>
              errorBody(name, message, status),
            ),
          );
          const error = await call('rel-1').catch(e => e);
          expect(error.name).toBe('ResponseError');
          expect(error.statusCode).toBe(status);
          expect(apiErrorMessage(error)).toBe(message);
        },
      );
    });

    it('getApplicationStatus throws a 404 in the API words', async () => {
      server.use(
        http.get(`${base}/applications/:id/status`, () =>
          errorBody('NotFoundError', "Application 'gone' not found", 404),
        ),
      );
      const error = await client.getApplicationStatus('gone').catch(e => e);
      expect(error.statusCode).toBe(404);
      expect(apiErrorMessage(error)).toBe("Application 'gone' not found");
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
