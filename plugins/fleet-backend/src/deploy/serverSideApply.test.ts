/*
 * Fleet applies by server-side apply as field manager `fleet`, against the simulator over HTTPS
 * through real client-node calls: a field the application stops asking for leaves the live
 * object (a toleration, an affinity, an Ingress class, the spread constraints of 3 replicas
 * going to 1), even on objects an earlier Fleet wrote by merge patch; another manager's fields
 * stay and are not drift; a field another manager changed is a conflict that fails the deploy
 * with the field and the manager named, never forced.
 */
import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { ApplicationSpec } from '@cnp/plugin-fleet-common';
import { DeploymentReasons } from '@cnp/plugin-fleet-common';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import { createDeployStack, settled } from '../testing/deployStack';
import { ReconcileWorker } from '../reconcile/ReconcileWorker';
import type { DeploymentService } from './DeploymentService';

jest.setTimeout(90_000);

const databases = createTestDatabases();

/** Two FieldsV1 sets as one. */
function merge(a: any, b: any): any {
  const out = { ...a };
  for (const [k, v] of Object.entries(b ?? {}))
    out[k] = k in out ? merge(out[k], v) : v;
  return out;
}
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
      const stack = await createDeployStack({
        knex: await databases.init(databaseId),
        kubeconfigDir: sim.kubeconfigDir,
        deploy: { namespace, defaultReplicas: 3 },
      });
      services.push(stack.deployments);
      const reconciler = ReconcileWorker.create({
        stores: stack.stores,
        applier: stack.applier,
        deployments: stack.deployments,
        logger: stack.logger,
        deploy: stack.deploy,
        reconcile: { intervalMs: 60_000, concurrency: 4 },
      });
      return { ...stack, reconciler };
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

    /**
     * Leaves an object as an earlier Fleet did: every field under one `Update` entry of
     * `node-fetch` (client-node's User-Agent, named by the API server when no fieldManager is
     * given).
     */
    async function leaveAsEarlierFleet(
      kind: 'Deployment' | 'Service',
      name: string,
    ) {
      const kc = new KubeConfig();
      kc.loadFromFile(sim.kubeconfigPath('east'));
      const apps = kc.makeApiClient(AppsV1Api);
      const core = kc.makeApiClient(CoreV1Api);
      const current =
        kind === 'Deployment'
          ? await apps.readNamespacedDeployment({ name, namespace })
          : await core.readNamespacedService({ name, namespace });
      const entries = current.metadata!.managedFields!;
      const fieldsV1 = entries
        .map(e => e.fieldsV1 as object)
        .reduce((a, b) => merge(a, b), {});
      const body = [
        {
          op: 'replace',
          path: '/metadata/managedFields',
          value: [
            {
              ...entries[0],
              manager: 'node-fetch',
              operation: 'Update',
              fieldsV1,
            },
          ],
        },
      ];
      const options = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
      if (kind === 'Deployment')
        await apps.patchNamespacedDeployment(
          { name, namespace, body },
          options,
        );
      else
        await core.patchNamespacedService({ name, namespace, body }, options);
    }

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
      return settled(h.stores, d.id);
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
        // Created (never applied into one made meanwhile), then handed to Fleet's Apply entry at
        // once, so that a dry run of the next apply already removes what Fleet stops sending.
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
      await leaveAsEarlierFleet('Deployment', app.name);
      await h.deployments.updateApplication(app.id, {
        spec: { image: 'nginx:1.27', replicas: 2, tolerations: undefined },
      });
      expect(await deployed(h, entityRef)).toMatchObject({
        status: 'DEPLOYED',
      });
      const after = live('Deployment', app.name);
      expect(after.spec.template.spec).not.toHaveProperty('tolerations');
      // What Fleet sent is Fleet's now; `node-fetch` keeps only what the server defaulted at
      // the create (as a real server records it), which Fleet never sends.
      const earlier = after.metadata.managedFields.find(
        (e: any) => e.manager === 'node-fetch',
      );
      expect(earlier.fieldsV1['f:spec']).toHaveProperty([
        'f:revisionHistoryLimit',
      ]);
      const podFields = earlier.fieldsV1['f:spec']['f:template']['f:spec'];
      expect(podFields).not.toHaveProperty(['f:tolerations']);
      const own = podFields['f:containers']?.[`k:{"name":"${app.name}"}`];
      expect(own ?? {}).not.toHaveProperty(['f:image']);
      expect(earlier.fieldsV1['f:metadata']).toBeUndefined();
    });

    it('reads the object again when its entries changed during the hand-over, and still removes what it no longer sends', async () => {
      const h = await setup();
      const entityRef = `component:default/ssa-retry-${tag}`;
      const app = await h.deployments.registerApplication({
        entityRef,
        spec: { image: 'nginx:1.27', replicas: 2, tolerations },
      });
      await deployed(h, entityRef);
      await leaveAsEarlierFleet('Deployment', app.name);
      // The first hand-over finds its entries changed (a `test` failed: 422).
      const patch = AppsV1Api.prototype.patchNamespacedDeployment;
      let refused = 0;
      const spy = jest
        .spyOn(AppsV1Api.prototype, 'patchNamespacedDeployment')
        .mockImplementation(async function patched(
          this: AppsV1Api,
          ...args: Parameters<AppsV1Api['patchNamespacedDeployment']>
        ) {
          if (Array.isArray(args[0].body) && refused++ === 0)
            throw Object.assign(new Error('test failed'), { code: 422 });
          return patch.apply(this, args);
        });
      try {
        await h.deployments.updateApplication(app.id, {
          spec: { image: 'nginx:1.27', replicas: 2, tolerations: undefined },
        });
        expect(await deployed(h, entityRef)).toMatchObject({
          status: 'DEPLOYED',
        });
      } finally {
        spy.mockRestore();
      }
      expect(refused).toBeGreaterThan(1);
      expect(
        live('Deployment', app.name).spec.template.spec,
      ).not.toHaveProperty('tolerations');
    });

    it("migrates an earlier Fleet's Service: its ports keyed by port and protocol stay Fleet's", async () => {
      const h = await setup();
      const entityRef = `component:default/ssa-service-${tag}`;
      const app = await h.deployments.registerApplication({
        entityRef,
        spec: { image: 'nginx:1.27', replicas: 2 },
      });
      await deployed(h, entityRef);
      await leaveAsEarlierFleet('Service', app.name);
      for (const port of [8000, 9000]) {
        await h.deployments.updateApplication(app.id, {
          spec: { image: 'nginx:1.27', replicas: 2, port },
        });
        expect(await deployed(h, entityRef)).toMatchObject({
          status: 'DEPLOYED',
        });
        expect(live('Service', app.name).spec.ports[0].targetPort).toBe(port);
      }
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

    it("leaves another client-node tool's fields (manager node-fetch) once Fleet has applied", async () => {
      const h = await setup();
      const entityRef = `component:default/ssa-nodefetch-${tag}`;
      const app = await h.deployments.registerApplication({
        entityRef,
        spec: { image: 'nginx:1.27', replicas: 2 },
      });
      await deployed(h, entityRef);
      // Any client-node tool that sends no fieldManager writes as `node-fetch`, as earlier
      // Fleets did: once Fleet has applied, that name is another tool's, never Fleet's.
      await otherClient().patchNamespacedDeployment(
        {
          name: app.name,
          namespace,
          body: {
            metadata: { annotations: { 'other.io/owner': 'team-b' } },
            spec: {
              template: {
                spec: { containers: [{ name: 'proxy', image: 'proxy:1' }] },
              },
            },
          },
        },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
      expect(
        live('Deployment', app.name).metadata.managedFields.map(
          (e: any) => e.manager,
        ),
      ).toContain('node-fetch');
      await h.deployments.updateApplication(app.id, {
        spec: { image: 'nginx:1.28', replicas: 2 },
      });
      expect(await deployed(h, entityRef)).toMatchObject({
        status: 'DEPLOYED',
      });
      const after = live('Deployment', app.name);
      expect(after.metadata.annotations).toMatchObject({
        'other.io/owner': 'team-b',
      });
      expect(
        after.spec.template.spec.containers.map((c: any) => c.name).sort(),
      ).toEqual([app.name, 'proxy'].sort());
    });

    it("hands over only Fleet's fields of an earlier Fleet's object, not another tool's", async () => {
      const h = await setup();
      const entityRef = `component:default/ssa-mixed-${tag}`;
      const app = await h.deployments.registerApplication({
        entityRef,
        spec: { image: 'nginx:1.27', replicas: 2, tolerations },
      });
      await deployed(h, entityRef);
      const apps = otherClient();
      // Another tool annotated it without a field manager...
      await apps.patchNamespacedDeployment(
        {
          name: app.name,
          namespace,
          body: { metadata: { annotations: { 'other.io/owner': 'team-b' } } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      // ...and the rest is as an earlier Fleet left it: every field under `node-fetch`.
      await leaveAsEarlierFleet('Deployment', app.name);
      await h.deployments.updateApplication(app.id, {
        spec: { image: 'nginx:1.27', replicas: 2, tolerations: undefined },
      });
      expect(await deployed(h, entityRef)).toMatchObject({
        status: 'DEPLOYED',
      });
      const after = live('Deployment', app.name);
      expect(after.spec.template.spec).not.toHaveProperty('tolerations');
      expect(after.metadata.annotations).toMatchObject({
        'other.io/owner': 'team-b',
      });
      const kept = after.metadata.managedFields.find(
        (e: any) => e.manager === 'node-fetch',
      );
      expect(kept.fieldsV1['f:metadata']['f:annotations']).toHaveProperty([
        'f:other.io/owner',
      ]);
      // Fleet's fields went to Fleet (the server's create defaults stay with node-fetch).
      const own =
        kept.fieldsV1['f:spec']?.['f:template']?.['f:spec']?.['f:containers']?.[
          `k:{"name":"${app.name}"}`
        ];
      expect(own ?? {}).not.toHaveProperty(['f:image']);
      expect(kept.fieldsV1['f:metadata']['f:labels']).toBeUndefined();
    });

    it('never applies into an object someone made between its read and its write', async () => {
      const h = await setup();
      const entityRef = `component:default/ssa-race-${tag}`;
      const app = await h.deployments.registerApplication({
        entityRef,
        spec: { image: 'nginx:1.27', replicas: 2 },
      });
      const kc = new KubeConfig();
      kc.loadFromFile(sim.kubeconfigPath('east'));
      const teamB = kc.makeApiClient(CoreV1Api);
      const spy = jest
        .spyOn(CoreV1Api.prototype, 'readNamespacedService')
        .mockImplementationOnce(async function first(this: CoreV1Api) {
          // Fleet's read finds nothing; team B creates a Service of that name right after.
          await teamB.createNamespacedService({
            namespace,
            body: {
              metadata: { name: app.name, namespace },
              spec: {
                selector: { app: 'team-b' },
                ports: [{ name: 'http', port: 80 }],
              },
            },
          });
          throw Object.assign(new Error('not found'), { code: 404 });
        });
      try {
        const failed = await deployed(h, entityRef);
        expect(failed).toMatchObject({
          status: 'FAILED',
          statusReason: DeploymentReasons.OWNERSHIP_CONFLICT,
        });
      } finally {
        spy.mockRestore();
      }
      const service = live('Service', app.name);
      expect(service.spec.selector).toEqual({ app: 'team-b' });
      expect(service.metadata.labels ?? {}).not.toHaveProperty(
        'app.kubernetes.io/managed-by',
      );
      expect(
        service.metadata.managedFields.map((e: any) => e.manager),
      ).not.toContain('fleet');
    });

    it('leaves the replica count to the autoscaler that holds it, never co-owning it', async () => {
      const h = await setup();
      const entityRef = `component:default/ssa-scaled-${tag}`;
      const app = await h.deployments.registerApplication({
        entityRef,
        spec: {
          image: 'nginx:1.27',
          replicas: 2,
          ignoreDifferences: ['/spec/replicas'],
        },
      });
      await deployed(h, entityRef);
      // An autoscaler sets the count as its own manager.
      await otherClient().patchNamespacedDeployment(
        {
          name: app.name,
          namespace,
          fieldManager: 'autoscaler',
          body: { spec: { replicas: 5 } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await h.deployments.updateApplication(app.id, {
        spec: {
          image: 'nginx:1.28',
          replicas: 2,
          ignoreDifferences: ['/spec/replicas'],
        },
      });
      expect(await deployed(h, entityRef)).toMatchObject({
        status: 'DEPLOYED',
      });
      const after = live('Deployment', app.name);
      expect(after.spec.replicas).toBe(5);
      const fleet = after.metadata.managedFields.find(
        (e: any) => e.manager === 'fleet' && e.operation === 'Apply',
      );
      expect(fleet.fieldsV1['f:spec']).not.toHaveProperty(['f:replicas']);
    });

    it('never applies over an object replaced by another of the same name after its read', async () => {
      const h = await setup();
      const entityRef = `component:default/ssa-replaced-${tag}`;
      const app = await h.deployments.registerApplication({
        entityRef,
        spec: { image: 'nginx:1.27', replicas: 2 },
      });
      await deployed(h, entityRef);
      const kc = new KubeConfig();
      kc.loadFromFile(sim.kubeconfigPath('east'));
      const teamB = kc.makeApiClient(CoreV1Api);
      const read = CoreV1Api.prototype.readNamespacedService;
      const spy = jest
        .spyOn(CoreV1Api.prototype, 'readNamespacedService')
        .mockImplementationOnce(async function first(
          this: CoreV1Api,
          ...args: Parameters<CoreV1Api['readNamespacedService']>
        ) {
          // Fleet reads its own Service; right after, it is deleted and team B makes one.
          const ours = await read.apply(this, args);
          await teamB.deleteNamespacedService({ name: app.name, namespace });
          await teamB.createNamespacedService({
            namespace,
            body: {
              metadata: { name: app.name, namespace },
              spec: {
                selector: { app: 'team-b' },
                ports: [{ name: 'http', port: 80 }],
              },
            },
          });
          return ours;
        });
      try {
        await h.deployments.updateApplication(app.id, {
          spec: { image: 'nginx:1.28', replicas: 2 },
        });
        expect(await deployed(h, entityRef)).toMatchObject({
          status: 'FAILED',
          statusReason: DeploymentReasons.OWNERSHIP_CONFLICT,
        });
      } finally {
        spy.mockRestore();
      }
      const service = live('Service', app.name);
      expect(service.spec.selector).toEqual({ app: 'team-b' });
      expect(
        service.metadata.managedFields.map((e: any) => e.manager),
      ).not.toContain('fleet');
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
