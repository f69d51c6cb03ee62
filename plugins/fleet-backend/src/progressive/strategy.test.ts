import { parseOrThrow, releaseSchema } from '../service/validation';
import {
  parseDuration,
  resolveIntOrPercent,
  resolveWaves,
  strategySchema,
  weightAt,
} from './strategy';

const valid = {
  waves: [{ clusters: ['a'] }, { percent: 50 }, { percent: 100 }],
  canary: {
    steps: [
      { setWeight: 20 },
      { pause: {} },
      { setWeight: 60 },
      { pause: { duration: '45m' } },
      { setWeight: 100 },
    ],
    maxSurge: '30%',
    maxUnavailable: 0,
    trafficRouting: {
      istio: { virtualService: { name: 'routing', routes: ['primary'] } },
    },
  },
  analysis: {
    templates: [
      {
        name: 'http-success-rate',
        interval: '2m',
        failureLimit: 1,
        successCondition: 'result[0] >= 0.995',
        provider: {
          prometheus: { address: 'http://prometheus:9090', query: 'up' },
        },
      },
    ],
  },
  rollback: { enabled: true, timeout: '15m' },
};

const judged = {
  name: 'latency',
  compare: { baseline: true, direction: 'increase', alpha: 0.05 },
  weight: 2,
  provider: {
    prometheus: {
      address: 'http://prometheus:9090',
      query:
        'histogram_quantile(0.99, rate(latency_bucket{variant="{{variant}}"}[1m]))',
    },
  },
};

/** The valid strategy with one more template, judged against a baseline. */
function withJudged(template: object, judge?: object) {
  return {
    ...valid,
    analysis: {
      templates: [...valid.analysis.templates, { ...judged, ...template }],
      ...(judge ? { judge } : {}),
    },
  };
}

function problem(strategy: unknown): string {
  try {
    parseOrThrow(releaseSchema, { strategy }, 'release');
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a 400');
}

describe('release strategy', () => {
  it('accepts the strategy of the design as written', () => {
    expect(strategySchema.parse(valid)).toEqual(valid);
  });

  it('accepts Gateway API routing by an HTTPRoute, and refuses it beside Istio routing', () => {
    const gateway = {
      ...valid,
      canary: {
        ...valid.canary,
        trafficRouting: { gatewayAPI: { httpRoute: 'payments-route' } },
      },
    };
    expect(strategySchema.parse(gateway)).toEqual(gateway);
    const both = {
      ...valid,
      canary: {
        ...valid.canary,
        trafficRouting: {
          ...valid.canary.trafficRouting,
          ...gateway.canary.trafficRouting,
        },
      },
    };
    expect(() => strategySchema.parse(both)).toThrow(
      /name either istio or gatewayAPI, not both/,
    );
    expect(() =>
      strategySchema.parse({
        ...valid,
        canary: { ...valid.canary, trafficRouting: { gatewayAPI: {} } },
      }),
    ).toThrow(/httpRoute/);
  });

  it('accepts a template judged against a baseline, without a successCondition', () => {
    const strategy = withJudged({}, { pass: 90, marginal: 60 });
    expect(strategySchema.parse(strategy)).toEqual(strategy);
    expect(strategySchema.parse(withJudged({}, { marginal: 95 }))).toBeTruthy();
  });

  it("accepts an analysis by any provider's name, its settings kept as given", () => {
    const byModule = {
      ...valid,
      analysis: {
        templates: [
          {
            ...valid.analysis.templates[0],
            provider: { datadog: { query: 'avg:errors{*}', window: 5 } },
          },
        ],
      },
    };
    expect(strategySchema.parse(byModule)).toEqual(byModule);
  });

  it.each([
    [
      'weights not increasing',
      { ...valid, canary: { steps: [{ setWeight: 60 }, { setWeight: 60 }] } },
      'strategy.canary.steps.1.setWeight: weights must increase: 60 comes after 60',
    ],
    [
      'a duration that does not parse',
      {
        ...valid,
        canary: { steps: [{ setWeight: 10 }, { pause: { duration: 'soon' } }] },
      },
      'strategy.canary.steps',
    ],
    [
      'an analysis without a provider',
      {
        ...valid,
        analysis: {
          templates: [{ name: 'x', successCondition: 'result[0] > 1' }],
        },
      },
      'strategy.analysis.templates.0.provider: an analysis needs a provider',
    ],
    [
      'an analysis naming two providers',
      {
        ...valid,
        analysis: {
          templates: [
            {
              ...valid.analysis.templates[0],
              provider: {
                ...valid.analysis.templates[0].provider,
                datadog: { query: 'q' },
              },
            },
          ],
        },
      },
      'strategy.analysis.templates.0.provider: must name exactly one analysis provider',
    ],
    [
      "a provider's settings that are not an object",
      {
        ...valid,
        analysis: {
          templates: [
            { ...valid.analysis.templates[0], provider: { datadog: 'q' } },
          ],
        },
      },
      'strategy.analysis.templates.0.provider.datadog: Expected object',
    ],
    [
      'a condition that is not an expression',
      {
        ...valid,
        analysis: {
          templates: [
            {
              ...valid.analysis.templates[0],
              successCondition: 'result[0] >=',
            },
          ],
        },
      },
      'strategy.analysis.templates.0.successCondition: is not a valid expression',
    ],
    [
      'a compared template with an alpha above 0.5',
      withJudged({ compare: { ...judged.compare, alpha: 0.6 } }),
      'strategy.analysis.templates.1.compare.alpha: must be above 0 and at most 0.5',
    ],
    [
      'a compared template with an alpha of 0',
      withJudged({ compare: { ...judged.compare, alpha: 0 } }),
      'strategy.analysis.templates.1.compare.alpha: must be above 0 and at most 0.5',
    ],
    [
      'a compared template with too few minSamples',
      withJudged({ compare: { ...judged.compare, minSamples: 2 } }),
      'strategy.analysis.templates.1.compare.minSamples',
    ],
    [
      'a compare that is not against a baseline',
      withJudged({ compare: { ...judged.compare, baseline: false } }),
      'strategy.analysis.templates.1.compare.baseline: must be true',
    ],
    [
      'a weight of 0',
      withJudged({ weight: 0 }),
      'strategy.analysis.templates.1.weight: must be above 0',
    ],
    [
      'a marginal score above the pass score',
      withJudged({}, { pass: 80, marginal: 90 }),
      'strategy.analysis.judge.marginal: must be at most pass: 90 is above 80',
    ],
    [
      'a marginal score above the default pass score',
      withJudged({}, { marginal: 96 }),
      'strategy.analysis.judge.marginal: must be at most pass: 96 is above 95',
    ],
    [
      'a compared query without {{variant}}',
      withJudged({
        provider: {
          prometheus: { address: 'http://prometheus:9090', query: 'up' },
        },
      }),
      'strategy.analysis.templates.1.provider.prometheus.query: must use {{variant}}',
    ],
    [
      'a compared template of a provider a module added',
      withJudged({ provider: { datadog: { query: '{{variant}}' } } }),
      'strategy.analysis.templates.1.compare: is measured through the prometheus provider only',
    ],
    [
      'a template with both a successCondition and compare',
      withJudged({ successCondition: 'result[0] < 1' }),
      'strategy.analysis.templates.1.compare: give either a successCondition',
    ],
    [
      'a template with neither a successCondition nor compare',
      withJudged({ compare: undefined }),
      'strategy.analysis.templates.1.successCondition: give either a successCondition',
    ],
    [
      'a wave naming two ways',
      { ...valid, waves: [{ clusters: ['a'], percent: 10 }] },
      'strategy.waves.0: a wave names exactly one of clusters, clusterSelector or percent',
    ],
    [
      'a rollback timeout that does not parse',
      { ...valid, rollback: { timeout: '15 minutes' } },
      'strategy.rollback.timeout: must be a duration',
    ],
    [
      'a pause longer than 30 days',
      {
        ...valid,
        canary: {
          steps: [{ setWeight: 10 }, { pause: { duration: '9999999h' } }],
        },
      },
      'strategy.canary.steps',
    ],
    [
      'an analysis interval under a second',
      {
        ...valid,
        analysis: {
          templates: [{ ...valid.analysis.templates[0], interval: 0 }],
        },
      },
      'strategy.analysis.templates.0.interval: must be at least 1s',
    ],
    [
      'maxSurge and maxUnavailable both 0',
      {
        ...valid,
        canary: { ...valid.canary, maxSurge: 0, maxUnavailable: '0%' },
      },
      'strategy.canary.maxSurge: maxSurge and maxUnavailable cannot both be 0',
    ],
    [
      'an unknown key',
      { ...valid, canary: { ...valid.canary, stepz: [] } },
      "Unrecognized key(s) in object: 'stepz'",
    ],
  ])('refuses %s with a 400 naming the field', (_, strategy, message) => {
    expect(problem(strategy)).toContain(message);
  });

  it('parses Go-style durations and seconds', () => {
    expect(parseDuration('45m')).toBe(2_700_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('30')).toBe(30_000);
    expect(parseDuration(2)).toBe(2_000);
    expect(parseDuration('1 hour')).toBeUndefined();
    expect(parseDuration('')).toBeUndefined();
  });

  it('resolves maxSurge up and maxUnavailable down, as Argo does', () => {
    expect(resolveIntOrPercent('25%', 3, 'up')).toBe(1);
    expect(resolveIntOrPercent('25%', 3, 'down')).toBe(0);
    expect(resolveIntOrPercent(2, 3, 'up')).toBe(2);
  });

  it('gives the weight in force at each step', () => {
    const steps = valid.canary.steps;
    expect([0, 1, 2, 3, 4].map(i => weightAt(steps, i))).toEqual([
      20, 20, 60, 60, 100,
    ]);
  });
});

describe('waves', () => {
  const targets = ['a', 'b', 'c', 'd', 'e', 'f'].map((name, i) => ({
    name,
    labels: { env: i < 2 ? 'staging' : 'prod' },
  }));

  it('splits targets in order: named, then cumulative percentages', () => {
    expect(
      resolveWaves(
        [{ clusters: ['f'] }, { percent: 50 }, { percent: 100 }],
        targets,
      ),
    ).toEqual([['f'], ['a', 'b'], ['c', 'd', 'e']]);
  });

  it('selects by labels, and puts the targets no wave took in a last wave', () => {
    expect(
      resolveWaves([{ clusterSelector: { env: 'staging' } }], targets),
    ).toEqual([
      ['a', 'b'],
      ['c', 'd', 'e', 'f'],
    ]);
  });

  it('lets a wave name a skipped (OFFLINE) target: it runs without it, or not at all', () => {
    expect(
      resolveWaves(
        [{ clusters: ['a', 'zz'] }, { clusters: ['zz'] }, { percent: 100 }],
        targets,
        ['zz'],
      ),
    ).toEqual([['a'], ['b', 'c', 'd', 'e', 'f']]);
  });

  it('is one wave of every target without waves', () => {
    expect(resolveWaves(undefined, targets)).toEqual([
      ['a', 'b', 'c', 'd', 'e', 'f'],
    ]);
  });

  it('refuses a wave that selects no cluster, naming it', () => {
    expect(() =>
      resolveWaves([{ clusterSelector: { env: 'dev' } }], targets),
    ).toThrow('strategy.waves.0 selects no cluster');
    expect(() => resolveWaves([{ clusters: ['zz'] }], targets)).toThrow(
      "strategy.waves.0.clusters: 'zz' is not a target of this release",
    );
    expect(() =>
      resolveWaves([{ percent: 100 }, { percent: 100 }], targets),
    ).toThrow('strategy.waves.1 selects no cluster');
  });
});
