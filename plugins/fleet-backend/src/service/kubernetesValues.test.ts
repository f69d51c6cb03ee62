import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import request from 'supertest';
import { useSimulator } from '@cnp/kube-simulator';
import { startFleetTestBackend } from '../testBackend';
import { createTestDatabases } from '../testing/databases';

// Values a Kubernetes API server refuses (its rules, shared with the simulated one) are a 400
// naming the field, before Fleet stores or applies anything.

jest.setTimeout(60_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east'] });

const nodeFieldSelector = {
  nodeAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: [
        {
          matchFields: [
            { key: 'metadata.name', operator: 'In', values: ['n1', 'n2'] },
          ],
        },
      ],
    },
  },
};

describe.each(databases.eachSupportedId())(
  'Kubernetes value rules over HTTP (%s)',
  databaseId => {
    async function start() {
      const knex = await databases.init(databaseId);
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
                ingressHosts: ['*.example.com'],
              },
            ],
          },
        },
      });
    }

    /** What Fleet wrote to the cluster: none of the objects it applies. */
    const applied = () =>
      sim
        .objects('east')
        .filter(o =>
          ['Deployment', 'Service', 'Ingress', 'PodDisruptionBudget'].includes(
            o.kind,
          ),
        )
        .filter(o => o.metadata.name !== 'kubernetes');

    it.each([
      [
        'an IP address as Ingress host',
        { ingress: { host: '10.1.2.3' } },
        'spec.ingress.host: must be a DNS name, not an IP address',
      ],
      [
        "an Ingress path with '//'",
        { ingress: { host: 'pay.example.com', path: '/api//v1' } },
        "spec.ingress.path: must not contain '//'",
      ],
      [
        "an Ingress path with '/./'",
        { ingress: { host: 'pay.example.com', path: '/api/./v1' } },
        "spec.ingress.path: must not contain '/./'",
      ],
      [
        "a Secret key '..'",
        {
          env: {
            DB_PASSWORD: {
              valueFrom: { secretKeyRef: { name: 'db', key: '..' } },
            },
          },
        },
        "spec.env.DB_PASSWORD.valueFrom.secretKeyRef.key: must not be '..'",
      ],
      [
        'a CPU request above its limit',
        {
          resources: {
            requests: { cpu: '1500m' },
            limits: { cpu: '1' },
          },
        },
        'spec.resources.requests.cpu: must be less than or equal to cpu limit of 1',
      ],
      [
        'a node field selector with two values',
        { affinity: nodeFieldSelector },
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.0.matchFields.0.values: must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
      ],
    ])(
      'answers 400 for %s and writes nothing',
      async (_what, extra, message) => {
        const { server } = await start();
        const res = await request(server)
          .post('/api/fleet/applications')
          .send({
            entityRef: 'component:default/payments',
            spec: { image: 'ghcr.io/acme/payments:1.0', ...extra },
            placement: { clusters: ['east'] },
          })
          .expect(400);
        expect(res.body.error.name).toBe('InputError');
        expect(res.body.error.message).toContain(message);
        const list = await request(server)
          .get('/api/fleet/applications')
          .expect(200);
        expect(list.body.items).toEqual([]);
        expect(applied()).toEqual([]);
      },
    );

    it('answers 400 for a bad value in a patch, a placement or a release, changing nothing', async () => {
      const { server } = await start();
      const created = await request(server)
        .post('/api/fleet/applications')
        .send({
          entityRef: 'component:default/payments',
          spec: { image: 'ghcr.io/acme/payments:1.0' },
        })
        .expect(201);
      const id = created.body.id;
      const badKey = {
        X: { valueFrom: { configMapKeyRef: { name: 'cm', key: '..a' } } },
      };
      const answers = [
        await request(server)
          .patch(`/api/fleet/applications/${id}`)
          .send({ spec: { ingress: { host: '10.1.2.3' } } }),
        await request(server)
          .patch(`/api/fleet/applications/${id}`)
          .send({ placement: { overrides: [{ env: badKey }] } }),
        await request(server)
          .post(`/api/fleet/applications/${id}/releases`)
          .send({ image: 'ghcr.io/acme/payments:1.1', env: badKey }),
      ];
      expect(answers.map(a => [a.status, a.body.error?.message])).toEqual([
        [
          400,
          'Invalid application update: spec.ingress.host: must be a DNS name, not an IP address',
        ],
        [
          400,
          "Invalid application update: placement.overrides.0.env.X.valueFrom.configMapKeyRef.key: must not start with '..'",
        ],
        [
          400,
          "Invalid release: env.X.valueFrom.configMapKeyRef.key: must not start with '..'",
        ],
      ]);
      const after = await request(server)
        .get(`/api/fleet/applications/${id}`)
        .expect(200);
      expect(after.body.spec).toEqual(created.body.spec);
      expect(applied()).toEqual([]);
    });
  },
);
