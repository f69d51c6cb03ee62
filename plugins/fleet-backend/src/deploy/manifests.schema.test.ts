import { request } from 'node:https';
import { useSimulator } from '@cnp/kube-simulator';
import { buildManifests } from './manifests';

// The objects Fleet applies are valid against the published Kubernetes schemas and the API
// server's rules, as the simulator checks them with fieldValidation=Strict; the same check
// refuses one with a field the schema does not have.

const sim = useSimulator({ clusters: ['east'] });

function create(
  path: string,
  body: unknown,
): Promise<{ status: number; message?: string }> {
  return new Promise((done, fail) => {
    const req = request(
      `${sim.endpoint('east')}${path}?fieldValidation=Strict`,
      {
        method: 'POST',
        ca: sim.caPem,
        headers: {
          authorization: `Bearer ${sim.token('east')}`,
          'content-type': 'application/json',
        },
      },
      res => {
        const chunks: Buffer[] = [];
        res.on('data', c => chunks.push(c));
        res.on('end', () =>
          done({
            status: res.statusCode ?? 0,
            message: JSON.parse(Buffer.concat(chunks).toString()).message,
          }),
        );
      },
    );
    req.on('error', fail);
    req.end(JSON.stringify(body));
  });
}

const NS = '/namespaces/default';

describe("Fleet's manifests against the real schemas", () => {
  const manifests = buildManifests({
    name: 'payments',
    entityRef: 'component:default/payments',
    namespace: 'default',
    defaultReplicas: 1,
    defaultResources: {
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { cpu: '200m', memory: '256Mi' },
    },
    spec: {
      image: 'ghcr.io/acme/payments:1.4.2',
      replicas: 3,
      port: 8080,
      env: {
        LOG_LEVEL: 'debug',
        DB_PASSWORD: {
          valueFrom: { secretKeyRef: { name: 'db', key: 'password' } },
        },
      },
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              {
                matchExpressions: [
                  {
                    key: 'kubernetes.io/hostname',
                    operator: 'NotIn',
                    values: ['bm-07'],
                  },
                ],
                matchFields: [
                  {
                    key: 'metadata.name',
                    operator: 'NotIn',
                    values: ['bm-08'],
                  },
                ],
              },
            ],
          },
        },
      },
      tolerations: [
        {
          key: 'dedicated',
          operator: 'Equal',
          value: 'pay',
          effect: 'NoSchedule',
        },
      ],
      ingress: { host: 'pay.example.com', path: '/api', tls: true },
    },
  });

  it('applies every object under Strict', async () => {
    const sent = [
      [`/apis/apps/v1${NS}/deployments`, manifests.deployment],
      [`/api/v1${NS}/services`, manifests.service],
      [
        `/apis/policy/v1${NS}/poddisruptionbudgets`,
        manifests.podDisruptionBudget,
      ],
      [`/apis/networking.k8s.io/v1${NS}/ingresses`, manifests.ingress],
    ] as const;
    for (const [path, body] of sent) {
      expect(body).toBeDefined();
      expect([path, await create(path, body)]).toEqual([path, { status: 201 }]);
    }
  });

  it('would refuse one with a field the schema does not have', async () => {
    const deployment = JSON.parse(JSON.stringify(manifests.deployment));
    deployment.metadata.name = 'payments-extra';
    deployment.spec.template.spec.containers[0].readinessProbe.httpGet.bogus = 1;
    expect(await create(`/apis/apps/v1${NS}/deployments`, deployment)).toEqual({
      status: 400,
      message:
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.template.spec.containers[0].readinessProbe.httpGet.bogus"',
    });
  });
});
