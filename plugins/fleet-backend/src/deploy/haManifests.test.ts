/*
 * The high-availability manifests on a simulated cluster, through real client-node calls:
 * affinity, tolerations, default resources, the preStop sleep and the Ingress reach the cluster
 * as asked; the PDB lets one pod go at a time (an older minAvailable PDB is converted); drift
 * covers the new fields; the Ingress goes when it is no longer asked for and at undeploy.
 */
import { mockServices } from '@backstage/backend-test-utils';
import { CoreV1Api, KubeConfig, PolicyV1Api } from '@kubernetes/client-node';
import type { ApplicationSpec } from '@cnp/plugin-fleet-common';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import { createFleet } from '../testing/fleet';
import { ReconcileWorker } from '../reconcile/ReconcileWorker';
import { DeploymentService } from './DeploymentService';
import { ManifestApplier } from './ManifestApplier';
import { ManifestRemover } from './ManifestRemover';
import { settled } from '../testing/deployStack';

jest.setTimeout(90_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east'], readyDelayMs: 50 });

const affinity = {
  nodeAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: [
        {
          matchExpressions: [
            {
              key: 'kubernetes.io/hostname',
              operator: 'NotIn',
              values: ['bm-07', 'bm-12'],
            },
          ],
        },
      ],
    },
  },
};
const tolerations = [
  {
    key: 'dedicated',
    operator: 'Equal' as const,
    value: 'payments',
    effect: 'NoSchedule' as const,
  },
];

describe.each(databases.eachSupportedId())(
  'high-availability manifests on the simulator (%s)',
  databaseId => {
    const tag = databaseId.toLowerCase().replace(/_/g, '-');
    const namespace = `ha-${tag}`;
    const services: DeploymentService[] = [];
    afterEach(() => Promise.all(services.splice(0).map(s => s.stop())));

    async function setup() {
      const knex = await databases.init(databaseId);
      const harness = await createFleet({
        knex,
        kubeconfigDir: sim.kubeconfigDir,
        logger: mockServices.logger.mock(),
      });
      await harness.worker.runCycle();
      const applier = ManifestApplier.create({ clients: harness.clients });
      const deploy = {
        namespace,
        defaultReplicas: 3,
        progressDeadlineMs: 5_000,
        pollIntervalMs: 25,
        defaultResources: {
          requests: { cpu: '100m', memory: '128Mi' },
          limits: { cpu: '500m', memory: '256Mi' },
        },
      };
      const deployments = DeploymentService.create({
        stores: harness.stores,
        applier,
        remover: ManifestRemover.create({ clients: harness.clients }),
        logger: harness.logger,
        deploy,
      });
      services.push(deployments);
      const reconciler = ReconcileWorker.create({
        stores: harness.stores,
        applier,
        deployments,
        logger: harness.logger,
        deploy,
        reconcile: { intervalMs: 60_000, concurrency: 4 },
      });
      return { ...harness, deployments, reconciler };
    }

    const live = (kind: string, name: string) =>
      sim
        .objects('east')
        .find(
          o =>
            o.kind === kind &&
            o.metadata.name === name &&
            o.metadata.namespace === namespace,
        ) as any;

    it('applies affinity, tolerations, resources, the preStop sleep, zone spread, a one-at-a-time PDB and the Ingress; drift covers them; the Ingress goes when unasked and at undeploy', async () => {
      const h = await setup();
      const entityRef = `component:default/ha-${tag}`;
      const spec: ApplicationSpec = {
        image: 'ghcr.io/acme/payments:1.4.2',
        replicas: 5,
        affinity,
        tolerations,
        resources: { limits: { memory: '64Mi' } },
        ingress: {
          host: 'payments.example.com',
          className: 'nginx',
          tls: true,
        },
      };
      const app = await h.deployments.registerApplication({ entityRef, spec });
      const d = await h.deployments.deploy(
        { entityRef, cluster: 'east' },
        'test',
      );
      expect(await settled(h.stores, d.id)).toMatchObject({
        status: 'DEPLOYED',
      });
      const name = app.name;

      const deployment = live('Deployment', name);
      const pod = deployment.spec.template.spec;
      expect(pod.affinity).toEqual(affinity);
      expect(pod.tolerations).toEqual(tolerations);
      expect(pod.containers[0].resources).toEqual({
        requests: { cpu: '100m' },
        limits: { cpu: '500m', memory: '64Mi' },
      });
      expect(pod.containers[0].lifecycle).toEqual({
        preStop: { sleep: { seconds: 5 } },
      });
      expect(
        pod.topologySpreadConstraints.map((c: any) => [
          c.topologyKey,
          c.whenUnsatisfiable,
        ]),
      ).toEqual([
        ['kubernetes.io/hostname', 'ScheduleAnyway'],
        ['topology.kubernetes.io/zone', 'ScheduleAnyway'],
      ]);
      const pdb = live('PodDisruptionBudget', name);
      expect(pdb.spec.maxUnavailable).toBe(1);
      expect(pdb.spec).not.toHaveProperty('minAvailable');
      const service = live('Service', name);
      expect(service.spec.type).toBe('ClusterIP');
      expect(service.spec.ports).toEqual([
        expect.objectContaining({ port: 80, targetPort: 8000 }),
      ]);
      const ingress = live('Ingress', name);
      expect(ingress.spec).toEqual({
        ingressClassName: 'nginx',
        rules: [
          {
            host: 'payments.example.com',
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: {
                    service: { name, port: { number: 80 } },
                  },
                },
              ],
            },
          },
        ],
        tls: [{ hosts: ['payments.example.com'], secretName: `${name}-tls` }],
      });
      expect(ingress.metadata.annotations['cnp.io/entity-ref']).toBe(entityRef);

      // As applied: in sync (no field the API server rewrites reads as drift).
      await h.reconciler.runOnce();
      expect(await h.stores.deployments.getDeployment(d.id)).toMatchObject({
        syncStatus: 'SYNCED',
      });

      // Behind Fleet's back: the Ingress moved to another controller, a toleration dropped.
      sim.drift('east', {
        kind: 'Ingress',
        namespace,
        name,
        patch: { spec: { ingressClassName: 'alb' } },
      });
      sim.drift('east', {
        kind: 'Deployment',
        namespace,
        name,
        patch: { spec: { template: { spec: { tolerations: null } } } },
      });
      await h.reconciler.runOnce();
      const drifted = (await h.stores.deployments.getDeployment(d.id))!;
      expect(drifted.syncStatus).toBe('OUT_OF_SYNC');
      expect(drifted.syncDifferences).toEqual(
        expect.arrayContaining([
          { kind: 'Ingress', name, path: '/spec/ingressClassName' },
          expect.objectContaining({
            kind: 'Deployment',
            path: expect.stringMatching(/^\/spec\/template\/spec\/tolerations/),
          }),
        ]),
      );
      sim.drift('east', { kind: 'Ingress', namespace, name, delete: true });
      await h.reconciler.runOnce();
      expect(
        (await h.stores.deployments.getDeployment(d.id))!.syncDifferences,
      ).toEqual(expect.arrayContaining([{ kind: 'Ingress', name, path: '/' }]));

      // The application stops asking for an Ingress: the next deploy removes Fleet's.
      await h.deployments.updateApplication(app.id, {
        spec: { ingress: { host: 'payments.example.com' } },
      });
      const again = await h.deployments.deploy(
        { entityRef, cluster: 'east' },
        'test',
      );
      await settled(h.stores, again.id);
      expect(live('Ingress', name).spec).not.toHaveProperty('tls');
      expect(live('Ingress', name).spec).not.toHaveProperty('ingressClassName');
      await h.deployments.updateApplication(app.id, {
        spec: { ingress: undefined },
      });
      const third = await h.deployments.deploy(
        { entityRef, cluster: 'east' },
        'test',
      );
      await settled(h.stores, third.id);
      expect(live('Ingress', name)).toBeUndefined();
      expect(live('Deployment', name)).toBeDefined();

      // Undeploy removes every object, the Ingress included.
      await h.deployments.updateApplication(app.id, {
        spec: { ingress: { host: 'payments.example.com' } },
      });
      await settled(
        h.stores,
        (
          await h.deployments.deploy({ entityRef, cluster: 'east' }, 'test')
        ).id,
      );
      expect(live('Ingress', name)).toBeDefined();
      await h.deployments.undeploy(d.id, {}, 'test');
      for (let i = 0; i < 200 && live('Ingress', name); i++)
        await new Promise(r => setTimeout(r, 25));
      expect(live('Ingress', name)).toBeUndefined();
      expect(live('Deployment', name)).toBeUndefined();
      expect(live('PodDisruptionBudget', name)).toBeUndefined();
    });

    it('turns the minAvailable PDB of an earlier Fleet into maxUnavailable 1', async () => {
      const h = await setup();
      const entityRef = `component:default/old-pdb-${tag}`;
      const app = await h.deployments.registerApplication({
        entityRef,
        spec: { image: 'nginx:1.27', replicas: 5 },
      });
      const kc = new KubeConfig();
      kc.loadFromFile(sim.kubeconfigPath('east'));
      await kc
        .makeApiClient(CoreV1Api)
        .createNamespace({ body: { metadata: { name: namespace } } })
        .catch(error => {
          if (error?.code !== 409) throw error;
        });
      await kc.makeApiClient(PolicyV1Api).createNamespacedPodDisruptionBudget({
        namespace,
        body: {
          metadata: {
            name: app.name,
            labels: {
              'app.kubernetes.io/name': app.name,
              'app.kubernetes.io/managed-by': 'fleet',
            },
            annotations: { 'cnp.io/entity-ref': entityRef },
          },
          spec: {
            minAvailable: 2,
            selector: { matchLabels: { 'app.kubernetes.io/name': app.name } },
          },
        },
      });
      const d = await h.deployments.deploy(
        { entityRef, cluster: 'east' },
        'test',
      );
      expect(await settled(h.stores, d.id)).toMatchObject({
        status: 'DEPLOYED',
      });
      const pdb = live('PodDisruptionBudget', app.name);
      expect(pdb.spec.maxUnavailable).toBe(1);
      expect(pdb.spec).not.toHaveProperty('minAvailable');
    });
  },
);
