import { mockServices } from '@backstage/backend-test-utils';
import type { UrlReaderService } from '@backstage/backend-plugin-api';
import { useSimulator } from '@cnp/kube-simulator';
import { ManifestReader } from '../repository/ManifestReader';
import { createTestDatabases } from '../testing/databases';
import { eventually } from '../testing/eventually';
import { createFleet } from '../testing/fleet';
import { DeploymentService } from './DeploymentService';
import { ManifestApplier } from './ManifestApplier';
import { ManifestRemover } from './ManifestRemover';
import { ObjectSetApplier } from './ObjectSetApplier';
import { ReconcileWorker } from '../reconcile/ReconcileWorker';

jest.setTimeout(60_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['alpha', 'bravo'], readyDelayMs: 50 });

const MANIFESTS = [
  'apiVersion: apps/v1',
  'kind: Deployment',
  'metadata: { name: shop }',
  'spec:',
  '  replicas: 1',
  '  selector: { matchLabels: { app: shop } }',
  '  template:',
  '    metadata: { labels: { app: shop } }',
  '    spec:',
  '      containers: [{ name: web, image: "nginx:1.27" }]',
  '---',
  'apiVersion: v1',
  'kind: ConfigMap',
  'metadata: { name: shop-config }',
  'data: { mode: own-manifests }',
].join('\n');

/** Other repositories' manifests, by repository name; any other serves `MANIFESTS`. */
const REPOSITORIES: Record<string, string> = {
  // Manifests that claim an object for another component.
  claimer: [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    '  name: claimer-config',
    '  annotations: { cnp.io/entity-ref: component:default/shop }',
  ].join('\n'),
};

const configMaps = (...names: string[]) =>
  names
    .map(name => `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: ${name} }`)
    .join('\n---\n');

/** Versions of one repository's manifests, by `<repository>@<version>`. */
const VERSIONS: Record<string, string> = {
  'pruner@v1': configMaps('pruner-a', 'pruner-b'),
  // A kind the cluster does not serve: the apply fails before it writes anything.
  'pruner@v2': `${configMaps(
    'pruner-a',
  )}\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata: { name: w }`,
  'pruner@v3': configMaps('pruner-a'),
};

/** A URL reader that serves each repository's manifests file, at each version. */
const urlReader: Partial<UrlReaderService> = {
  readUrl: async url => {
    const repository = /\/([^/]+)\.git\//.exec(url)?.[1] ?? '';
    const version = /\/blob\/([^/]+)\//.exec(url)?.[1];
    const text =
      VERSIONS[`${repository}@${version}`] ??
      REPOSITORIES[repository] ??
      MANIFESTS;
    return {
      buffer: async () => Buffer.from(text, 'utf8'),
      stream: () => {
        throw new Error('not used');
      },
      etag: 'c0ffee',
    };
  },
};

describe.each(databases.eachSupportedId())(
  "a component's own manifests, deployed and placed (%s)",
  databaseId => {
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
      /** Entities without cnp.io/manifests-ref: they run the generated workload. */
      const catalog = { up: true, plain: new Set<string>() };
      const project: { refusal?: string } = {};
      const objectsRefusal = async () => project.refusal;
      const namespace = `own-${databaseId
        .toLowerCase()
        .replace(/[^a-z0-9]/g, '')}`;
      const annotationsOf = async (
        entityRef: string,
      ): Promise<Record<string, string>> => {
        if (!catalog.up) throw new Error('catalog unavailable');
        if (catalog.plain.has(entityRef)) return {};
        const name = entityRef.split('/').pop();
        return {
          'cnp.io/manifests-ref': `url:https://git.example.com/${name}.git/blob/main/deploy.yaml`,
        };
      };
      const deploy = {
        namespace,
        defaultReplicas: 1,
        progressDeadlineMs: 5_000,
        pollIntervalMs: 50,
      };
      const applier = ManifestApplier.create({ clients: harness.clients });
      const objectApplier = ObjectSetApplier.create({
        clients: harness.clients,
      });
      const deployments = DeploymentService.create({
        stores: harness.stores,
        applier,
        objectApplier,
        manifestReader: new ManifestReader(urlReader as UrlReaderService),
        remover: ManifestRemover.create({ clients: harness.clients }),
        logger: harness.logger,
        annotationsOf,
        objectsRefusal,
        deploy,
      });
      services.push(deployments);
      const reconciler = ReconcileWorker.create({
        stores: harness.stores,
        applier,
        objectApplier,
        deployments,
        logger: harness.logger,
        deploy,
        reconcile: { intervalMs: 60_000, concurrency: 4 },
        annotationsOf,
        objectsRefusal,
      });
      return {
        ...harness,
        catalog,
        project,
        namespace,
        deployments,
        reconciler,
      };
    }

    it('never falls back to the generated workload on another cluster of the application', async () => {
      const { catalog, namespace, deployments } = await setup();
      const entityRef = 'component:default/shop';
      const first = await deployments.deploy(
        { entityRef, cluster: 'alpha' },
        'user:default/ada',
      );
      expect(first).toMatchObject({ status: 'PROGRESSING' });

      catalog.up = false;
      await expect(
        deployments.deploy({ entityRef, cluster: 'bravo' }, 'user:default/ada'),
      ).rejects.toMatchObject({ name: 'ServiceUnavailableError' });
      const generated = sim
        .objects('bravo')
        .filter(
          o =>
            (o.metadata as { namespace?: string }).namespace === namespace &&
            (o.kind === 'Service' || o.kind === 'Deployment'),
        );
      expect(generated).toEqual([]);
    });

    it('places an application registered without an image, whose component brings its manifests', async () => {
      const { stores, deployments, reconciler } = await setup();
      const app = await deployments.registerApplication({
        entityRef: 'component:default/shop-placed',
        spec: {},
        placement: { clusters: ['bravo'] },
      });
      const summary = await reconciler.runOnce();
      expect(summary.errors).toEqual([]);
      expect(
        await stores.deployments.listDeployments({ applicationId: app.id }),
      ).toEqual([expect.objectContaining({ cluster: 'bravo' })]);
    });

    it('refuses manifests that claim an object for another component as a conflict (409), recording nothing', async () => {
      const { stores, deployments } = await setup();
      const entityRef = 'component:default/claimer';
      await expect(
        deployments.deploy({ entityRef, cluster: 'alpha' }, 'user:default/ada'),
      ).rejects.toMatchObject({
        name: 'ConflictError',
        message: expect.stringContaining('OWNERSHIP_CONFLICT'),
      });
      const app = await stores.applications.getApplicationByEntityRef(
        entityRef,
      );
      expect(
        app
          ? await stores.deployments.listDeployments({ applicationId: app.id })
          : [],
      ).toEqual([]);
    });

    it('never self-heals objects the project refuses now', async () => {
      const { stores, deployments, reconciler, project, namespace } =
        await setup();
      const healNamespace = `${namespace}-heal`;
      const entityRef = 'component:default/healer';
      await deployments.registerApplication({
        entityRef,
        spec: { namespace: healNamespace, selfHeal: true },
      });
      const started = await deployments.deploy(
        { entityRef, cluster: 'alpha' },
        'user:default/ada',
      );
      await eventually(async () =>
        expect(
          await stores.deployments.getDeployment(started.id),
        ).toMatchObject({ status: 'DEPLOYED' }),
      );

      project.refusal = "ConfigMap 'shop-config': kind ConfigMap is denied";
      sim.drift('alpha', {
        kind: 'ConfigMap',
        namespace: healNamespace,
        name: 'shop-config',
        patch: { data: { mode: 'edited by hand' } },
      });
      const summary = await reconciler.runOnce();
      expect(summary.healed).toBe(0);
      const live = sim
        .objects('alpha')
        .find(
          o =>
            o.kind === 'ConfigMap' &&
            (o.metadata as { name?: string }).name === 'shop-config' &&
            (o.metadata as { namespace?: string }).namespace === healNamespace,
        ) as { data?: Record<string, string> } | undefined;
      expect(live?.data).toEqual({ mode: 'edited by hand' });
      expect(await stores.deployments.getDeployment(started.id)).toMatchObject({
        syncStatus: 'OUT_OF_SYNC',
      });
      const [event] = await stores.events.listEvents({
        subjectKind: 'deployment',
        subject: started.id,
      });
      expect(event).toMatchObject({
        reason: 'SELF_HEAL_FAILED',
        message: expect.stringContaining(
          'the project refuses it now: ConfigMap',
        ),
      });
    });

    it('prunes what an earlier revision left when the revision after it failed to apply', async () => {
      const { deployments, namespace } = await setup();
      const pruneNamespace = `${namespace}-prune`;
      const entityRef = 'component:default/pruner';
      await deployments.registerApplication({
        entityRef,
        spec: { namespace: pruneNamespace },
      });
      const deployVersion = (version: string) =>
        deployments.deploy(
          { entityRef, cluster: 'alpha', version },
          'user:default/ada',
        );
      const liveNames = () =>
        sim
          .objects('alpha')
          .filter(
            o =>
              o.kind === 'ConfigMap' &&
              (o.metadata as { namespace?: string }).namespace ===
                pruneNamespace &&
              (o.metadata as { name?: string }).name?.startsWith('pruner-'),
          )
          .map(o => (o.metadata as { name?: string }).name)
          .sort();
      await deployVersion('v1');
      expect(liveNames()).toEqual(['pruner-a', 'pruner-b']);
      expect(await deployVersion('v2')).toMatchObject({
        status: 'FAILED',
        statusReason: 'APPLY_FAILED',
      });
      expect(liveNames()).toEqual(['pruner-a', 'pruner-b']);
      const third = await deployVersion('v3');
      expect(third.status).not.toBe('FAILED');
      expect(liveNames()).toEqual(['pruner-a']);
    });

    it('removes what the other left when the component switches between the generated workload and its own manifests', async () => {
      const { stores, deployments, catalog, namespace } = await setup();
      const switchNamespace = `${namespace}-switch`;
      const entityRef = 'component:default/switcher';
      catalog.plain.add(entityRef);
      const app = await deployments.registerApplication({
        entityRef,
        spec: { namespace: switchNamespace, image: 'nginx:1.27', replicas: 1 },
      });
      const first = await deployments.deploy(
        { entityRef, cluster: 'alpha' },
        'user:default/ada',
      );
      expect(first.status).toBe('PROGRESSING');
      const deploymentsLive = () =>
        sim
          .objects('alpha')
          .filter(
            o =>
              (o.kind === 'Deployment' || o.kind === 'Service') &&
              (o.metadata as { namespace?: string }).namespace ===
                switchNamespace,
          )
          .map(o => `${o.kind}/${(o.metadata as { name?: string }).name}`)
          .sort();
      expect(deploymentsLive()).toEqual([
        `Deployment/${app.name}`,
        `Service/${app.name}`,
      ]);

      catalog.plain.delete(entityRef);
      const second = await deployments.deploy(
        { entityRef, cluster: 'alpha' },
        'user:default/ada',
      );
      expect(second.status).toBe('PROGRESSING');
      expect(deploymentsLive()).toEqual(['Deployment/shop']);

      // And back: the generated workload replaces the manifests' objects.
      catalog.plain.add(entityRef);
      const third = await deployments.deploy(
        { entityRef, cluster: 'alpha' },
        'user:default/ada',
      );
      expect(third.status).toBe('PROGRESSING');
      expect(deploymentsLive()).toEqual([
        `Deployment/${app.name}`,
        `Service/${app.name}`,
      ]);
      const leftConfigMaps = sim
        .objects('alpha')
        .filter(
          o =>
            o.kind === 'ConfigMap' &&
            (o.metadata as { namespace?: string }).namespace ===
              switchNamespace &&
            (o.metadata as { name?: string }).name === 'shop-config',
        );
      expect(leftConfigMaps).toEqual([]);
      expect((await stores.deployments.getDeployment(third.id))?.revision).toBe(
        3,
      );
    });

    it('previews a first deploy into a namespace Fleet will create as creates', async () => {
      const { stores, deployments, namespace } = await setup();
      const entityRef = 'component:default/newcomer';
      const app = await deployments.registerApplication({
        entityRef,
        spec: { namespace: `${namespace}-new` },
      });
      const cluster = (await stores.clusters.getCluster('alpha'))!;
      const preview = await deployments.preview({
        application: app,
        clusters: [cluster],
        request: {},
      });
      expect(preview.clusters).toEqual([
        expect.objectContaining({
          status: 'previewed',
          objects: expect.arrayContaining([
            expect.objectContaining({ kind: 'Deployment', action: 'create' }),
          ]),
        }),
      ]);
    });
  },
);
