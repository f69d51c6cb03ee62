import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AnalysisTemplate } from '@cnp/plugin-fleet-common';
import { fillQuery, measure } from './analysis';

/** A real HTTP server answering as Prometheus would, with the answer a test sets. */
let answer: { status: number; body: string } = { status: 200, body: '{}' };
const queries: string[] = [];
let server: Server;
let address: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    queries.push(`${url.pathname} ${url.searchParams.get('query')}`);
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(answer.body);
  });
  await new Promise<void>(r => server.listen(0, '127.0.0.1', r));
  address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise(r => server.close(r)));

const vector = (...values: string[]) =>
  JSON.stringify({
    status: 'success',
    data: {
      resultType: 'vector',
      result: values.map(v => ({ metric: {}, value: [1700000000.1, v] })),
    },
  });

const template = (over: Partial<AnalysisTemplate> = {}): AnalysisTemplate => ({
  name: 'success-rate',
  successCondition: 'result[0] >= 0.995',
  provider: {
    prometheus: {
      address,
      query:
        'sum(x{app="{{app}}",cluster="{{cluster}}",revision="{{revision}}",ns="{{namespace}}",v="{{version}}"})',
    },
  },
  ...over,
});
const context = {
  cluster: 'sim-2',
  app: 'payments',
  namespace: 'apps',
  revision: 4,
  version: '1.4.2',
};

describe('Prometheus analysis', () => {
  it('fills the placeholders and queries GET /api/v1/query', async () => {
    answer = { status: 200, body: vector('0.999') };
    const m = await measure(template(), context);
    expect(m).toMatchObject({
      phase: 'Successful',
      value: 0.999,
      cluster: 'sim-2',
      condition: 'result[0] >= 0.995',
    });
    expect(queries.at(-1)).toBe(
      '/api/v1/query sum(x{app="payments",cluster="sim-2",revision="4",ns="apps",v="1.4.2"})',
    );
  });

  it('is Failed when the condition is false, with the value', async () => {
    answer = { status: 200, body: vector('0.91') };
    expect(await measure(template(), context)).toMatchObject({
      phase: 'Failed',
      value: 0.91,
    });
  });

  it('is Inconclusive, never Successful, on an empty vector or NaN', async () => {
    answer = { status: 200, body: vector() };
    expect(await measure(template(), context)).toMatchObject({
      phase: 'Inconclusive',
      message: 'no data',
    });
    answer = { status: 200, body: vector('NaN') };
    expect(await measure(template(), context)).toMatchObject({
      phase: 'Inconclusive',
      message: 'no data',
    });
  });

  it('is Error, never Successful, on an error answer, an HTTP error or no Prometheus', async () => {
    answer = {
      status: 422,
      body: JSON.stringify({
        status: 'error',
        errorType: 'execution',
        error: 'boom',
      }),
    };
    expect(await measure(template(), context)).toMatchObject({
      phase: 'Error',
      message: 'error',
    });
    answer = { status: 502, body: 'bad gateway' };
    expect(await measure(template(), context)).toMatchObject({
      phase: 'Error',
      message: 'error',
    });
    // An HTTP error is an error even with a body that reads as a result.
    answer = { status: 503, body: vector('0.999') };
    expect(await measure(template(), context)).toMatchObject({
      phase: 'Error',
      message: 'error',
    });
    const down = await measure(
      template({
        provider: {
          prometheus: { address: 'http://127.0.0.1:1', query: 'up' },
        },
      }),
      context,
    );
    expect(down.phase).toBe('Error');
    expect(down.message).toBe('unreachable');
  });

  describe("a provider's text is never passed on: only error, unreachable or no data", () => {
    const SECRET = 'internal-admin-secret-4e1d';
    it.each([
      [
        'an error answer',
        {
          status: 422,
          body: JSON.stringify({
            status: 'error',
            errorType: SECRET,
            error: SECRET,
          }),
        },
        'Error',
        'error',
      ],
      [
        'an answer that is not JSON',
        { status: 200, body: `<html>${SECRET}</html>` },
        'Error',
        'error',
      ],
      ['an HTTP error', { status: 500, body: SECRET }, 'Error', 'error'],
      [
        'JSON of another service',
        {
          status: 200,
          body: JSON.stringify({
            status: 'success',
            data: { resultType: SECRET, admin: SECRET },
          }),
        },
        'Error',
        'error',
      ],
      [
        'an empty vector',
        { status: 200, body: vector() },
        'Inconclusive',
        'no data',
      ],
      ['NaN', { status: 200, body: vector('NaN') }, 'Inconclusive', 'no data'],
    ])('%s is %s (%s)', async (_, given, phase, word) => {
      answer = given;
      const m = await measure(template(), context);
      expect(m).toMatchObject({ phase, message: word });
      expect(JSON.stringify(m)).not.toContain(SECRET);
    });

    it('an unreachable server is unreachable, without the system error or the host', async () => {
      const m = await measure(
        template({
          provider: {
            prometheus: { address: 'http://127.0.0.1:1', query: 'up' },
          },
        }),
        context,
      );
      expect(m.message).toBe('unreachable');
      expect(JSON.stringify(m)).not.toMatch(/ECONNREFUSED|fetch failed/);
    });
  });

  it('does not query an address that is not allowed (a release accepted before the list)', async () => {
    const before = queries.length;
    answer = { status: 200, body: vector('0.999') };
    const m = await measure(template(), context, {
      allowedAddresses: ['http://prometheus.monitoring.svc:9090'],
    });
    expect(m).toMatchObject({ phase: 'Error', message: 'error' });
    expect(queries.length).toBe(before);
    // Listed, in another spelling: queried.
    expect(
      await measure(template(), context, {
        allowedAddresses: [`${address.replace('http', 'HTTP')}/`],
      }),
    ).toMatchObject({ phase: 'Successful' });
    expect(queries.length).toBe(before + 1);
  });

  it('evaluates the condition with jexl over every value, never with eval', async () => {
    answer = { status: 200, body: vector('0.5', '2') };
    expect(
      await measure(
        template({
          successCondition: 'result[1] > result[0] && result[0] < 1',
        }),
        context,
      ),
    ).toMatchObject({ phase: 'Successful' });
    // Not JavaScript: no globals, no function calls reach the process.
    const hostile = await measure(
      template({ successCondition: 'process.exit(1)' }),
      context,
    );
    expect(hostile.phase).toBe('Error');
  });

  it('keeps quotes out of a filled label value', () => {
    expect(
      fillQuery('{a="{{app}}"}', { ...context, app: 'x"}) or vector(1) #' }),
    ).toBe('{a="x}) or vector(1) #"}');
  });
});
