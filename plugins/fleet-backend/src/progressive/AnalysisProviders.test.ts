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

  it('is inconclusive, never a success, for a type no provider measures', async () => {
    const analysis = AnalysisProviders.create({
      providers: [createPrometheusAnalysisProvider()],
    });
    expect(
      await analysis.measure(template({ datadog: { query: 'q' } }), context),
    ).toMatchObject({
      phase: 'Inconclusive',
      value: null,
      message: 'error',
      template: 'success-rate',
      cluster: 'east',
    });
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
    ).toMatchObject({ phase: 'Inconclusive', message: 'error' });
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
