import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fleetApiRequest } from './fleetApiRequest';

/** A real HTTP server that records each request and answers what the test queued. */
let server: http.Server;
let baseUrl: string;
const seen: Array<{
  method?: string;
  url?: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}> = [];
let answer: { status: number; body?: unknown } = { status: 200, body: {} };

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', chunk => {
      body += chunk;
    });
    req.on('end', () => {
      seen.push({
        method: req.method,
        url: req.url,
        headers: req.headers,
        body,
      });
      res.statusCode = answer.status;
      if (answer.body === undefined) {
        res.end();
      } else {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify(answer.body));
      }
    });
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${
    (server.address() as AddressInfo).port
  }/api/fleet`;
});

afterAll(async () => {
  await new Promise(resolve => server.close(resolve));
});

beforeEach(() => {
  seen.length = 0;
});

const onError = async (response: Response) =>
  new Error(`failed ${response.status}: ${await response.text()}`);

describe('fleetApiRequest', () => {
  it('fills in and encodes path parameters, drops unset query values, and reads the answer', async () => {
    answer = { status: 200, body: { items: [], nextCursor: 'abc' } };
    const page = await fleetApiRequest({
      baseUrl,
      fetch,
      method: 'get',
      path: '/deployments',
      parts: {
        query: {
          entityRef: 'component:default/a b',
          cluster: undefined,
          limit: '5',
        },
      },
      onError,
    });
    expect(page).toEqual({ items: [], nextCursor: 'abc' });
    expect(seen[0].method).toBe('GET');
    expect(seen[0].url).toBe(
      '/api/fleet/deployments?entityRef=component%3Adefault%2Fa+b&limit=5',
    );
    expect(seen[0].headers['content-type']).toBeUndefined();

    answer = { status: 200, body: { items: [] } };
    await fleetApiRequest({
      baseUrl,
      fetch,
      method: 'get',
      path: '/clusters/{name}/events',
      parts: { path: { name: 'we/st' } },
      onError,
    });
    expect(seen[1].url).toBe('/api/fleet/clusters/we%2Fst/events');
  });

  it('repeats an array query parameter once per value', async () => {
    answer = { status: 200, body: { items: [] } };
    await fleetApiRequest({
      baseUrl,
      fetch,
      method: 'get',
      path: '/clusters',
      parts: { query: { name: ['east', 'west'], limit: '1000' } },
      onError,
    });
    expect(seen[0].url).toBe(
      '/api/fleet/clusters?name=east&name=west&limit=1000',
    );
  });

  it('sends a body as JSON with the given headers', async () => {
    answer = { status: 201, body: { id: 'd1' } };
    await fleetApiRequest({
      baseUrl,
      fetch,
      method: 'post',
      path: '/deployments',
      parts: {
        body: { entityRef: 'component:default/a', cluster: 'east' },
        headers: { Authorization: 'Bearer t' },
      },
      onError,
    });
    expect(seen[0].method).toBe('POST');
    expect(seen[0].headers['content-type']).toBe('application/json');
    expect(seen[0].headers.authorization).toBe('Bearer t');
    expect(JSON.parse(seen[0].body)).toEqual({
      entityRef: 'component:default/a',
      cluster: 'east',
    });
  });

  it('answers undefined for 204 and throws what onError makes of a failure', async () => {
    answer = { status: 204 };
    await expect(
      fleetApiRequest({
        baseUrl,
        fetch,
        method: 'delete',
        path: '/clusters/{name}',
        parts: { path: { name: 'east' } },
        onError,
      }),
    ).resolves.toBeUndefined();

    answer = {
      status: 409,
      body: { error: { name: 'ConflictError', message: 'busy' } },
    };
    await expect(
      fleetApiRequest({
        baseUrl,
        fetch,
        method: 'delete',
        path: '/clusters/{name}',
        parts: { path: { name: 'east' } },
        onError,
      }),
    ).rejects.toThrow(/failed 409: .*busy/);
  });
});
