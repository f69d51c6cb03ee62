import { InputError } from '@backstage/errors';
import { spec } from '../schema/openapi';
import { parseListQuery } from './queryValidation';
import {
  checkBody,
  checkQuery,
  isPathParameter,
  isSchema,
} from './specValidation';

/*
 * Request validation comes from the OpenAPI spec alone: these bodies and queries are refused by
 * the spec's schemas (no zod is involved), with a 400 that names the field and says what is
 * wrong.
 */

function refusal(run: () => void): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    return (error as Error).message;
  }
  throw new Error('accepted');
}

const cluster = {
  name: 'edge',
  endpoint: 'https://10.0.0.1:6443',
  kubeconfigRef: 'secret:fleet-system/edge',
};

describe('spec request validation', () => {
  it('refuses a field the spec does not have (additionalProperties: false)', () => {
    const schema = (spec as any).components.schemas.CreateClusterRequest;
    expect(schema.additionalProperties).toBe(false);
    expect(
      refusal(() =>
        checkBody('post', '/clusters', { ...cluster, color: 'red' }, 'cluster'),
      ),
    ).toBe("Invalid cluster: cluster: unknown field 'color'");
  });

  it('refuses a value of the wrong type or out of bounds, naming the field', () => {
    expect(
      refusal(() =>
        checkBody(
          'patch',
          '/clusters/{name}',
          { failureThreshold: 'three' },
          'cluster update',
        ),
      ),
    ).toBe('Invalid cluster update: failureThreshold: must be integer,null');
    expect(
      refusal(() =>
        checkBody(
          'post',
          '/deployments',
          {
            entityRef: 'component:default/a',
            cluster: 'east',
            replicas: 5000,
          },
          'deployment',
        ),
      ),
    ).toBe('Invalid deployment: replicas: must be <= 1000');
  });

  it("says a schema's x-message, and a missing field", () => {
    const message = refusal(() =>
      checkBody('post', '/clusters', { ...cluster, name: 'Edge_1' }, 'cluster'),
    );
    expect(message).toMatch(/^Invalid cluster: name: must be a DNS-1123 label/);
    expect(
      refusal(() =>
        checkBody('post', '/clusters', { name: 'edge' }, 'cluster'),
      ),
    ).toBe(
      'Invalid cluster: endpoint: is required; kubeconfigRef: is required',
    );
  });

  it('reports the branch of an alternative that has the right shape', () => {
    expect(
      refusal(() =>
        checkBody(
          'post',
          '/applications/{id}/releases',
          {
            env: {
              DB_PASSWORD: {
                valueFrom: { secretKeyRef: { name: 'Bad_Name', key: 'k' } },
              },
            },
          },
          'release',
        ),
      ),
    ).toBe(
      'Invalid release: env.DB_PASSWORD.valueFrom.secretKeyRef.name: must be a Secret or ConfigMap name (DNS-1123 subdomain)',
    );
    expect(
      refusal(() =>
        checkBody(
          'post',
          '/applications/{id}/releases',
          { env: { A: null } },
          'release',
        ),
      ),
    ).toMatch(/^Invalid release: env\.A: must be text/);
  });

  it("checks query parameters by the operation's parameters", () => {
    expect(
      refusal(() => checkQuery('get', '/clusters', { status: 'GONE' })),
    ).toMatch(
      /^Invalid query: status: must be equal to one of the allowed values/,
    );
    expect(
      refusal(() => checkQuery('get', '/clusters', { limit: '1e3' })),
    ).toBe('Invalid query: limit: must be an integer from 1 to 1000');
    expect(() => checkQuery('get', '/clusters', { other: 'x' })).not.toThrow();
    expect(
      refusal(() =>
        checkQuery('delete', '/deployments/{id}', { force: 'true', x: '1' }),
      ),
    ).toBe("Invalid query: query: unknown field 'x'");
  });

  it('tells path parameters that cannot name anything', () => {
    expect(isPathParameter('clusterName', 'east')).toBe(true);
    expect(isPathParameter('clusterName', 'East')).toBe(false);
    expect(
      isPathParameter('deploymentId', '7d0b8a52-6a86-4d43-9d5b-0f1f3b2f2a10'),
    ).toBe(true);
    expect(isPathParameter('deploymentId', 'not-an-id')).toBe(false);
  });
});

describe('spec lengths', () => {
  it('counts a length in UTF-16 units, as JavaScript and the former checks did', () => {
    const emoji = '\u{1F600}'; // two UTF-16 units
    expect(isSchema('Image', `registry.example/app:${'a'.repeat(400)}`)).toBe(
      true,
    );
    // 300 emoji: 300 characters, 600 units, over the image's 512.
    expect(isSchema('Image', `r/${emoji.repeat(300)}`)).toBe(false);
    expect(isSchema('Image', `r/${emoji.repeat(200)}`)).toBe(true);
  });
});

describe('list queries', () => {
  it("ignores another list's parameter, as any parameter a list does not know", () => {
    expect(parseListQuery('/applications', { status: 'foo' })).toEqual({});
    expect(parseListQuery('/deployments', { status: 'foo' })).toEqual({});
    expect(() => parseListQuery('/clusters', { status: 'foo' })).toThrow(
      InputError,
    );
  });
});

describe('a canary judged against its baseline, in the spec', () => {
  const strategy = (template: object, judge?: object) => ({
    canary: { steps: [{ setWeight: 50 }] },
    analysis: {
      templates: [
        {
          name: 'latency',
          provider: {
            prometheus: {
              address: 'http://prometheus:9090',
              query: 'latency{variant="{{variant}}"}',
            },
          },
          ...template,
        },
      ],
      ...(judge ? { judge } : {}),
    },
  });
  const compare = { baseline: true, direction: 'increase' };

  it('takes a template with compare and no successCondition, and a judge', () => {
    expect(
      isSchema(
        'ReleaseStrategy',
        strategy({ compare, weight: 2 }, { pass: 90, marginal: 70 }),
      ),
    ).toBe(true);
    expect(
      isSchema('ReleaseStrategy', strategy({ successCondition: 'true' })),
    ).toBe(true);
  });

  it('refuses an alpha, minSamples, direction, weight or score out of range', () => {
    const refused = [
      strategy({ compare: { ...compare, alpha: 0 } }),
      strategy({ compare: { ...compare, alpha: 0.51 } }),
      strategy({ compare: { ...compare, minSamples: 2 } }),
      strategy({ compare: { ...compare, minSamples: 3.5 } }),
      strategy({ compare: { ...compare, direction: 'up' } }),
      strategy({ compare: { ...compare, baseline: false } }),
      strategy({ compare: { direction: 'increase' } }),
      strategy({ compare, weight: 0 }),
      strategy({ compare }, { pass: 101 }),
      strategy({ compare }, { marginal: -1 }),
    ];
    refused.forEach(value =>
      expect(isSchema('ReleaseStrategy', value)).toBe(false),
    );
  });

  it('describes what a step stores', () => {
    const metric = {
      template: 'latency',
      result: 'High',
      canaryMedian: 0.4,
      baselineMedian: 0.2,
      u: 850,
      p: 0.0001,
      canarySamples: 30,
      baselineSamples: 30,
      weight: 1,
    };
    const judgment = {
      at: '2026-12-06T14:00:00.000Z',
      cluster: 'east',
      stepIndex: 1,
      score: 0,
      verdict: 'Fail',
      metrics: [
        metric,
        {
          ...metric,
          result: 'NoData',
          canaryMedian: null,
          baselineMedian: null,
          u: null,
          p: null,
        },
      ],
    };
    expect(isSchema('CanaryJudgment', judgment)).toBe(true);
    expect(isSchema('CanaryJudgment', { ...judgment, verdict: 'Maybe' })).toBe(
      false,
    );
  });
});
