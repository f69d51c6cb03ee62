/*
 * Fleet applies by server-side apply as field manager `fleet`, against the simulator over HTTPS
 * through real client-node calls: a field the application stops asking for leaves the live
 * object (a toleration, an affinity, an Ingress class, the spread constraints of 3 replicas
 * going to 1), even on objects an earlier Fleet wrote by merge patch; another manager's fields
 * stay and are not drift; a field another manager changed is a conflict that fails the deploy
 * with the field and the manager named, never forced.
 */
import { mockServices } from '@backstage/backend-test-utils';
import {
  AppsV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { ApplicationSpec, Deployment } from '@cnp/plugin-fleet-common';
import { DeploymentReasons } from '@cnp/plugin-fleet-common';
import type { FleetStores } from '../database/types';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import { createFleet } from '../testing/fleet';
import { ReconcileWorker } from '../reconcile/ReconcileWorker';
import { DeploymentService } from './DeploymentService';
import { ManifestApplier } from './ManifestApplier';
import { ManifestRemover } from './ManifestRemover';

jest.setTimeout(90_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east'], readyDelayMs: 20 });

const tolerations = [
  {
    key: 'dedicated',
    operator: 'Equal' as const,
    value: 'payments',
    effect: 'NoSchedule' as const,
  },
];
const affinity = {
  nodeAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: [
        {
          matchExpressions: [
            { key: 'zone', operator: 'In' as const, values: ['a'] },
          ],
        },
      ],
    },
  },
};

describe.each(databases.eachSupportedId())(
  'server-side apply against the simulator (%s)',
  databaseId => {
    const tag = databaseId.toLowerCase().replace(/_/g, '-');
    const namespace = `ssa-${tag}`;
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

    async function settle(
      stores: FleetStores,
      id: string,
    ): Promise<Deployment> {
      for (let i = 0; i < 400; i++) {
        const d = (await stores.deployments.getDeployment(id))!;
        if (d.status !== 'PROGRESSING' && d.status !== 'PENDING') return d;
        await new Promise(r => setTimeout(r, 25));
      }
      throw new Error(`deployment ${id} did not settle`);
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

    /** Another client of the cluster, writing as `manager`. */
    function otherClient() {
      const kc = new KubeConfig();
      kc.loadFromFile(sim.kubeconfigPath('east'));
      return kc.makeApiClient(AppsV1Api);
    }

    async function deployed(
      h: Awaited<ReturnType<typeof setup>>,
      entityRef: string,
      replicas?: number,
    ) {
      const d = await h.deployments.deploy(
        { entityRef, cluster: 'east', replicas },
        'test',
      );
      return settle(h.stores, d.id);
    }

    it('removes a toleration, an affinity, an Ingress class and the spread constraints of 3 replicas going to 1', async () => {
      const h = await setup();
      const entityRef = `component:default/ssa-remove-${tag}`;
      const spec: ApplicationSpec = {
        image: 'nginx:1.27',
        replicas: 3,
        tolerations,
        affinity,
        ingress: { host: 'shop.example.com', className: 'nginx' },
      };
      const app = await h.deployments.registerApplication({ entityRef, spec });
      expect(await deployed(h, entityRef)).toMatchObject({
        status: 'DEPLOYED',
      });
      const before = live('Deployment', app.name);
      expect(before.spec.template.spec.tolerations).toEqual(tolerations);
      expect(before.spec.template.spec.topologySpreadConstraints).toHaveLength(
        2,
      );
      expect(
        before.metadata.managedFields.map((e: any) => [e.manager, e.operation]),
      ).toEqual([['fleet', 'Apply']]);

      await h.deployments.updateApplication(app.id, {
        spec: {
          image: 'nginx:1.27',
          replicas: 1,
          tolerations: undefined,
          affinity: undefined,
          ingress: { host: 'shop.example.com' },
        },
      });
      expect(await deployed(h, entityRef, 1)).toMatchObject({
        status: 'DEPLOYED',
      });
      const after = live('Deployment', app.name);
      expect(after.spec.replicas).toBe(1);
      expect(after.spec.template.spec).not.toHaveProperty('tolerations');
      expect(after.spec.template.spec).not.toHaveProperty('affinity');
      expect(after.spec.template.spec).not.toHaveProperty(
        'topologySpreadConstraints',
      );
      expect(live('Ingress', app.name).spec).not.toHaveProperty(
        'ingressClassName',
      );
    });

    it('removes what an earlier Fleet wrote by merge patch once it stops sending it', async () => {
      const h = await setup();
      const entityRef = `component:default/ssa-earlier-${tag}`;
      const app = await h.deployments.registerApplication({
        entityRef,
        spec: { image: 'nginx:1.27', replicas: 2, tolerations },
      });
      await deployed(h, entityRef);
      // As an earlier Fleet left it: its fields under an Update of `node-fetch` (client-node's
      // User-Agent, named by the API server when no fieldManager is given).
      const apps = otherClient();
      const current = await apps.readNamespacedDeployment({
        name: app.name,
        namespace,
      });
      const [entry] = current.metadata!.managedFields!;
      await apps.patchNamespacedDeployment(
        {
          name: app.name,
          namespace,
          body: [
            {
              op: 'replace',
              path: '/metadata/managedFields',
              value: [{ ...entry, manager: 'node-fetch', operation: 'Update' }],
            },
          ],
        },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      );
      await h.deployments.updateApplication(app.id, {
        spec: { image: 'nginx:1.27', replicas: 2, tolerations: undefined },
      });
      expect(await deployed(h, entityRef)).toMatchObject({
        status: 'DEPLOYED',
      });
      const after = live('Deployment', app.name);
      expect(after.spec.template.spec).not.toHaveProperty('tolerations');
      expect(
        after.metadata.managedFields.map((e: any) => e.manager),
      ).not.toContain('node-fetch');
    });

    it('takes back a field Fleet itself changed by update (a canary scaling), forcing only that', async () => {
      const h = await setup();
      const entityRef = `component:default/ssa-own-${tag}`;
      const app = await h.deployments.registerApplication({
        entityRef,
        spec: { image: 'nginx:1.27', replicas: 3 },
      });
      await deployed(h, entityRef);
      // What a release's scaling does: a merge patch of the replicas as manager `fleet`.
      await otherClient().patchNamespacedDeployment(
        {
          name: app.name,
          namespace,
          fieldManager: 'fleet',
          body: { spec: { replicas: 0 } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      expect(await deployed(h, entityRef, 3)).toMatchObject({
        status: 'DEPLOYED',
      });
      const after = live('Deployment', app.name);
      expect(after.spec.replicas).toBe(3);
      expect(
        after.metadata.managedFields.find(
          (e: any) => e.manager === 'fleet' && e.operation === 'Apply',
        ).fieldsV1['f:spec'],
      ).toHaveProperty('f:replicas');
    });

    it("leaves another manager's fields on re-apply, and does not count them as drift", async () => {
      const h = await setup();
      const entityRef = `component:default/ssa-other-${tag}`;
      const app = await h.deployments.registerApplication({
        entityRef,
        spec: { image: 'nginx:1.27', replicas: 2 },
      });
      const first = await deployed(h, entityRef);
      // A mesh injects a sidecar and annotates the pods, as its own manager.
      await otherClient().patchNamespacedDeployment(
        {
          name: app.name,
          namespace,
          fieldManager: 'mesh-injector',
          body: {
            spec: {
              template: {
                metadata: { annotations: { 'mesh.io/injected': 'true' } },
                spec: { containers: [{ name: 'proxy', image: 'proxy:1' }] },
              },
            },
          },
        },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
      await h.reconciler.runOnce();
      expect(await h.stores.deployments.getDeployment(first.id)).toMatchObject({
        syncStatus: 'SYNCED',
      });
      expect(await deployed(h, entityRef)).toMatchObject({
        status: 'DEPLOYED',
      });
      const after = live('Deployment', app.name);
      expect(
        after.spec.template.spec.containers.map((c: any) => c.name).sort(),
      ).toEqual([app.name, 'proxy'].sort());
      expect(after.spec.template.metadata.annotations).toMatchObject({
        'mesh.io/injected': 'true',
      });
    });

    it('fails the deploy on a conflict with another manager, naming the field and the manager, and does not force it', async () => {
      const h = await setup();
      const entityRef = `component:default/ssa-conflict-${tag}`;
      const app = await h.deployments.registerApplication({
        entityRef,
        spec: { image: 'nginx:1.27', replicas: 2 },
      });
      await deployed(h, entityRef);
      const container = live('Deployment', app.name).spec.template.spec
        .containers[0].name;
      await otherClient().patchNamespacedDeployment(
        {
          name: app.name,
          namespace,
          fieldManager: 'kubectl-edit',
          body: {
            spec: {
              template: {
                spec: { containers: [{ name: container, image: 'hotfix:1' }] },
              },
            },
          },
        },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
      await h.deployments.updateApplication(app.id, {
        spec: { image: 'nginx:1.28', replicas: 2 },
      });
      const failed = await deployed(h, entityRef);
      expect(failed).toMatchObject({
        status: 'FAILED',
        statusReason: DeploymentReasons.APPLY_FAILED,
      });
      expect(failed.message).toContain(
        `.spec.template.spec.containers[name="${container}"].image (managed by "kubectl-edit")`,
      );
      expect(
        live('Deployment', app.name).spec.template.spec.containers[0].image,
      ).toBe('hotfix:1');
    });
  },
);
