/*
 * The simulated Prometheus' range queries, through its real HTTP listener: the
 * matrix format, Prometheus' parameter errors and point limit, and series drawn
 * from the distributions a test sets, the same on every read.
 */
import { request as httpRequest } from 'node:http';
import { request } from 'node:https';
import { KubeSimulator } from './KubeSimulator';

let sim: KubeSimulator;

beforeAll(async () => {
  sim = await KubeSimulator.start({ clusters: ['one'], prometheus: true });
});

afterAll(async () => {
  await sim?.stop();
});

beforeEach(() => {
  sim.setPrometheusFault('ok');
  sim.clearPrometheusRules();
});

interface Answer {
  status: number;
  text: string;
  json: any;
}

function call(url: string, method = 'GET', body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (body !== undefined) {
      headers['Content-Type'] = url.startsWith('https:')
        ? 'application/json'
        : 'application/x-www-form-urlencoded';
    }
    const send = url.startsWith('https:') ? request : httpRequest;
    const req = send(url, { method, headers, ca: sim.caPem }, res => {
      const chunks: Buffer[] = [];
      res.on('data', c => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: any;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, text, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const control = (path: string, method: string, body?: unknown) =>
  call(
    `${sim.url}${path}`,
    method,
    body === undefined ? undefined : JSON.stringify(body),
  );

function range(params: Record<string, string>): Promise<Answer> {
  return call(
    `${sim.prometheusUrl}/api/v1/query_range?${new URLSearchParams(params)}`,
  );
}

const CANARY =
  'histogram_quantile(0.99, sum(rate(http_request_duration_seconds_bucket{app="payments",variant="canary"}[1m])) by (le))';
const BASELINE = CANARY.replace('"canary"', '"baseline"');

/** The sample values of a one-series matrix answer, as numbers. */
function numbers(answer: Answer): number[] {
  expect(answer.status).toBe(200);
  expect(answer.json.data.result).toHaveLength(1);
  return answer.json.data.result[0].values.map((v: [number, string]) =>
    Number(v[1]),
  );
}

function meanAndSd(xs: number[]): { mean: number; sd: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const variance =
    xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1);
  return { mean, sd: Math.sqrt(variance) };
}

describe('GET and POST /api/v1/query_range', () => {
  it('answers a matrix with one value per step, start and end included', async () => {
    const set = await control('/_sim/prometheus/rules', 'POST', {
      match: { app: 'payments' },
      value: 0.5,
    });
    expect(set.status).toBe(200);
    const answer = await range({
      query: 'up{app="payments"}',
      start: '1700000000',
      end: '1700000060',
      step: '15s',
    });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      status: 'success',
      data: {
        resultType: 'matrix',
        result: [
          {
            metric: { app: 'payments' },
            values: [0, 15, 30, 45, 60].map(s => [1700000000 + s, '0.5']),
          },
        ],
      },
    });

    const rfc = await range({
      query: 'up{app="payments"}',
      start: '2023-11-14T22:13:20.5Z',
      end: '2023-11-14T22:15:20Z',
      step: '1m',
    });
    expect(rfc.json.data.result[0].values.map((v: number[]) => v[0])).toEqual([
      1700000000.5, 1700000060.5,
    ]);

    const posted = await call(
      `${sim.prometheusUrl}/api/v1/query_range`,
      'POST',
      new URLSearchParams({
        query: 'up{app="payments"}',
        start: '1700000000.25',
        end: '1700000010',
        step: '2.5',
      }).toString(),
    );
    expect(posted.json.data.result[0].values).toEqual([
      [1700000000.25, '0.5'],
      [1700000002.75, '0.5'],
      [1700000005.25, '0.5'],
      [1700000007.75, '0.5'],
    ]);
    expect(sim.prometheusQueries()).toContain('up{app="payments"}');
  });

  it('refuses missing and invalid parameters as Prometheus does (400 bad_data)', async () => {
    const ok = { query: 'up', start: '100', end: '200', step: '10' };
    const cases: Array<[Record<string, string>, string]> = [
      [
        { ...ok, start: '' },
        'invalid parameter "start": cannot parse "" to a valid timestamp',
      ],
      [
        { ...ok, end: 'tomorrow' },
        'invalid parameter "end": cannot parse "tomorrow" to a valid timestamp',
      ],
      [{ ...ok, end: '99' }, 'end timestamp must not be before start time'],
      [
        { ...ok, step: '1x' },
        'invalid parameter "step": cannot parse "1x" to a valid duration',
      ],
      [
        { ...ok, step: '0s' },
        'zero or negative query resolution step widths are not accepted. Try a positive integer',
      ],
      [
        { ...ok, query: ' ' },
        'invalid parameter "query": 1:1: parse error: no expression found in input',
      ],
    ];
    for (const [params, error] of cases) {
      const answer = await range(params);
      expect({ params, status: answer.status, body: answer.json }).toEqual({
        params,
        status: 400,
        body: { status: 'error', errorType: 'bad_data', error },
      });
    }
    expect((await range(ok)).status).toBe(200);
  });

  it('serves at most 11,000 steps a series, as Prometheus does', async () => {
    sim.setPrometheusRule({ app: 'payments' }, 1);
    const q = { query: 'up{app="payments"}', start: '0', step: '1' };
    const largest = await range({ ...q, end: '11000' });
    expect(numbers(largest)).toHaveLength(11_001);
    const tooMany = await range({ ...q, end: '11001' });
    expect(tooMany.status).toBe(400);
    expect(tooMany.json).toEqual({
      status: 'error',
      errorType: 'bad_data',
      error:
        'exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)',
    });
  });

  it('answers an empty matrix without a rule or for the distribution none', async () => {
    const q = { query: CANARY, start: '0', end: '60', step: '15s' };
    const empty = {
      status: 'success',
      data: { resultType: 'matrix', result: [] },
    };
    expect((await range(q)).json).toEqual(empty);
    sim.setPrometheusRule('variant="canary"', {
      distribution: { kind: 'none' },
    });
    expect((await range(q)).json).toEqual(empty);
    const instant = await call(
      `${sim.prometheusUrl}/api/v1/query?query=${encodeURIComponent(CANARY)}`,
    );
    expect(instant.json.data).toEqual({ resultType: 'vector', result: [] });
  });

  it('answers an error rule with 422, as an instant query does', async () => {
    sim.setPrometheusRule({ app: 'payments' }, { error: 'query timed out' });
    const answer = await range({
      query: CANARY,
      start: '0',
      end: '60',
      step: '15s',
    });
    expect(answer.status).toBe(422);
    expect(answer.json).toEqual({
      status: 'error',
      errorType: 'execution',
      error: 'query timed out',
    });
  });
});

describe('series drawn from a distribution', () => {
  const normal = { kind: 'normal', mean: 0.13, sd: 0.01 } as const;

  it('takes rules from the control route, a string match included', async () => {
    const set = await control('/_sim/prometheus/rules', 'POST', {
      match: 'app="payments",variant="canary"',
      distribution: normal,
      seed: 7,
    });
    expect(set.status).toBe(200);
    expect(set.json.rules).toEqual([
      {
        match: { app: 'payments', variant: 'canary' },
        distribution: normal,
        seed: 7,
      },
    ]);
    const bad = await control('/_sim/prometheus/rules', 'POST', {
      match: { variant: 'canary' },
      distribution: { kind: 'normal', mean: 0.13, sd: -1 },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.message).toMatch(/sd of 0 or more/);
    const both = await control('/_sim/prometheus/rules', 'POST', {
      match: { variant: 'canary' },
      value: 1,
      distribution: normal,
    });
    expect(both.status).toBe(400);
    expect(sim.prometheusRules()).toHaveLength(1);
  });

  it('draws the same value at a timestamp on every read, for a rule and seed', async () => {
    sim.setPrometheusRule({ variant: 'canary' }, { distribution: normal });
    sim.setPrometheusRule({ variant: 'baseline' }, { distribution: normal });
    const read = async (query: string, start: number, end: number) =>
      numbers(
        await range({ query, start: `${start}`, end: `${end}`, step: '15s' }),
      );
    const first = await read(CANARY, 1_700_000_000, 1_700_000_600);
    const later = await read(CANARY, 1_700_000_300, 1_700_000_900);
    expect(first).toHaveLength(41);
    expect(new Set(first).size).toBe(41);
    // 1_700_000_300 is step 20 of the first read.
    expect(later.slice(0, 21)).toEqual(first.slice(20));

    // The same seed again draws the same values; another seed does not.
    sim.setPrometheusRule(
      { variant: 'canary' },
      { distribution: normal, seed: 1 },
    );
    expect(await read(CANARY, 1_700_000_000, 1_700_000_600)).toEqual(first);
    sim.setPrometheusRule(
      { variant: 'canary' },
      { distribution: normal, seed: 2 },
    );
    const reseeded = await read(CANARY, 1_700_000_000, 1_700_000_600);
    expect(reseeded.filter((v, i) => v === first[i])).toEqual([]);

    // The baseline's rule, with the same seed, draws its own samples.
    const baseline = await read(BASELINE, 1_700_000_000, 1_700_000_600);
    expect(baseline.filter((v, i) => v === first[i])).toEqual([]);

    // An instant query answers the value of the range at its time.
    const instant = await call(
      `${sim.prometheusUrl}/api/v1/query?query=${encodeURIComponent(
        BASELINE,
      )}&time=1700000015`,
    );
    expect(instant.json.data.result[0].value).toEqual([
      1700000015,
      String(baseline[1]),
    ]);
  });

  it('draws a normal sample whose mean and sd are those set', async () => {
    sim.setPrometheusRule({ variant: 'canary' }, { distribution: normal });
    const xs = numbers(
      await range({ query: CANARY, start: '0', end: '999', step: '1' }),
    );
    expect(xs).toHaveLength(1_000);
    const { mean, sd } = meanAndSd(xs);
    // Four standard errors of the mean; the sample sd within 10 % (4.5 of its standard errors).
    expect(Math.abs(mean - 0.13)).toBeLessThan((4 * 0.01) / Math.sqrt(1_000));
    expect(Math.abs(sd - 0.01)).toBeLessThan(0.001);
  });

  it('draws a lognormal sample whose logarithm has the mu and sigma set', async () => {
    sim.setPrometheusRule(
      { variant: 'canary' },
      { distribution: { kind: 'lognormal', mu: Math.log(0.2), sigma: 0.3 } },
    );
    const xs = numbers(
      await range({ query: CANARY, start: '0', end: '999', step: '1' }),
    );
    expect(Math.min(...xs)).toBeGreaterThan(0);
    const { mean, sd } = meanAndSd(xs.map(Math.log));
    expect(Math.abs(mean - Math.log(0.2))).toBeLessThan(
      (4 * 0.3) / Math.sqrt(1_000),
    );
    expect(Math.abs(sd - 0.3)).toBeLessThan(0.03);
  });

  it('draws a constant', async () => {
    sim.setPrometheusRule(
      { variant: 'canary' },
      { distribution: { kind: 'constant', value: 0.25 } },
    );
    const xs = numbers(
      await range({ query: CANARY, start: '0', end: '60', step: '1m' }),
    );
    expect(xs).toEqual([0.25, 0.25]);
  });
});

describe('Prometheus faults', () => {
  const q = { query: 'up', start: '0', end: '60', step: '15s' };

  it('answers 503 Service Unavailable while unavailable, and stays healthy', async () => {
    const set = await control('/_sim/prometheus/fault', 'POST', {
      mode: 'unavailable',
    });
    expect(set.json).toEqual({ mode: 'unavailable' });
    const answer = await range(q);
    expect(answer.status).toBe(503);
    expect(answer.text).toBe('Service Unavailable');
    const instant = await call(`${sim.prometheusUrl}/api/v1/query?query=up`);
    expect(instant.status).toBe(503);
    expect((await call(`${sim.prometheusUrl}/-/ready`)).status).toBe(503);
    expect((await call(`${sim.prometheusUrl}/-/healthy`)).status).toBe(200);
    sim.setPrometheusFault('ok');
    expect((await range(q)).status).toBe(200);
  });

  it('closes every connection unanswered while down', async () => {
    sim.setPrometheusFault('down');
    await expect(range(q)).rejects.toThrow();
    sim.setPrometheusFault('ok');
    expect((await range(q)).status).toBe(200);
  });
});
