import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AnalysisTemplate } from '@cnp/plugin-fleet-common';
import { MAX_ANSWER_BYTES } from '../analysis';
import {
  MAX_RANGE_STEPS,
  pointsIn,
  queryRange,
  rangeWindow,
  variantQuery,
} from './rangeQuery';

/** A real HTTP server answering as Prometheus would, with the answer a test sets. */
let answer: { status: number; body: string; location?: string } = {
  status: 200,
  body: '{}',
};
const asked: URL[] = [];
let server: Server;
let address: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    asked.push(new URL(req.url!, 'http://x'));
    res.writeHead(answer.status, {
      'content-type': 'application/json',
      ...(answer.location ? { location: answer.location } : {}),
    });
    res.end(answer.body);
  });
  await new Promise<void>(r => server.listen(0, '127.0.0.1', r));
  address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise(r => server.close(r)));
beforeEach(() => {
  asked.length = 0;
});

const matrix = (...series: string[][]) =>
  JSON.stringify({
    status: 'success',
    data: {
      resultType: 'matrix',
      result: series.map((values, i) => ({
        metric: { i: String(i) },
        values: values.map((v, j) => [1700000000 + j, v]),
      })),
    },
  });

const template = (over: Partial<AnalysisTemplate> = {}): AnalysisTemplate => ({
  name: 'latency',
  interval: '10s',
  compare: { baseline: true, direction: 'increase' },
  provider: {
    prometheus: {
      address,
      query: 'lat{app="{{app}}",cluster="{{cluster}}",variant="{{ variant }}"}',
    },
  },
  ...over,
});
const context = {
  cluster: 'sim-1',
  app: 'payments',
  namespace: 'apps',
  revision: 4,
  version: '1.4.2',
};
const window = {
  startMs: 1_700_000_000_000,
  endMs: 1_700_000_060_000,
  stepMs: 10_000,
};

describe('the range reads of a canary judged against its baseline', () => {
  it('reads GET /api/v1/query_range with the variant and the placeholders filled, over the window', async () => {
    answer = { status: 200, body: matrix(['0.1', '0.2'], ['NaN', '+Inf']) };
    const read = await queryRange(template(), 'baseline', context, window);
    expect(read).toEqual({
      kind: 'values',
      values: [0.1, 0.2, NaN, Infinity],
    });
    expect(asked[0].pathname).toBe('/api/v1/query_range');
    expect(Object.fromEntries(asked[0].searchParams)).toEqual({
      query: 'lat{app="payments",cluster="sim-1",variant="baseline"}',
      start: '1700000000.000',
      end: '1700000060.000',
      step: '10',
    });
  });

  it('answers no values for an empty matrix, an error for an error answer or another shape', async () => {
    answer = { status: 200, body: matrix() };
    expect(await queryRange(template(), 'canary', context, window)).toEqual({
      kind: 'values',
      values: [],
    });
    answer = {
      status: 200,
      body: JSON.stringify({
        status: 'success',
        data: { resultType: 'vector', result: [] },
      }),
    };
    expect(await queryRange(template(), 'canary', context, window)).toEqual({
      kind: 'error',
      message: 'error',
    });
    answer = {
      status: 422,
      body: JSON.stringify({ status: 'error', error: 'secret host detail' }),
    };
    expect(await queryRange(template(), 'canary', context, window)).toEqual({
      kind: 'error',
      message: 'error',
    });
  });

  it('refuses a redirect, an address off the allow-list and an answer past the size bound', async () => {
    answer = { status: 302, body: '', location: 'http://elsewhere.invalid/' };
    expect(await queryRange(template(), 'canary', context, window)).toEqual({
      kind: 'error',
      message: 'unreachable',
    });
    asked.length = 0;
    answer = { status: 200, body: matrix(['1']) };
    expect(
      await queryRange(template(), 'canary', context, window, {
        allowedAddresses: ['http://prometheus.monitoring:9090'],
      }),
    ).toEqual({ kind: 'error', message: 'error' });
    expect(asked).toEqual([]);
    answer = {
      status: 200,
      body: `${matrix(['1'])}${' '.repeat(MAX_ANSWER_BYTES)}`,
    };
    expect(await queryRange(template(), 'canary', context, window)).toEqual({
      kind: 'error',
      message: 'error',
    });
  });

  it("samples at the template's interval (60 s without one), widened past Prometheus's 11,000 steps", () => {
    expect(rangeWindow(template(), 0, 60_000).stepMs).toBe(10_000);
    expect(
      rangeWindow(template({ interval: undefined }), 0, 60_000).stepMs,
    ).toBe(60_000);
    const day = rangeWindow(template({ interval: '1s' }), 0, 86_400_000);
    expect(day.stepMs).toBe(Math.ceil(86_400_000 / MAX_RANGE_STEPS));
    expect(pointsIn(day)).toBeLessThanOrEqual(MAX_RANGE_STEPS + 1);
    expect(pointsIn({ startMs: 0, endMs: 950, stepMs: 50 })).toBe(20);
    expect(pointsIn({ startMs: 10, endMs: 0, stepMs: 50 })).toBe(0);
  });

  it('keeps quotes and backslashes out of a filled value', () => {
    expect(
      variantQuery('x{a="{{app}}",v="{{variant}}"}', 'canary', {
        ...context,
        app: 'pay"ments\\',
      }),
    ).toBe('x{a="payments",v="canary"}');
  });
});
