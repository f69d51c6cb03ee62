import { mockServices } from '@backstage/backend-test-utils';
import { AutoscalingV2Api, KubeConfig } from '@kubernetes/client-node';
import type { Deployment } from '@cnp/plugin-fleet-common';
import type { FleetStores } from '../database/types';
import { DeploymentService } from '../deploy/DeploymentService';
import { ManifestApplier } from '../deploy/ManifestApplier';
import { ManifestRemover } from '../deploy/ManifestRemover';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import { eventually } from '../testing/eventually';
import { createFleet } from '../testing/fleet';
import { ReconcileWorker } from './ReconcileWorker';

jest.setTimeout(90_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east', 'west'], readyDelayMs: 50 });

describe.each(databases.eachSupportedId())(
  'ReconcileWorker against the kube simulator (%s)',
  databaseId => {
    const tag = databaseId.toLowerCase().replace(/_/g, '-');
    const namespace = `rec-${tag}`;
    const services: DeploymentService[] = [];
    afterEach(() => Promise.all(services.splice(0).map(s => s.stop())));

    async function setup(
      options: {
        annotationsOf?: (ref: string) => Promise<Record<string, string>>;
        concurrency?: number;
        wrapRead?: (
          read: ManifestApplier['readLive'],
        ) => ManifestApplier['readLive'];
      } = {},
    ) {
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
        defaultReplicas: 2,
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
        applier: options.wrapRead
          ? {
              apply: applier.apply.bind(applier),
              readLive: options.wrapRead(applier.readLive.bind(applier)),
            }
          : applier,
        deployments,
        logger: harness.logger,
        deploy,
        reconcile: {
          intervalMs: 60_000,
          concurrency: options.concurrency ?? 8,
        },
        annotationsOf: options.annotationsOf,
      });
      return { ...harness, deployments, reconciler };
    }

    async function settle(
      stores: FleetStores,
      id: string,
    ): Promise<Deployment> {
      return eventually(async () => {
        const d = (await stores.deployments.getDeployment(id))!;
        if (d.status === 'PROGRESSING' || d.status === 'PENDING')
          throw new Error(`deployment ${id} did not settle: ${d.status}`);
        return d;
      });
    }

    async function deployed(
      h: Awaited<ReturnType<typeof setup>>,
      name: string,
      cluster: string,
      spec: { selfHeal?: boolean } = {},
    ) {
      const entityRef = `component:default/${name}-${tag}`;
      const d = await h.deployments.deploy(
        { entityRef, cluster, image: 'nginx:1.27' },
        'test',
      );
      await settle(h.stores, d.id);
      const app = (await h.stores.applications.getApplicationByEntityRef(
        entityRef,
      ))!;
      if (spec.selfHeal !== undefined)
        await h.deployments.updateApplication(app.id, {
          spec: { selfHeal: spec.selfHeal },
        });
      return { deployment: d, app, name: app.name };
    }

    /** An HPA on `cluster` that targets the Deployment `name`: it owns the replica count. */
    const createHpa = async (cluster: string, name: string) => {
      const kc = new KubeConfig();
      kc.loadFromFile(sim.kubeconfigPath(cluster));
      await kc
        .makeApiClient(AutoscalingV2Api)
        .createNamespacedHorizontalPodAutoscaler({
          namespace,
          body: {
            metadata: { name },
            spec: {
              scaleTargetRef: {
                apiVersion: 'apps/v1',
                kind: 'Deployment',
                name,
              },
              minReplicas: 1,
              maxReplicas: 10,
            },
          },
        });
    };

    const imagePath = '/spec/template/spec/containers/0/image';
    /** `kubectl set image` behind Fleet's back: the same containers, another image. */
    const setImage = (cluster: string, name: string, image: string) => {
      const live = sim
        .objects(cluster)
        .find(
          o =>
            o.kind === 'Deployment' &&
            o.metadata.name === name &&
            o.metadata.namespace === namespace,
        ) as any;
      const containers = live.spec.template.spec.containers.map(
        (c: any, i: number) => (i === 0 ? { ...c, image } : c),
      );
      sim.drift(cluster, {
        kind: 'Deployment',
        namespace,
        name,
        patch: { spec: { template: { spec: { containers } } } },
      });
    };
    const liveImage = (cluster: string, name: string) =>
      (
        sim
          .objects(cluster)
          .find(
            o =>
              o.kind === 'Deployment' &&
              o.metadata.name === name &&
              o.metadata.namespace === namespace,
          ) as any
      )?.spec.template.spec.containers[0].image;

    it.each([false, true])(
      "keeps each cluster on its own revision: a new image on one cluster leaves the other's Deployment, revision, image and SYNCED alone (selfHeal %s)",
      async selfHeal => {
        const h = await setup();
        const name = `per-cluster-${selfHeal ? 'heal' : 'plain'}`;
        const entityRef = `component:default/${name}-${tag}`;
        const east = await h.deployments.deploy(
          { entityRef, cluster: 'east', image: 'h1-probe:1.0.0' },
          'test',
        );
        const west = await h.deployments.deploy(
          { entityRef, cluster: 'west', image: 'h1-probe:1.0.0' },
          'test',
        );
        await settle(h.stores, east.id);
        await settle(h.stores, west.id);
        const app = (await h.stores.applications.getApplicationByEntityRef(
          entityRef,
        ))!;
        await h.deployments.updateApplication(app.id, { spec: { selfHeal } });
        const westBefore = sim
          .objects('west')
          .find(
            o =>
              o.kind === 'Deployment' &&
              o.metadata.name === app.name &&
              o.metadata.namespace === namespace,
          )!;

        const upgraded = await h.deployments.deploy(
          { entityRef, cluster: 'east', image: 'h1-probe:2.0.0' },
          'test',
        );
        expect(await settle(h.stores, upgraded.id)).toMatchObject({
          status: 'DEPLOYED',
          image: 'h1-probe:2.0.0',
          revision: 2,
        });
        for (let run = 0; run < 3; run++) {
          const summary = await h.reconciler.runOnce();
          expect(summary.healed).toBe(0);
          expect(
            await h.stores.deployments.getDeployment(west.id),
          ).toMatchObject({
            status: 'DEPLOYED',
            syncStatus: 'SYNCED',
            image: 'h1-probe:1.0.0',
            revision: 1,
          });
        }
        expect(liveImage('west', app.name)).toBe('h1-probe:1.0.0');
        expect(liveImage('east', app.name)).toBe('h1-probe:2.0.0');
        const westAfter = sim
          .objects('west')
          .find(
            o =>
              o.kind === 'Deployment' &&
              o.metadata.name === app.name &&
              o.metadata.namespace === namespace,
          )!;
        expect(westAfter.metadata.resourceVersion).toBe(
          westBefore.metadata.resourceVersion,
        );
        // The application's defaults did not move with the one-cluster deploy.
        expect(
          (await h.stores.applications.getApplication(app.id))!.spec.image,
        ).toBe('h1-probe:1.0.0');
        expect(
          (await h.stores.revisions.listRevisions(east.id)).map(r => [
            r.revision,
            r.image,
            r.cause,
            r.outcome,
          ]),
        ).toEqual([
          [2, 'h1-probe:2.0.0', 'deploy', 'DEPLOYED'],
          [1, 'h1-probe:1.0.0', 'deploy', 'DEPLOYED'],
        ]);
      },
    );

    it('reports a manual image change OUT_OF_SYNC with its path, and leaves it when selfHeal is off', async () => {
      const h = await setup();
      const { deployment, name } = await deployed(h, 'drifty', 'east', {
        selfHeal: false,
      });
      expect((await h.reconciler.runOnce()).synced).toBeGreaterThanOrEqual(1);
      expect(
        (await h.stores.deployments.getDeployment(deployment.id))!.syncStatus,
      ).toBe('SYNCED');

      setImage('east', name, 'evil:latest');
      await h.reconciler.runOnce();
      const drifted = (await h.stores.deployments.getDeployment(
        deployment.id,
      ))!;
      expect(drifted.syncStatus).toBe('OUT_OF_SYNC');
      expect(drifted.syncDifferences).toEqual([
        { kind: 'Deployment', name, path: imagePath },
      ]);
      const [event] = await h.stores.events.listEvents({
        subjectKind: 'deployment',
        subject: deployment.id,
      });
      expect(event).toMatchObject({
        from: 'SYNCED',
        to: 'OUT_OF_SYNC',
        reason: 'DRIFT_DETECTED',
      });
      // GET /summary counts it
      expect(
        (await h.stores.deployments.countDeploymentsByStatus()).bySyncStatus,
      ).toEqual({ SYNCED: 0, OUT_OF_SYNC: 1, UNKNOWN: 0 });
      await h.reconciler.runOnce();
      expect(liveImage('east', name)).toBe('evil:latest'); // reported, not fought
      expect(
        (await h.stores.deployments.getDeployment(deployment.id))!.syncStatus,
      ).toBe('OUT_OF_SYNC');
    });

    it('restores a manual image change when selfHeal is on, with an event', async () => {
      const h = await setup();
      const { deployment, name } = await deployed(h, 'healed', 'east', {
        selfHeal: true,
      });
      setImage('east', name, 'evil:latest');
      const summary = await h.reconciler.runOnce();
      expect(summary.healed).toBe(1);
      expect(liveImage('east', name)).toBe('nginx:1.27');
      const healed = (await h.stores.deployments.getDeployment(deployment.id))!;
      expect(healed).toMatchObject({
        syncStatus: 'SYNCED',
        syncDifferences: undefined,
      });
      const [event] = await h.stores.events.listEvents({
        subjectKind: 'deployment',
        subject: deployment.id,
      });
      expect(event).toMatchObject({ reason: 'SELF_HEALED', to: 'SYNCED' });
      expect(event.message).toContain(imagePath);
    });

    it('is SYNCED when the cluster stores requests in canonical form ("0.5" as "500m"), and heals nothing', async () => {
      const h = await setup();
      const entityRef = `component:default/sized-${tag}`;
      const resources = { requests: { cpu: '0.5', memory: '1024Mi' } };
      const app = await h.deployments.registerApplication({
        entityRef,
        spec: { image: 'nginx:1.27', resources, selfHeal: true },
      });
      const deployment = await settle(
        h.stores,
        (
          await h.deployments.deploy({ entityRef, cluster: 'east' }, 'test')
        ).id,
      );
      const live = sim
        .objects('east')
        .find(
          o =>
            o.kind === 'Deployment' &&
            o.metadata.name === app.name &&
            o.metadata.namespace === namespace,
        ) as any;
      expect(live.spec.template.spec.containers[0].resources).toEqual({
        requests: { cpu: '500m', memory: '1Gi' },
      });
      for (let i = 0; i < 2; i++)
        expect((await h.reconciler.runOnce()).healed).toBe(0);
      expect(
        (await h.stores.deployments.getDeployment(deployment.id))!,
      ).toMatchObject({
        syncStatus: 'SYNCED',
        syncDifferences: undefined,
      });
    });

    it('counts a deleted Service as OUT_OF_SYNC and recreates it with selfHeal', async () => {
      const h = await setup();
      const { deployment, app, name } = await deployed(h, 'nosvc', 'west', {
        selfHeal: false,
      });
      sim.drift('west', { kind: 'Service', namespace, name, delete: true });
      await h.reconciler.runOnce();
      expect(
        (await h.stores.deployments.getDeployment(deployment.id))!,
      ).toMatchObject({
        syncStatus: 'OUT_OF_SYNC',
        syncDifferences: [{ kind: 'Service', name, path: '/' }],
      });
      await h.deployments.updateApplication(app.id, {
        spec: { selfHeal: true },
      });
      await h.reconciler.runOnce();
      expect(
        sim
          .objects('west')
          .some(
            o =>
              o.kind === 'Service' &&
              o.metadata.name === name &&
              o.metadata.namespace === namespace,
          ),
      ).toBe(true);
      expect(
        (await h.stores.deployments.getDeployment(deployment.id))!.syncStatus,
      ).toBe('SYNCED');
    });

    it('lets an HPA own replicas: its change is SYNCED and never reverted; without an HPA it is drift', async () => {
      const h = await setup();
      const scaled = await deployed(h, 'scaled', 'east', { selfHeal: true });
      const plain = await deployed(h, 'plain', 'east', { selfHeal: false });
      await createHpa('east', scaled.name);
      for (const { name } of [scaled, plain])
        sim.drift('east', {
          kind: 'Deployment',
          namespace,
          name,
          patch: { spec: { replicas: 5 } },
        });
      const hpaList = `/apis/autoscaling/v2/namespaces/${namespace}/horizontalpodautoscalers`;
      const listsBefore = sim.requestCount('east', hpaList);
      await h.reconciler.runOnce();
      // Both deployments are on east in one namespace: one HPA list for the run, not one each.
      expect(sim.requestCount('east', hpaList) - listsBefore).toBe(1);
      await h.reconciler.runOnce();
      const liveReplicas = (name: string) =>
        (
          sim
            .objects('east')
            .find(
              o =>
                o.kind === 'Deployment' &&
                o.metadata.name === name &&
                o.metadata.namespace === namespace,
            ) as any
        ).spec.replicas;
      expect(
        (await h.stores.deployments.getDeployment(scaled.deployment.id))!
          .syncStatus,
      ).toBe('SYNCED');
      expect(liveReplicas(scaled.name)).toBe(5);
      expect(
        (await h.stores.deployments.getDeployment(plain.deployment.id))!,
      ).toMatchObject({
        syncStatus: 'OUT_OF_SYNC',
        syncDifferences: [
          { kind: 'Deployment', name: plain.name, path: '/spec/replicas' },
        ],
      });
    });

    it('re-applies an autoscaled Deployment (self-heal, then a new deploy) without resetting its replicas', async () => {
      const h = await setup();
      const scaled = await deployed(h, 'hpa-heal', 'east', { selfHeal: true });
      await createHpa('east', scaled.name);
      const live = () =>
        sim
          .objects('east')
          .find(
            o =>
              o.kind === 'Deployment' &&
              o.metadata.name === scaled.name &&
              o.metadata.namespace === namespace,
          ) as any;
      // The HPA scaled it out, and someone changed the image behind Fleet's back.
      sim.drift('east', {
        kind: 'Deployment',
        namespace,
        name: scaled.name,
        patch: { spec: { replicas: 7 } },
      });
      setImage('east', scaled.name, 'nginx:evil');
      await h.reconciler.runOnce();
      expect(live().spec.template.spec.containers[0].image).toBe('nginx:1.27');
      expect(live().spec.replicas).toBe(7); // healed the image, left the HPA's count

      const redeploy = await h.deployments.deploy(
        {
          entityRef: scaled.app.entityRef,
          cluster: 'east',
          image: 'nginx:1.28',
        },
        'test',
      );
      await settle(h.stores, redeploy.id);
      expect(live().spec.template.spec.containers[0].image).toBe('nginx:1.28');
      expect(live().spec.replicas).toBe(7);
    });

    it('never says SYNCED for a deployment on an OFFLINE or UNKNOWN cluster', async () => {
      const h = await setup();
      const { deployment } = await deployed(h, 'blind', 'west', {
        selfHeal: false,
      });
      await h.reconciler.runOnce();
      expect(
        (await h.stores.deployments.getDeployment(deployment.id))!.syncStatus,
      ).toBe('SYNCED');
      sim.setFault('west', { mode: 'down' });
      await h.worker.runCycle();
      await h.worker.runCycle();
      await h.reconciler.runOnce();
      expect(
        (await h.stores.deployments.getDeployment(deployment.id))!,
      ).toMatchObject({
        syncStatus: 'UNKNOWN',
        status: 'DEGRADED',
        statusReason: 'CLUSTER_OFFLINE',
      });

      await h.stores.clusters.insertCluster({
        name: `opaque-${tag}`,
        endpoint: 'https://10.0.0.9',
        kubeconfigRef: 'secret/x',
        source: 'manual',
      });
      const other = await h.stores.applications.insertApplication({
        entityRef: `component:default/unk-${tag}`,
        name: `unk-${tag}`,
        spec: { image: 'x' },
      });
      const onUnknown = await h.stores.deployments.insertDeployment(
        {
          applicationId: other.id,
          cluster: `opaque-${tag}`,
          status: 'DEPLOYED',
        },
        'test',
      );
      await h.reconciler.runOnce();
      expect(
        (await h.stores.deployments.getDeployment(onUnknown.id))!.syncStatus,
      ).toBe('UNKNOWN');
    });

    it('degrades on missing replicas with WORKLOAD_UNHEALTHY and recovers with the workload', async () => {
      const h = await setup();
      const { deployment } = await deployed(h, 'sickly', 'east');
      sim.setReadiness('east', { neverReady: true });
      await h.reconciler.runOnce();
      expect(
        (await h.stores.deployments.getDeployment(deployment.id))!,
      ).toMatchObject({
        status: 'DEGRADED',
        statusReason: 'WORKLOAD_UNHEALTHY',
      });
      // the cluster cascade's recovery does not touch this reason
      await h.worker.runCycle();
      expect(
        (await h.stores.deployments.getDeployment(deployment.id))!.statusReason,
      ).toBe('WORKLOAD_UNHEALTHY');
      sim.setReadiness('east', { neverReady: false, readyDelayMs: 0 });
      // Once the simulator has made the pods ready (however long a loaded machine takes), a
      // reconcile run marks it DEPLOYED again.
      await eventually(async () => {
        await h.reconciler.runOnce();
        expect(
          (await h.stores.deployments.getDeployment(deployment.id))!,
        ).toMatchObject({
          status: 'DEPLOYED',
          statusReason: null,
        });
      });
    });

    it('never heals a deployment its placement dropped, prunes it with prune: true, and never on an OFFLINE cluster', async () => {
      const h = await setup();
      const entityRef = `component:default/dropped-${tag}`;
      const app = await h.deployments.registerApplication({
        entityRef,
        spec: { image: 'dropped:1.0.0', selfHeal: true },
        placement: { clusters: ['east', 'west'] },
      });
      await h.reconciler.runOnce();
      const byCluster = async () =>
        Object.fromEntries(
          (
            await h.stores.deployments.listDeployments({
              applicationId: app.id,
            })
          ).map(d => [d.cluster, d]),
        );
      const placed = await byCluster();
      await settle(h.stores, placed.east.id);
      await settle(h.stores, placed.west.id);

      await h.deployments.updateApplication(app.id, {
        placement: { clusters: ['east'] },
      });
      await h.reconciler.runOnce();
      expect((await byCluster()).west).toMatchObject({ placed: false });
      setImage('west', app.name, 'evil:latest');
      for (let run = 0; run < 2; run++) {
        expect((await h.reconciler.runOnce()).healed).toBe(0);
      }
      expect(liveImage('west', app.name)).toBe('evil:latest');
      expect((await byCluster()).west).toMatchObject({
        syncStatus: 'OUT_OF_SYNC',
        placed: false,
      });

      // prune: but west is OFFLINE, so nothing is pruned there
      await h.deployments.updateApplication(app.id, {
        placement: { clusters: ['east'], prune: true },
      });
      sim.setFault('west', { mode: 'down' });
      await h.worker.runCycle();
      await h.worker.runCycle();
      expect((await h.reconciler.runOnce()).pruned).toEqual([]);
      expect((await byCluster()).west).toBeDefined();

      sim.setFault('west', { mode: 'ok' });
      await h.worker.runCycle();
      const summary = await h.reconciler.runOnce();
      expect(summary.pruned).toEqual([{ entityRef, cluster: 'west' }]);
      await eventually(async () =>
        expect((await byCluster()).west).toBeUndefined(),
      );
      expect(liveImage('west', app.name)).toBeUndefined();
      expect(liveImage('east', app.name)).toBe('dropped:1.0.0');
      const [last] = await h.stores.events.listEvents({
        subjectKind: 'deployment',
        subject: placed.west.id,
      });
      expect(last).toMatchObject({ to: 'REMOVED', reason: 'PRUNED' });
    });

    it('rolls back a revision that turns WORKLOAD_UNHEALTHY soon after its apply, once', async () => {
      const h = await setup();
      const entityRef = `component:default/sickly-${tag}`;
      const d = await h.deployments.deploy(
        { entityRef, cluster: 'east', image: 'sickly:1.0.0' },
        'test',
      );
      await settle(h.stores, d.id);
      const next = await h.deployments.deploy(
        { entityRef, cluster: 'east', image: 'sickly:2.0.0' },
        'test',
      );
      expect(await settle(h.stores, next.id)).toMatchObject({
        status: 'DEPLOYED',
        revision: 2,
      });
      // Its pods crash-loop now: the reconcile sees the missing replicas.
      sim.setReadiness('east', { neverReady: true });
      await h.reconciler.runOnce();
      await eventually(async () =>
        expect(
          (await h.stores.deployments.getDeployment(d.id))!.revision,
        ).toBeGreaterThanOrEqual(3),
      );
      const revisions = await h.stores.revisions.listRevisions(d.id);
      expect(revisions.map(r => [r.revision, r.image, r.cause])).toEqual([
        [3, 'sickly:1.0.0', 'auto-rollback'],
        [2, 'sickly:2.0.0', 'deploy'],
        [1, 'sickly:1.0.0', 'deploy'],
      ]);
      const events = await h.stores.events.listEvents({
        subjectKind: 'deployment',
        subject: d.id,
      });
      expect(events.filter(e => e.reason === 'AUTO_ROLLED_BACK')).toHaveLength(
        1,
      );
      sim.setReadiness('east', { neverReady: false, readyDelayMs: 50 });
      expect(await settle(h.stores, d.id)).toMatchObject({
        status: 'DEPLOYED',
        statusReason: 'ROLLED_BACK',
        image: 'sickly:1.0.0',
      });
    });

    it("keeps a deployment's port when the application's default port changes, until a new revision", async () => {
      const h = await setup();
      const entityRef = `component:default/ported-${tag}`;
      const d = await h.deployments.deploy(
        { entityRef, cluster: 'east', image: 'ported:1.0.0' },
        'test',
      );
      await settle(h.stores, d.id);
      const app = (await h.stores.applications.getApplicationByEntityRef(
        entityRef,
      ))!;
      const livePort = () =>
        (
          sim
            .objects('east')
            .find(
              o =>
                o.kind === 'Deployment' &&
                o.metadata.name === app.name &&
                o.metadata.namespace === namespace,
            ) as any
        )?.spec.template.spec.containers[0].ports[0].containerPort;
      expect(livePort()).toBe(8000);
      await h.deployments.updateApplication(app.id, {
        spec: { port: 9000, selfHeal: true },
      });
      await h.reconciler.runOnce();
      expect(await h.stores.deployments.getDeployment(d.id)).toMatchObject({
        syncStatus: 'SYNCED',
        revision: 1,
      });
      expect(livePort()).toBe(8000);
      const next = await h.deployments.deploy(
        { entityRef, cluster: 'east' },
        'test',
      );
      await settle(h.stores, next.id);
      expect(livePort()).toBe(9000);
      expect((await h.stores.revisions.getRevision(d.id, 2))!.port).toBe(9000);
    });

    it('keeps an undeploy by hand: the placement does not put it back until a deploy there by hand', async () => {
      const h = await setup();
      const entityRef = `component:default/unwanted-${tag}`;
      const app = await h.deployments.registerApplication({
        entityRef,
        spec: { image: 'unwanted:1.0.0' },
        placement: { clusters: ['east', 'west'] },
      });
      await h.reconciler.runOnce();
      const on = async (cluster: string) =>
        (
          await h.stores.deployments.listDeployments({ applicationId: app.id })
        ).find(d => d.cluster === cluster);
      const west = (await on('west'))!;
      await settle(h.stores, west.id);
      await settle(h.stores, (await on('east'))!.id);
      await h.deployments.undeploy(west.id, {}, 'ada');
      await eventually(async () => expect(await on('west')).toBeUndefined());
      for (let run = 0; run < 2; run++) {
        expect((await h.reconciler.runOnce()).placed).toEqual([]);
      }
      expect(await on('west')).toBeUndefined();
      expect(liveImage('west', app.name)).toBeUndefined();

      const back = await h.deployments.deploy(
        { entityRef, cluster: 'west' },
        'ada',
      );
      await settle(h.stores, back.id);
      expect(liveImage('west', app.name)).toBe('unwanted:1.0.0');
      expect(
        (await h.stores.applications.listExcludedClusters()).get(app.id),
      ).toBeUndefined();
    });

    it('never places an application that is being removed again', async () => {
      const h = await setup();
      const entityRef = `component:default/leaving-${tag}`;
      const app = await h.deployments.registerApplication({
        entityRef,
        spec: { image: 'leaving:1.0.0' },
        placement: { clusters: ['east', 'west'] },
      });
      await h.reconciler.runOnce();
      for (const d of await h.stores.deployments.listDeployments({
        applicationId: app.id,
      })) {
        await settle(h.stores, d.id);
      }
      sim.setFault('west', { mode: 'down' });
      await h.worker.runCycle();
      await h.worker.runCycle();
      await h.deployments.removeApplication(app.id, 'ada');
      expect(
        (await h.stores.applications.listApplications({ entityRef }))[0],
      ).toMatchObject({ removing: true });
      await eventually(async () =>
        expect(
          await h.stores.deployments.listDeployments({
            applicationId: app.id,
          }),
        ).toHaveLength(1),
      );
      const summary = await h.reconciler.runOnce();
      expect(summary.placed).toEqual([]);
      expect(
        (
          await h.stores.deployments.listDeployments({ applicationId: app.id })
        ).map(d => [d.cluster, d.status]),
      ).toEqual([['west', 'REMOVING']]);
      await expect(
        h.deployments.deploy({ entityRef, cluster: 'east' }, 'test'),
      ).rejects.toMatchObject({ name: 'ConflictError' });
      sim.setFault('west', { mode: 'ok' });
      await h.worker.runCycle();
      await h.reconciler.runOnce();
      expect(
        await h.stores.applications.getApplication(app.id),
      ).toBeUndefined();
    });

    it('places an application on a cluster that starts matching its selector, with no request', async () => {
      const annotationsOf = jest.fn(
        async (ref: string): Promise<Record<string, string>> =>
          ref.includes('annotated')
            ? { 'cnp.io/cluster-selector': 'tier=edge' }
            : {},
      );
      const h = await setup({ annotationsOf });
      const byPlacement = await h.deployments.registerApplication({
        entityRef: `component:default/placed-${tag}`,
        spec: { image: 'nginx:1.27' },
        placement: { clusterSelector: { env: 'prod' } },
      });
      const byAnnotation = await h.deployments.registerApplication({
        entityRef: `component:default/annotated-${tag}`,
        spec: { image: 'nginx:1.27' },
      });
      expect((await h.reconciler.runOnce()).placed).toEqual([]);

      const fresh = `prod-${tag}`;
      if (!sim.clusterNames().includes(fresh)) await sim.addCluster(fresh);
      await h.discovery.run();
      await h.stores.clusters.updateClusterSettings(fresh, {
        labels: { env: 'prod', tier: 'edge' },
      });
      const summary = await h.reconciler.runOnce();
      expect(summary.placed.map(p => [p.entityRef, p.cluster]).sort()).toEqual([
        [`component:default/annotated-${tag}`, fresh],
        [`component:default/placed-${tag}`, fresh],
      ]);
      for (const app of [byPlacement, byAnnotation]) {
        const [d] = await h.stores.deployments.listDeployments({
          applicationId: app.id,
        });
        expect(await settle(h.stores, d.id)).toMatchObject({
          cluster: fresh,
          status: 'DEPLOYED',
        });
      }
      expect((await h.reconciler.runOnce()).placed).toEqual([]); // once only
    });

    it("places an application on the clusters its component's cnp.io/clusters names, unless its placement names others", async () => {
      const annotationsOf = jest.fn(async () => ({
        'cnp.io/clusters': ' east, nowhere ,,',
      }));
      const h = await setup({ annotationsOf });
      const byAnnotation = await h.deployments.registerApplication({
        entityRef: `component:default/named-${tag}`,
        spec: { image: 'nginx:1.27' },
      });
      const explicit = await h.deployments.registerApplication({
        entityRef: `component:default/explicit-${tag}`,
        spec: { image: 'nginx:1.27' },
        placement: { clusters: ['west'] },
      });
      const summary = await h.reconciler.runOnce();
      expect(summary.placed.map(p => [p.entityRef, p.cluster]).sort()).toEqual([
        [`component:default/explicit-${tag}`, 'west'],
        [`component:default/named-${tag}`, 'east'], // 'nowhere' is no cluster: ignored
      ]);
      for (const app of [byAnnotation, explicit]) {
        const [d] = await h.stores.deployments.listDeployments({
          applicationId: app.id,
        });
        await settle(h.stores, d.id);
      }
      expect((await h.reconciler.runOnce()).placed).toEqual([]); // once only
    });

    it("reads an application's deployments for placement only when it is placed somewhere", async () => {
      const annotationsOf = jest.fn(async () => ({}));
      const h = await setup({ annotationsOf });
      const byHand = await deployed(h, 'by-hand', 'east');
      const placed = await h.deployments.registerApplication({
        entityRef: `component:default/placed-somewhere-${tag}`,
        spec: { image: 'nginx:1.27' },
        placement: { clusters: ['west'] },
      });
      const lists = [
        jest.spyOn(h.stores.deployments, 'listDeployments'),
        jest.spyOn(h.stores.deployments, 'listDeploymentStates'),
      ];
      const summary = await h.reconciler.runOnce();
      expect(summary.placed.map(p => [p.entityRef, p.cluster])).toEqual([
        [`component:default/placed-somewhere-${tag}`, 'west'],
      ]);
      // The application deployed by hand has no placement: nothing to place nor to unplace.
      const read = new Set(
        lists.flatMap(spy =>
          spy.mock.calls.map(([filter]) => filter?.applicationId),
        ),
      );
      read.delete(undefined);
      expect([...read]).toEqual([placed.id]);
      // Its deployment is still compared.
      expect(
        (await h.stores.deployments.getDeployment(byHand.deployment.id))!,
      ).toMatchObject({ syncStatus: 'SYNCED' });
      const [d] = await h.stores.deployments.listDeployments({
        applicationId: placed.id,
      });
      await settle(h.stores, d.id);
    });

    it('reads 200 deployments on 20 clusters with bounded concurrency; one failing cluster does not stop the others', async () => {
      let inFlight = 0;
      let maxInFlight = 0;
      const h = await setup({
        concurrency: 6,
        wrapRead:
          read =>
          async (...args) => {
            maxInFlight = Math.max(maxInFlight, ++inFlight);
            try {
              return await read(...args);
            } finally {
              inFlight--;
            }
          },
      });
      const names = Array.from({ length: 20 }, (_, i) => `many-${tag}-${i}`);
      for (const name of names)
        if (!sim.clusterNames().includes(name)) await sim.addCluster(name);
      await h.worker.runCycle();
      for (let i = 0; i < 200; i++) {
        const app = await h.stores.applications.insertApplication({
          entityRef: `component:default/bulk-${tag}-${i}`,
          name: `bulk-${i}`,
          spec: { image: 'nginx:1.27' },
        });
        await h.stores.deployments.insertDeployment(
          { applicationId: app.id, cluster: names[i % 20], status: 'DEPLOYED' },
          'test',
        );
      }
      sim.setFault(names[3], { mode: 'error' });
      const summary = await h.reconciler.runOnce();
      expect(maxInFlight).toBe(6);
      const bulk = (await h.stores.deployments.listDeployments()).filter(d =>
        d.entityRef.includes(`bulk-${tag}`),
      );
      const onFailing = bulk.filter(d => d.cluster === names[3]);
      expect(onFailing).toHaveLength(10);
      expect(onFailing.every(d => d.syncStatus === 'UNKNOWN')).toBe(true);
      // the other 190 were read: their objects were never applied, so they are missing
      const others = bulk.filter(d => d.cluster !== names[3]);
      expect(others.every(d => d.syncStatus === 'OUT_OF_SYNC')).toBe(true);
      expect(summary.errors).toEqual([]);
      sim.setFault(names[3], { mode: 'ok' });
    });
  },
);
