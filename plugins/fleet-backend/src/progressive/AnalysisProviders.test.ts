import type { AnalysisTemplate } from '@cnp/plugin-fleet-common';
import type { FleetAnalysisProvider } from '@cnp/plugin-fleet-node';
import {
  AnalysisProviders,
  checkAnalysisProviders,
  createPrometheusAnalysisProvider,
} from './AnalysisProviders';

const context = {
  cluster: 'east',
  app: 'payments',
  namespace: 'apps',
  revision: 2,
  version: '2.0.0',
};

const template = (provider: object): AnalysisTemplate => ({
  name: 'success-rate',
  successCondition: 'result[0] >= 0.99',
  provider: provider as AnalysisTemplate['provider'],
});

/** A Prometheus answer with one sample, as `fetch` gives it. */
const answer = (value: string) =>
  (async () =>
    new Response(
      JSON.stringify({
        status: 'success',
        data: { resultType: 'vector', result: [{ value: [0, value] }] },
      }),
    )) as unknown as typeof fetch;

describe('AnalysisProviders', () => {
  it("measures a template by the provider its type names, Fleet's Prometheus among them", async () => {
    const seen: string[] = [];
    const datadog: FleetAnalysisProvider = {
      type: 'datadog',
      measure: async ({ template: t, config, context: c, timeoutMs }) => {
        seen.push(
          `${t.name} on ${c.cluster} within ${timeoutMs}: ${JSON.stringify(
            config,
          )}`,
        );
        return {
          template: t.name,
          cluster: c.cluster,
          condition: t.successCondition,
          at: new Date().toISOString(),
          phase: 'Successful',
          value: 1,
        };
      },
    };
    const analysis = AnalysisProviders.create({
      providers: [
        datadog,
        createPrometheusAnalysisProvider({ fetchImpl: answer('0.995') }),
      ],
    });
    expect(
      await analysis.measure(template({ datadog: { query: 'q' } }), context, {
        timeoutMs: 700,
      }),
    ).toMatchObject({ phase: 'Successful', value: 1 });
    expect(seen).toEqual(['success-rate on east within 700: {"query":"q"}']);
    expect(analysis.names()).toEqual(['datadog', 'prometheus']);
    expect(
      await analysis.measure(
        template({
          prometheus: { address: 'http://prometheus:9090', query: 'up' },
        }),
        context,
      ),
    ).toMatchObject({ phase: 'Successful', value: 0.995, cluster: 'east' });
  });

  it('is an error, never a success, for a type no provider measures', async () => {
    const analysis = AnalysisProviders.create({
      providers: [createPrometheusAnalysisProvider()],
    });
    expect(
      await analysis.measure(template({ datadog: { query: 'q' } }), context),
    ).toMatchObject({
      phase: 'Error',
      value: null,
      message: 'error',
      template: 'success-rate',
      cluster: 'east',
    });
  });

  it("keeps a module provider's result in Fleet's words only: its own text goes to the log", async () => {
    const answers: any[] = [
      { phase: 'Inconclusive', value: null, message: 'HTTP 403 token=s3cr3t' },
      { phase: 'Inconclusive', value: null, message: 'no data' },
      { phase: 'Successful', value: 1, message: 'fine, token=s3cr3t' },
      { phase: 'Failed', value: 0.5, message: 'low, token=s3cr3t' },
      { phase: 'Error', value: 2, message: 'bad condition, token=s3cr3t' },
      { phase: 'Passed', value: 'high', extra: 's3cr3t' },
      { phase: 'Inconclusive', value: null, message: 'unreachable' },
      { phase: 'Inconclusive', value: null, message: 'error' },
    ];
    const debug: string[] = [];
    const analysis = AnalysisProviders.create({
      providers: [
        {
          type: 'datadog',
          measure: async ({ template: t }) => ({
            template: 'another',
            cluster: 'elsewhere',
            condition: `${t.successCondition} (as given)`,
            at: 'yesterday',
            ...answers.shift(),
          }),
        },
      ],
      logger: { debug: (message: string) => debug.push(message) } as any,
    });
    const measured = [];
    for (let i = 0; i < 8; i++) {
      measured.push(await analysis.measure(template({ datadog: {} }), context));
    }
    expect(
      measured.map(({ at, ...m }) => {
        expect(Date.parse(at)).not.toBeNaN();
        return m;
      }),
    ).toEqual(
      [
        // A provider's own inconclusive text is kept out: its word is Fleet's.
        { phase: 'Inconclusive', value: null, message: 'no data' },
        { phase: 'Inconclusive', value: null, message: 'no data' },
        { phase: 'Successful', value: 1 },
        { phase: 'Failed', value: 0.5 },
        { phase: 'Error', value: 2, message: 'error' },
        // A phase Fleet does not know, and an inconclusive result that says it could not be
        // taken, are errors.
        { phase: 'Error', value: null, message: 'error' },
        { phase: 'Error', value: null, message: 'unreachable' },
        { phase: 'Error', value: null, message: 'error' },
      ].map(m => ({
        template: 'success-rate',
        cluster: 'east',
        condition: 'result[0] >= 0.99',
        ...m,
      })),
    );
    expect(debug).toEqual([
      "Analysis provider 'datadog' measured success-rate on east: Inconclusive (HTTP 403 token=s3cr3t)",
      "Analysis provider 'datadog' measured success-rate on east: Successful (fine, token=s3cr3t)",
      "Analysis provider 'datadog' measured success-rate on east: Failed (low, token=s3cr3t)",
      "Analysis provider 'datadog' measured success-rate on east: Error (bad condition, token=s3cr3t)",
    ]);
  });

  it('counts a module provider that throws as an error measurement, its text only logged', async () => {
    const warn: string[] = [];
    const analysis = AnalysisProviders.create({
      providers: [
        {
          type: 'datadog',
          measure: async () => {
            throw new Error('ECONNREFUSED api.datadog, key=s3cr3t');
          },
        },
      ],
      logger: { warn: (message: string) => warn.push(message) } as any,
    });
    expect(await analysis.measure(template({ datadog: {} }), context)).toEqual({
      template: 'success-rate',
      cluster: 'east',
      condition: 'result[0] >= 0.99',
      at: expect.any(String),
      phase: 'Error',
      value: null,
      message: 'error',
    });
    expect(warn).toEqual([
      "Analysis provider 'datadog' could not measure success-rate on east: ECONNREFUSED api.datadog, key=s3cr3t",
    ]);
  });

  it('counts a module provider that never answers as an error once its time is up', async () => {
    const warn: string[] = [];
    const analysis = AnalysisProviders.create({
      providers: [{ type: 'stuck', measure: () => new Promise(() => {}) }],
      logger: { warn: (message: string) => warn.push(message) } as any,
    });
    const measured = await analysis.measure(template({ stuck: {} }), context, {
      timeoutMs: 50,
    });
    expect(measured).toMatchObject({ phase: 'Error', message: 'error' });
    expect(warn).toEqual([
      "Analysis provider 'stuck' could not measure success-rate on east: no answer within 1050 ms",
    ]);
  });

  it('keeps the Prometheus allow-list: an address not on it is not queried', async () => {
    let queried = false;
    const analysis = AnalysisProviders.create({
      providers: [
        createPrometheusAnalysisProvider({
          allowedAddresses: ['http://prometheus.monitoring:9090'],
          fetchImpl: (async (...args: Parameters<typeof fetch>) => {
            queried = true;
            return answer('1')(...args);
          }) as typeof fetch,
        }),
      ],
    });
    expect(
      await analysis.measure(
        template({
          prometheus: { address: 'http://elsewhere:9090', query: 'up' },
        }),
        context,
      ),
    ).toMatchObject({ phase: 'Error', message: 'error' });
    expect(queried).toBe(false);
  });

  it('refuses (400) a release whose analysis names a provider that is not registered', () => {
    const strategy = (provider: object) => ({
      analysis: {
        templates: [template({ prometheus: {} }), template(provider)],
      },
    });
    expect(() =>
      checkAnalysisProviders(strategy({ datadog: { query: 'q' } }), [
        'datadog',
        'prometheus',
      ]),
    ).not.toThrow();
    expect(() =>
      checkAnalysisProviders(strategy({ datadog: { query: 'q' } }), [
        'prometheus',
      ]),
    ).toThrow(
      "Invalid release: strategy.analysis.templates.1.provider: 'datadog' is not a registered analysis provider (registered: prometheus)",
    );
    expect(() => checkAnalysisProviders(undefined, [])).not.toThrow();
  });

  it('refuses a type added twice', () => {
    expect(() =>
      AnalysisProviders.create({
        providers: [
          createPrometheusAnalysisProvider(),
          createPrometheusAnalysisProvider(),
        ],
      }),
    ).toThrow("Analysis provider 'prometheus' is added twice");
  });
});
