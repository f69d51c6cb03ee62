import { mockServices } from '@backstage/backend-test-utils';
import { AppsV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import { createFleet } from '../testing/fleet';
import { DeploymentService } from './DeploymentService';
import { ManifestApplier } from './ManifestApplier';
import { ManifestRemover } from './ManifestRemover';
import { deleteIfFleetOwned, isFleetOwned } from './ownership';
import { settled } from '../testing/deployStack';

jest.setTimeout(60_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['own-a'], readyDelayMs: 40 });
const ENTITY = 'component:default/checkout';

const kube = () => {
  const kc = new KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath('own-a'));
  return {
    apps: kc.makeApiClient(AppsV1Api),
    core: kc.makeApiClient(CoreV1Api),
  };
};

/** Another team's Deployment `checkout`, with whatever labels and annotations it is given. */
function foreignDeployment(metadata: {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}) {
  return {
    metadata: { name: 'checkout', ...metadata },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'legacy-checkout' } },
      template: {
        metadata: { labels: { app: 'legacy-checkout' } },
        spec: {
          containers: [{ name: 'app', image: 'registry.example/legacy:7' }],
        },
      },
    },
  };
}

describe('isFleetOwned', () => {
  it('needs both the managed-by fleet label and the component entity-ref annotation', () => {
    const both = {
      metadata: {
        labels: { 'app.kubernetes.io/managed-by': 'fleet' },
        annotations: { 'cnp.io/entity-ref': ENTITY },
      },
    };
    expect(isFleetOwned(both, ENTITY)).toBe(true);
    expect(isFleetOwned(both, 'component:default/other')).toBe(false);
    expect(
      isFleetOwned(
        { metadata: { annotations: both.metadata.annotations } },
        ENTITY,
      ),
    ).toBe(false);
    expect(
      isFleetOwned({ metadata: { labels: both.metadata.labels } }, ENTITY),
    ).toBe(false);
    expect(isFleetOwned(both, undefined)).toBe(false);
  });
});

describe.each(databases.eachSupportedId())(
  'deploy and undeploy change only objects Fleet owns for the component (%s)',
  databaseId => {
    const services: DeploymentService[] = [];
    afterEach(() => Promise.all(services.splice(0).map(s => s.stop())));
    let tests = 0;

    async function setup() {
      tests += 1;
      const namespace = `own-${databaseId
        .toLowerCase()
        .replace(/_/g, '-')}-${tests}`;
      const knex = await databases.init(databaseId);
      const harness = await createFleet({
        knex,
        kubeconfigDir: sim.kubeconfigDir,
        logger: mockServices.logger.mock(),
      });
      await harness.worker.runCycle();
      const deployments = DeploymentService.create({
        stores: harness.stores,
        applier: ManifestApplier.create({ clients: harness.clients }),
        remover: ManifestRemover.create({ clients: harness.clients }),
        logger: harness.logger,
        deploy: {
          namespace,
          defaultReplicas: 1,
          progressDeadlineMs: 10_000,
          pollIntervalMs: 25,
        },
      });
      services.push(deployments);
      await kube().core.createNamespace({
        body: { metadata: { name: namespace } },
      });
      return { ...harness, deployments, namespace };
    }

    /** The object's whole JSON, resourceVersion included, once controllers are done with it. */
    async function stable(namespace: string, kind: string, name: string) {
      const read = () =>
        JSON.stringify(
          sim
            .objects('own-a')
            .find(
              o =>
                o.kind === kind &&
                (o.metadata as any).namespace === namespace &&
                (o.metadata as any).name === name,
            ),
        );
      let last = read();
      for (let i = 0; i < 100; i++) {
        await new Promise(r => setTimeout(r, 200));
        if (read() === last) return last;
        last = read();
      }
      throw new Error(`${kind} ${name} never settled`);
    }

    it.each([
      [
        'carries the entity-ref but not managed-by fleet',
        { annotations: { 'cnp.io/entity-ref': ENTITY } },
      ],
      [
        'is managed by fleet for another component',
        {
          labels: { 'app.kubernetes.io/managed-by': 'fleet' },
          annotations: { 'cnp.io/entity-ref': 'component:default/other' },
        },
      ],
      ['carries neither', { labels: { team: 'legacy' } }],
    ])(
      'a deploy leaves a Deployment that %s untouched and ends FAILED OWNERSHIP_CONFLICT naming it',
      async (_what, metadata) => {
        const { stores, deployments, namespace } = await setup();
        await kube().apps.createNamespacedDeployment({
          namespace,
          body: foreignDeployment(metadata),
        });
        const before = await stable(namespace, 'Deployment', 'checkout');
        const started = await deployments.deploy(
          {
            entityRef: ENTITY,
            cluster: 'own-a',
            image: 'registry.example/checkout:2',
          },
          'user:default/ada',
        );
        const d = await settled(stores, started.id);
        expect(d.status).toBe('FAILED');
        expect(d.statusReason).toBe('OWNERSHIP_CONFLICT');
        expect(d.message).toContain(`Deployment ${namespace}/checkout`);
        expect(await stable(namespace, 'Deployment', 'checkout')).toBe(before);
      },
    );

    it('undeploy leaves a foreign object of the same name in place', async () => {
      const { stores, deployments, namespace } = await setup();
      const d = await deployments.deploy(
        {
          entityRef: ENTITY,
          cluster: 'own-a',
          image: 'registry.example/checkout:1',
        },
        'user:default/ada',
      );
      await settled(stores, d.id);
      // Another team takes over the Service name: same name, its own owner annotation.
      sim.drift('own-a', {
        kind: 'Service',
        namespace,
        name: 'checkout',
        patch: {
          metadata: {
            labels: { 'app.kubernetes.io/managed-by': 'helm' },
            annotations: { 'cnp.io/entity-ref': 'component:default/legacy' },
          },
        },
      });
      const before = await stable(namespace, 'Service', 'checkout');
      await deployments.undeploy(d.id, {}, 'user:default/ada');
      for (
        let i = 0;
        i < 200 && (await stores.deployments.getDeployment(d.id));
        i++
      )
        await new Promise(r => setTimeout(r, 25));
      expect(await stores.deployments.getDeployment(d.id)).toBeUndefined();
      expect(await stable(namespace, 'Service', 'checkout')).toBe(before);
      await expect(
        kube().apps.readNamespacedDeployment({ name: 'checkout', namespace }),
      ).rejects.toMatchObject({ code: 404 });
    });

    it("a delete is conditional: a foreign object that replaced Fleet's between the read and the delete stays", async () => {
      const { stores, deployments, namespace } = await setup();
      const d = await deployments.deploy(
        {
          entityRef: ENTITY,
          cluster: 'own-a',
          image: 'registry.example/checkout:1',
        },
        'user:default/ada',
      );
      await settled(stores, d.id);
      const { apps } = kube();
      const ours = await apps.readNamespacedDeployment({
        name: 'checkout',
        namespace,
      });
      // Meanwhile another team deletes it and creates its own under the same name.
      await apps.deleteNamespacedDeployment({ name: 'checkout', namespace });
      await apps.createNamespacedDeployment({
        namespace,
        body: foreignDeployment({ labels: { team: 'legacy' } }),
      });
      let reads = 0;
      const outcome = await deleteIfFleetOwned(
        ENTITY,
        async () => {
          reads += 1;
          // The first read is the stale one, taken before the replacement.
          return reads === 1
            ? ours
            : apps.readNamespacedDeployment({ name: 'checkout', namespace });
        },
        body =>
          apps.deleteNamespacedDeployment({
            name: 'checkout',
            namespace,
            body,
          }),
      );
      expect(outcome).toBe('foreign');
      const live = await apps.readNamespacedDeployment({
        name: 'checkout',
        namespace,
      });
      expect(live.metadata?.labels).toEqual({ team: 'legacy' });
    });
  },
);
