/*
 * Objects a real API server refuses, sent over HTTPS: each is refused with the real server's
 * status and words, checked against the published schemas (Kubernetes' OpenAPI models, Argo
 * Rollouts' and Istio's CRDs) and the server's own rules; `fieldValidation` decides what an
 * unknown field does.
 */
import { request } from 'node:https';
import { KubeSimulator } from './KubeSimulator';

let sim: KubeSimulator;

beforeAll(async () => {
  sim = await KubeSimulator.start({
    clusters: ['c'],
    crds: {
      c: ['rollouts.argoproj.io', 'virtualservices.networking.istio.io'],
    },
  });
});

afterAll(async () => {
  await sim?.stop();
});

interface Answer {
  status: number;
  body: { message?: string; details?: { causes?: Array<{ field?: string }> } };
  warnings: string[];
}

function send(
  method: string,
  path: string,
  body: unknown,
  contentType = 'application/json',
): Promise<Answer> {
  return new Promise((done, fail) => {
    const req = request(
      `${sim.endpoint('c')}${path}`,
      {
        method,
        ca: sim.caPem,
        headers: {
          authorization: `Bearer ${sim.token('c')}`,
          'content-type': contentType,
        },
      },
      res => {
        const chunks: Buffer[] = [];
        res.on('data', c => chunks.push(c));
        res.on('end', () => {
          const warning = res.headers.warning;
          done({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString() || '{}'),
            warnings: Array.isArray(warning)
              ? warning
              : (warning ?? '').split(/,\s*(?=299)/).filter(Boolean),
          });
        });
      },
    );
    req.on('error', fail);
    req.end(JSON.stringify(body));
  });
}

const NS = '/namespaces/default';
const DEPLOYMENTS = `/apis/apps/v1${NS}/deployments`;
const SERVICES = `/api/v1${NS}/services`;
const ROLLOUTS = `/apis/argoproj.io/v1alpha1${NS}/rollouts`;
const ISTIO = `/apis/networking.istio.io/v1${NS}`;

const container = {
  name: 'app',
  image: 'ghcr.io/acme/app:1',
  resources: { requests: { cpu: '100m' }, limits: { cpu: '200m' } },
};

function deployment(name: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: 'x' } },
      template: {
        metadata: { labels: { app: 'x' } },
        spec: { containers: [{ ...container, ...extra }] },
      },
    },
  };
}

function podSpec(extra: Record<string, unknown>) {
  const d = deployment('pods');
  Object.assign(d.spec.template.spec, extra);
  return d;
}

const ingress = (host: string, path = '/') => ({
  metadata: { name: 'web' },
  spec: {
    rules: [
      {
        host,
        http: {
          paths: [
            {
              path,
              pathType: 'Prefix',
              backend: { service: { name: 'web', port: { number: 80 } } },
            },
          ],
        },
      },
    ],
  },
});

const rollout = (canary: Record<string, unknown>) => ({
  metadata: { name: 'ro' },
  spec: {
    selector: { matchLabels: { app: 'x' } },
    template: deployment('x').spec.template,
    strategy: { canary },
  },
});

type Row = [string, string, unknown, number, string];

const rows: Row[] = [
  [
    'an unknown field (Strict)',
    `${DEPLOYMENTS}?fieldValidation=Strict`,
    deployment('unknown', { bogus: true }),
    400,
    'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.template.spec.containers[0].bogus"',
  ],
  [
    'a wrong type',
    DEPLOYMENTS,
    {
      ...deployment('typed'),
      spec: { ...deployment('typed').spec, replicas: '3' },
    },
    400,
    'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32',
  ],
  [
    'a 64-character Service name',
    SERVICES,
    { metadata: { name: 's'.repeat(64) }, spec: { ports: [{ port: 80 }] } },
    422,
    'metadata.name: Invalid value: "ssss',
  ],
  [
    'a 254-character Deployment name',
    DEPLOYMENTS,
    deployment('d'.repeat(254)),
    422,
    'metadata.name: Invalid value: "dddd',
  ],
  [
    'an IP address as Ingress host',
    `/apis/networking.k8s.io/v1${NS}/ingresses`,
    ingress('10.0.0.1'),
    422,
    'spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address',
  ],
  [
    'an Ingress path with //',
    `/apis/networking.k8s.io/v1${NS}/ingresses`,
    ingress('web.example.com', '/api//v1'),
    422,
    'spec.rules[0].http.paths[0].path: Invalid value: "/api//v1": must not contain \'//\'',
  ],
  [
    'a request above its limit',
    DEPLOYMENTS,
    deployment('over', {
      resources: { requests: { cpu: '500m' }, limits: { cpu: '200m' } },
    }),
    422,
    'spec.template.spec.containers[0].resources.requests: Invalid value: "500m": must be less than or equal to cpu limit of 200m',
  ],
  [
    'a PDB with minAvailable and maxUnavailable',
    `/apis/policy/v1${NS}/poddisruptionbudgets`,
    {
      metadata: { name: 'pdb' },
      spec: {
        minAvailable: 1,
        maxUnavailable: 1,
        selector: { matchLabels: { app: 'x' } },
      },
    },
    422,
    'minAvailable and maxUnavailable cannot be both set',
  ],
  [
    'a Rollout with an unknown strategy field (Strict)',
    `${ROLLOUTS}?fieldValidation=Strict`,
    rollout({ steps: [{ setWeight: 10 }], bogusStep: 1 }),
    400,
    'Rollout in version "v1alpha1" cannot be handled as a Rollout: strict decoding error: unknown field "spec.strategy.canary.bogusStep"',
  ],
  [
    'a VirtualService with a negative weight',
    `${ISTIO}/virtualservices`,
    {
      metadata: { name: 'vs' },
      spec: {
        hosts: ['web'],
        http: [
          {
            route: [
              { destination: { host: 'web' }, weight: 110 },
              { destination: { host: 'web-canary' }, weight: -10 },
            ],
          },
        ],
      },
    },
    400,
    'admission webhook "validation.istio.io" denied the request: configuration is invalid: weight 110 > 100, weight -10 < 0',
  ],
  [
    "a Secret key '..'",
    `/api/v1${NS}/secrets`,
    { metadata: { name: 'sec' }, stringData: { '..': 'x' } },
    422,
    `data: Invalid value: "..": must not be '..'`,
  ],
  [
    'a node field selector with two values',
    DEPLOYMENTS,
    podSpec({
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              {
                matchFields: [
                  {
                    key: 'metadata.name',
                    operator: 'In',
                    values: ['a', 'b'],
                  },
                ],
              },
            ],
          },
        },
      },
    }),
    422,
    "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values: Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
  ],
  [
    'a DestinationRule with an unknown field (Strict)',
    `${ISTIO}/destinationrules?fieldValidation=Strict`,
    {
      metadata: { name: 'dr' },
      spec: { host: 'web', trafficPolicy: { loadBalancer: { bogus: 1 } } },
    },
    400,
    'strict decoding error: unknown field "spec.trafficPolicy.loadBalancer.bogus"',
  ],
  [
    'an AnalysisTemplate with a wrong type',
    `/apis/argoproj.io/v1alpha1${NS}/analysistemplates`,
    {
      metadata: { name: 'at' },
      spec: { metrics: [{ name: 5, provider: {} }] },
    },
    422,
    'spec.metrics[0].name: Invalid value: "integer": spec.metrics[0].name in body must be of type string: "integer"',
  ],
];

describe('what a real API server refuses', () => {
  it.each(rows)('refuses %s', async (_what, path, body, status, message) => {
    const answer = await send('POST', path, body);
    expect(answer.status).toBe(status);
    expect(answer.body.message).toContain(message);
  });

  it('refuses a changed Deployment selector (immutable)', async () => {
    expect((await send('POST', DEPLOYMENTS, deployment('sel'))).status).toBe(
      201,
    );
    const answer = await send(
      'PATCH',
      `${DEPLOYMENTS}/sel`,
      {
        spec: {
          selector: { matchLabels: { app: 'y' } },
          template: { metadata: { labels: { app: 'y' } } },
        },
      },
      'application/merge-patch+json',
    );
    expect(answer.status).toBe(422);
    expect(answer.body.message).toContain(
      'spec.selector: Invalid value: {"matchLabels":{"app":"y"}}: field is immutable',
    );
  });

  it('stores the same kinds when they are valid', async () => {
    const valid: Array<[string, unknown]> = [
      [DEPLOYMENTS, deployment('valid')],
      [`/apis/networking.k8s.io/v1${NS}/ingresses`, ingress('web.example.com')],
      [
        ROLLOUTS,
        {
          ...rollout({ steps: [{ setWeight: 10 }] }),
          metadata: { name: 'ro-ok' },
        },
      ],
      [
        `${ISTIO}/destinationrules`,
        { metadata: { name: 'dr-ok' }, spec: { host: 'web' } },
      ],
    ];
    for (const [path, body] of valid) {
      const answer = await send('POST', `${path}?fieldValidation=Strict`, body);
      expect([answer.status, answer.body.message]).toEqual([201, undefined]);
    }
  });
});

describe('fieldValidation', () => {
  it('drops an unknown field with a warning by default, silently under Ignore', async () => {
    const warned = await send(
      'POST',
      DEPLOYMENTS,
      deployment('warned', { bogus: 1 }),
    );
    expect(warned.status).toBe(201);
    expect(warned.warnings).toEqual([
      '299 - "unknown field \\"spec.template.spec.containers[0].bogus\\""',
    ]);
    const stored = await send('GET', `${DEPLOYMENTS}/warned`, undefined);
    expect(JSON.stringify(stored.body)).not.toContain('bogus');
    const ignored = await send(
      'POST',
      `${DEPLOYMENTS}?fieldValidation=Ignore`,
      deployment('ignored', { bogus: 1 }),
    );
    expect([ignored.status, ignored.warnings]).toEqual([201, []]);
  });

  it('refuses an unknown field under Strict on every write: update and each patch', async () => {
    await send('POST', DEPLOYMENTS, deployment('writes'));
    const url = `${DEPLOYMENTS}/writes?fieldValidation=Strict`;
    const bogus = { spec: { bogus: 1 } };
    const answers = [
      await send('PUT', url, { ...deployment('writes'), ...bogus }),
      await send('PATCH', url, bogus, 'application/merge-patch+json'),
      await send('PATCH', url, bogus, 'application/strategic-merge-patch+json'),
      await send(
        'PATCH',
        url,
        [{ op: 'add', path: '/spec/bogus', value: 1 }],
        'application/json-patch+json',
      ),
    ];
    expect(answers.map(a => [a.status, a.body.message])).toEqual(
      answers.map(() => [
        400,
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.bogus"',
      ]),
    );
  });

  it('refuses a fieldValidation it does not know', async () => {
    const answer = await send(
      'POST',
      `${DEPLOYMENTS}?fieldValidation=Loud`,
      deployment('loud'),
    );
    expect(answer.status).toBe(400);
  });
});
