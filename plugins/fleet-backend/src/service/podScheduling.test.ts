import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import request from 'supertest';
import { useSimulator } from '@cnp/kube-simulator';
import { startFleetTestBackend } from '../testBackend';
import { createTestDatabases } from '../testing/databases';

// An application's affinity, tolerations and Ingress over HTTP: stored and answered as given,
// and a mistake is a 400 that names the field.

jest.setTimeout(60_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east'] });

const affinity = {
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
        },
      ],
    },
  },
  podAntiAffinity: {
    preferredDuringSchedulingIgnoredDuringExecution: [
      {
        weight: 50,
        podAffinityTerm: {
          labelSelector: { matchLabels: { app: 'payments' } },
          topologyKey: 'kubernetes.io/hostname',
        },
      },
    ],
  },
};

describe.each(databases.eachSupportedId())(
  'pod scheduling fields over HTTP (%s)',
  databaseId => {
    async function start() {
      const knex = await databases.init(databaseId);
      // An Ingress needs a project that names its host: payments' own.
      return startFleetTestBackend({
        knex,
        kubeconfigDir: sim.kubeconfigDir,
        features: [
          catalogServiceMock.factory({
            entities: [
              {
                apiVersion: 'backstage.io/v1alpha1',
                kind: 'Component',
                metadata: { name: 'payments', namespace: 'default' },
                spec: { type: 'service', owner: 'group:default/payments' },
              },
            ],
          }),
        ],
        config: {
          fleet: {
            discovery: { kubeconfigDir: sim.kubeconfigDir },
            projects: [
              {
                name: 'payments',
                owners: ['group:default/payments'],
                namespaces: ['default'],
                ingressHosts: ['*.payments.example.com', 'pay.example.com'],
              },
            ],
          },
        },
      });
    }

    it('stores affinity, tolerations and an Ingress as given', async () => {
      const { server } = await start();
      const spec = {
        image: 'ghcr.io/acme/payments:1.0',
        replicas: 5,
        affinity,
        tolerations: [
          { operator: 'Exists' },
          {
            key: 'node.kubernetes.io/unreachable',
            operator: 'Exists',
            effect: 'NoExecute',
            tolerationSeconds: 30,
          },
        ],
        ingress: { host: 'www.payments.example.com', className: 'nginx' },
      };
      const created = await request(server)
        .post('/api/fleet/applications')
        .send({ entityRef: 'component:default/payments', spec })
        .expect(201);
      expect(created.body.spec).toEqual(spec);
      const patched = await request(server)
        .patch(`/api/fleet/applications/${created.body.id}`)
        .send({ spec: { ingress: { host: 'pay.example.com', tls: true } } })
        .expect(200);
      expect(patched.body.spec.ingress).toEqual({
        host: 'pay.example.com',
        tls: true,
      });
    });

    it.each([
      [
        'an unknown operator',
        {
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [
                  {
                    matchExpressions: [
                      { key: 'kubernetes.io/hostname', operator: 'Nope' },
                    ],
                  },
                ],
              },
            },
          },
        },
        'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.0.matchExpressions.0.operator',
      ],
      [
        'NotIn without values',
        {
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [
                  {
                    matchExpressions: [
                      { key: 'kubernetes.io/hostname', operator: 'NotIn' },
                    ],
                  },
                ],
              },
            },
          },
        },
        'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.0.matchExpressions.0.values',
      ],
      [
        'a misspelled field',
        { affinity: { nodeAfinity: {} } },
        'spec.affinity',
      ],
      [
        'a weight out of range',
        {
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                {
                  weight: 500,
                  podAffinityTerm: { topologyKey: 'kubernetes.io/hostname' },
                },
              ],
            },
          },
        },
        'spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution.0.weight',
      ],
      [
        'a pod affinity term without topologyKey',
        {
          affinity: {
            podAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: [
                { labelSelector: { matchLabels: { app: 'db' } } },
              ],
            },
          },
        },
        'spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution.0.topologyKey',
      ],
      [
        'a toleration with a value and Exists',
        { tolerations: [{ key: 'k', operator: 'Exists', value: 'v' }] },
        'spec.tolerations.0.value',
      ],
      [
        'tolerationSeconds without NoExecute',
        {
          tolerations: [{ key: 'k', operator: 'Exists', tolerationSeconds: 5 }],
        },
        'spec.tolerations.0.tolerationSeconds',
      ],
      [
        'an Ingress host that is not a host name',
        { ingress: { host: 'Not A Host' } },
        'spec.ingress.host',
      ],
      [
        'an Ingress path that is not absolute',
        { ingress: { host: 'a.example.com', path: 'api' } },
        'spec.ingress.path',
      ],
    ])('answers 400 naming the field for %s', async (_what, extra, field) => {
      const { server } = await start();
      const res = await request(server)
        .post('/api/fleet/applications')
        .send({
          entityRef: 'component:default/payments',
          spec: { image: 'ghcr.io/acme/payments:1.0', ...extra },
        })
        .expect(400);
      expect(res.body.error.name).toBe('InputError');
      expect(res.body.error.message).toContain(`${field}:`);
    });
  },
);
