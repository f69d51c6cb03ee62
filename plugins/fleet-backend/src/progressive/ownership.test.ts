import { mockServices } from '@backstage/backend-test-utils';
import {
  AppsV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { Release, ReleaseStrategy } from '@cnp/plugin-fleet-common';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import { createFleet } from '../testing/fleet';
import { DeploymentService } from '../deploy/DeploymentService';
import { ManifestApplier } from '../deploy/ManifestApplier';
import { ManifestRemover } from '../deploy/ManifestRemover';
import {
  builtInTrafficProviders,
  TrafficProviders,
} from './traffic/TrafficProviders';
import { ReleaseOrchestrator } from './ReleaseOrchestrator';
import { ReleaseService } from './ReleaseService';

jest.setTimeout(120_000);

/* One cluster per way of running a canary. */
const CLUSTERS = { rollout: 'own-ro', istio: 'own-is', replicas: 'own-pl' };
const ALL = Object.values(CLUSTERS);
const ISTIO_CRD = 'virtualservices.networking.istio.io';
const ROLLOUT_CRD = 'rollouts.argoproj.io';

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ALL, readyDelayMs: 40 });

const ENTITY = 'component:default/checkout';
/** The team whose objects share the application's namespace and names. */
const OTHER = 'component:default/checkout-legacy';
const OLD = 'registry.example/checkout:1.0.0';
const NEW = 'registry.example/checkout:2.0.0';
const FOREIGN_IMAGE = 'registry.example/legacy-checkout:7.3.1';

function strategy(
  steps: ReleaseStrategy['canary']['steps'] = [
    { setWeight: 50 },
    { setWeight: 100 },
  ],
): ReleaseStrategy {
  return {
    canary: {
      steps,
      maxSurge: '25%',
      maxUnavailable: 0,
      trafficRouting: {
        istio: {
          virtualService: {
            name: 'storefront',
            routes: ['storefront', 'login'],
          },
        },
      },
    },
    rollback: { enabled: true, timeout: '30s' },
  };
}

const client = (cluster: string) => {
  const kc = new KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath(cluster));
  return {
    apps: kc.makeApiClient(AppsV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
  };
};

const foreignTemplate = (name: string) => ({
  metadata: { labels: { app: name, team: 'legacy' } },
  spec: {
    containers: [
      { name: 'app', image: FOREIGN_IMAGE, ports: [{ containerPort: 8080 }] },
    ],
  },
});

describe.each(databases.eachSupportedId())(
  'a release changes only objects Fleet owns for its component (%s)',
  databaseId => {
    const services: DeploymentService[] = [];
    afterEach(() => Promise.all(services.splice(0).map(s => s.stop())));
    let namespace = '';
    let tests = 0;

    beforeEach(() => {
      for (const cluster of ALL) {
        sim.setCrd(cluster, ROLLOUT_CRD, cluster === CLUSTERS.rollout);
        sim.setCrd(cluster, ISTIO_CRD, cluster === CLUSTERS.istio);
      }
    });

    async function setup() {
      tests += 1;
      namespace = `shop-${databaseId
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
          defaultReplicas: 2,
          progressDeadlineMs: 20_000,
          pollIntervalMs: 25,
        },
      });
      services.push(deployments);
      const orchestrator = ReleaseOrchestrator.create({
        stores: harness.stores,
        deployments,
        traffic: TrafficProviders.create({
          clients: harness.clients,
          providers: builtInTrafficProviders(),
        }),
        logger: harness.logger,
        defaultReplicas: 2,
        namespace,
      });
      const releases = ReleaseService.create({
        stores: harness.stores,
        deployments,
      });
      const first = await Promise.all(
        ALL.map(cluster =>
          deployments.deploy(
            { entityRef: ENTITY, cluster, image: OLD, replicas: 2 },
            'user:default/ada',
          ),
        ),
      );
      for (const d of first) await settle(harness.stores, d.id);
      const application =
        (await harness.stores.applications.getApplicationByEntityRef(ENTITY))!;
      return { ...harness, deployments, orchestrator, releases, application };
    }

    async function settle(stores: any, id: string) {
      for (let i = 0; i < 800; i++) {
        const d = await stores.deployments.getDeployment(id);
        if (d.status !== 'PROGRESSING' && d.status !== 'PENDING') return d;
        await new Promise(r => setTimeout(r, 25));
      }
      throw new Error(`deployment ${id} did not settle`);
    }

    async function runUntil(
      ctx: { orchestrator: ReleaseOrchestrator; releases: ReleaseService },
      id: string,
      done: (r: Release) => boolean,
    ): Promise<Release> {
      const deadline = Date.now() + 60_000;
      for (;;) {
        await ctx.orchestrator.tick();
        const release = await ctx.releases.getRelease(id);
        if (done(release)) return release;
        if (Date.now() > deadline)
          throw new Error(`release stuck: ${JSON.stringify(release.progress)}`);
        await new Promise(r => setTimeout(r, 30));
      }
    }
    const ended = (r: Release) =>
      r.status === 'ROLLED_BACK' || r.status === 'COMPLETED';

    /** Another team's Rollout `checkout`, Deployment `checkout-canary` and VirtualService. */
    async function createForeignObjects(
      cluster: string,
      vsAnnotation?: string,
    ) {
      const { apps, custom } = client(cluster);
      await apps.createNamespacedDeployment({
        namespace,
        body: {
          metadata: {
            name: 'checkout-canary',
            labels: { team: 'legacy' },
            annotations: { 'cnp.io/entity-ref': OTHER },
          },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: 'checkout-canary' } },
            template: foreignTemplate('checkout-canary'),
          },
        },
      });
      if (cluster === CLUSTERS.rollout) {
        await custom.createNamespacedCustomObject({
          group: 'argoproj.io',
          version: 'v1alpha1',
          namespace,
          plural: 'rollouts',
          body: {
            apiVersion: 'argoproj.io/v1alpha1',
            kind: 'Rollout',
            metadata: { name: 'checkout', labels: { team: 'legacy' } },
            spec: {
              replicas: 1,
              selector: { matchLabels: { app: 'checkout-legacy' } },
              template: foreignTemplate('checkout-legacy'),
              strategy: { canary: { steps: [{ setWeight: 10 }] } },
            },
          },
        });
      }
      if (cluster === CLUSTERS.istio) await createVirtualService(vsAnnotation);
    }

    async function createVirtualService(entityRef?: string) {
      await client(CLUSTERS.istio).custom.createNamespacedCustomObject({
        group: 'networking.istio.io',
        version: 'v1beta1',
        namespace,
        plural: 'virtualservices',
        body: {
          apiVersion: 'networking.istio.io/v1beta1',
          kind: 'VirtualService',
          metadata: {
            name: 'storefront',
            labels: { team: 'legacy' },
            ...(entityRef
              ? { annotations: { 'cnp.io/entity-ref': entityRef } }
              : {}),
          },
          spec: {
            hosts: ['shop.example.com'],
            http: [
              {
                name: 'storefront',
                route: [
                  { destination: { host: 'storefront', port: { number: 80 } } },
                ],
              },
              {
                name: 'login',
                match: [{ uri: { prefix: '/login' } }],
                route: [
                  { destination: { host: 'login', port: { number: 80 } } },
                ],
              },
            ],
          },
        },
      });
    }

    /** The whole JSON of the other team's objects, resourceVersion included. */
    const foreignSnapshot = (cluster: string) =>
      JSON.stringify(
        sim
          .objects(cluster)
          .filter(
            o =>
              ['Deployment', 'Rollout', 'VirtualService'].includes(o.kind) &&
              (o.metadata as any).namespace === namespace &&
              (o.metadata as any).labels?.team === 'legacy',
          )
          .map(o => o)
          .sort((a, b) =>
            `${a.kind}/${(a.metadata as any).name}`.localeCompare(
              `${b.kind}/${(b.metadata as any).name}`,
            ),
          ),
      );
    /** The snapshot once the simulator's controllers are done with the objects' status. */
    async function settledSnapshot(cluster: string) {
      let last = foreignSnapshot(cluster);
      for (let i = 0; i < 100; i++) {
        await new Promise(r => setTimeout(r, 250));
        const now = foreignSnapshot(cluster);
        if (now === last) return now;
        last = now;
      }
      throw new Error('the foreign objects never settled');
    }
    const foreignCount = (cluster: string) =>
      (JSON.parse(foreignSnapshot(cluster)) as unknown[]).length;

    it.each(Object.entries(CLUSTERS))(
      'a canary release (%s mode) leaves a foreign Rollout, canary Deployment and VirtualService byte-identical and ends OWNERSHIP_CONFLICT',
      async (mode, cluster) => {
        const ctx = await setup();
        await createForeignObjects(cluster);
        const before = await settledSnapshot(cluster);
        expect(foreignCount(cluster)).toBe(
          mode === 'replicas' ? 1 : 2, // canary Deployment, and the Rollout or the VirtualService
        );
        const started = await ctx.releases.release(
          ctx.application.id,
          { image: NEW, clusters: [cluster], strategy: strategy() },
          'user:default/ada',
        );
        const release = await runUntil(ctx, started.id, ended);
        expect(release.status).toBe('ROLLED_BACK');
        expect(release.progress!.abort).toMatchObject({
          reason: 'OWNERSHIP_CONFLICT',
          cluster,
        });
        const named =
          mode === 'rollout'
            ? `Rollout ${namespace}/checkout`
            : `Deployment ${namespace}/checkout-canary`;
        expect(release.progress!.abort!.message).toContain(named);
        // Refused before any step: the cluster was never touched.
        expect(release.progress!.clusters[0].state).toBe('SKIPPED');
        expect(foreignSnapshot(cluster)).toBe(before);
        // Fleet's own Deployment still runs the old revision.
        const live = await client(cluster).apps.readNamespacedDeployment({
          name: 'checkout',
          namespace,
        });
        expect(live.spec!.template.spec!.containers[0].image).toBe(OLD);
      },
    );

    it('a release refuses a VirtualService without the component entity-ref before any step, on any cluster', async () => {
      const ctx = await setup();
      await createVirtualService(); // no annotation: not Fleet's to steer
      const before = await settledSnapshot(CLUSTERS.istio);
      const plainBefore = JSON.stringify(
        sim
          .objects(CLUSTERS.replicas)
          .filter(o => (o.metadata as any).namespace === namespace),
      );
      const started = await ctx.releases.release(
        ctx.application.id,
        {
          image: NEW,
          clusters: [CLUSTERS.replicas, CLUSTERS.istio],
          strategy: {
            ...strategy(),
            // The plain cluster comes first: it must not be touched either.
            waves: [{ clusters: [CLUSTERS.replicas] }, { percent: 100 }],
          },
        },
        'user:default/ada',
      );
      const release = await runUntil(ctx, started.id, ended);
      expect(release.progress!.abort).toMatchObject({
        reason: 'OWNERSHIP_CONFLICT',
        cluster: CLUSTERS.istio,
      });
      expect(release.progress!.abort!.message).toContain(
        `VirtualService ${namespace}/storefront`,
      );
      expect(release.progress!.clusters.map(c => c.state)).toEqual([
        'SKIPPED',
        'SKIPPED',
      ]);
      expect(foreignSnapshot(CLUSTERS.istio)).toBe(before);
      expect(
        JSON.stringify(
          sim
            .objects(CLUSTERS.replicas)
            .filter(o => (o.metadata as any).namespace === namespace),
        ),
      ).toBe(plainBefore);
    });

    it('a VirtualService annotated with the component entity-ref is steered as before', async () => {
      const ctx = await setup();
      await createVirtualService(ENTITY);
      const started = await ctx.releases.release(
        ctx.application.id,
        { image: NEW, clusters: [CLUSTERS.istio], strategy: strategy() },
        'user:default/ada',
      );
      const release = await runUntil(ctx, started.id, ended);
      expect(release.status).toBe('COMPLETED');
      const weights = sim
        .history(CLUSTERS.istio, { namespace })
        .filter(h => h.kind === 'VirtualService' && h.verb === 'update');
      expect(weights.length).toBeGreaterThan(0);
      const vs: any = sim
        .objects(CLUSTERS.istio)
        .find(
          o =>
            o.kind === 'VirtualService' &&
            (o.metadata as any).namespace === namespace,
        );
      // Both named routes went to the canary and back to their own destination, as written.
      expect(vs.spec.http.map((r: any) => r.route)).toEqual([
        [
          {
            destination: { host: 'storefront', port: { number: 80 } },
            weight: 100,
          },
        ],
        [
          {
            destination: { host: 'login', port: { number: 80 } },
            weight: 100,
          },
        ],
      ]);
    });

    it('a VirtualService whose owner withdraws the entity-ref mid-release is not steered again, nor on the rollback', async () => {
      const ctx = await setup();
      await createVirtualService(ENTITY);
      const started = await ctx.releases.release(
        ctx.application.id,
        {
          image: NEW,
          clusters: [CLUSTERS.istio],
          strategy: strategy([
            { setWeight: 20 },
            { pause: {} },
            { setWeight: 60 },
            { setWeight: 100 },
          ]),
        },
        'user:default/ada',
      );
      await runUntil(
        ctx,
        started.id,
        r => !!r.progress?.clusters[0].awaitingPromote,
      );
      // The owner takes the VirtualService back: no annotation any more.
      const { custom } = client(CLUSTERS.istio);
      await custom.patchNamespacedCustomObject(
        {
          group: 'networking.istio.io',
          version: 'v1beta1',
          namespace,
          plural: 'virtualservices',
          name: 'storefront',
          body: [
            {
              op: 'remove',
              path: '/metadata/annotations/cnp.io~1entity-ref',
            },
          ],
        },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      );
      const before = await settledSnapshot(CLUSTERS.istio);
      await ctx.releases.steer(started.id, 'promote', 'user:default/ada');
      const release = await runUntil(ctx, started.id, ended);
      expect(release.status).toBe('ROLLED_BACK');
      expect(release.progress!.abort).toMatchObject({
        reason: 'OWNERSHIP_CONFLICT',
        cluster: CLUSTERS.istio,
      });
      expect(foreignSnapshot(CLUSTERS.istio)).toBe(before);
      // Fleet's own canary objects are gone all the same.
      expect(
        sim
          .objects(CLUSTERS.istio)
          .filter(
            o =>
              (o.metadata as any).namespace === namespace &&
              (o.metadata as any).name?.endsWith('-canary'),
          ),
      ).toEqual([]);
    });

    it.each([
      ['rollout', 'Rollout', 'argoproj.io', 'v1alpha1', 'rollouts', 'checkout'],
      [
        'replicas',
        'Deployment',
        'apps',
        'v1',
        'deployments',
        'checkout-canary',
      ],
    ] as const)(
      'in %s mode, a %s another owner takes over mid-release is not changed again, nor on the rollback',
      async (mode, kind, group, version, plural, name) => {
        const ctx = await setup();
        const cluster = CLUSTERS[mode];
        const started = await ctx.releases.release(
          ctx.application.id,
          {
            image: NEW,
            clusters: [cluster],
            strategy: strategy([
              { setWeight: 20 },
              { pause: {} },
              { setWeight: 60 },
              { setWeight: 100 },
            ]),
          },
          'user:default/ada',
        );
        await runUntil(
          ctx,
          started.id,
          r => !!r.progress?.clusters[0].awaitingPromote,
        );
        // Another owner takes the object over: its own managed-by, no entity-ref of ours.
        const { custom } = client(cluster);
        await custom.patchNamespacedCustomObject(
          {
            group,
            version,
            namespace,
            plural,
            name,
            body: [
              {
                op: 'replace',
                path: '/metadata/labels/app.kubernetes.io~1managed-by',
                value: 'helm',
              },
              {
                op: 'add',
                path: '/metadata/labels/team',
                value: 'legacy',
              },
              {
                op: 'replace',
                path: '/metadata/annotations/cnp.io~1entity-ref',
                value: OTHER,
              },
            ],
          },
          setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
        );
        const before = await settledSnapshot(cluster);
        expect(foreignCount(cluster)).toBe(1);
        await ctx.releases.steer(started.id, 'promote', 'user:default/ada');
        const release = await runUntil(ctx, started.id, ended);
        expect(release.status).toBe('ROLLED_BACK');
        expect(release.progress!.abort).toMatchObject({
          reason: 'OWNERSHIP_CONFLICT',
          cluster,
        });
        expect(release.progress!.abort!.message).toContain(
          `${kind} ${namespace}/${name}`,
        );
        expect(release.progress!.clusters[0].state).toBe('ROLLED_BACK');
        expect(await settledSnapshot(cluster)).toBe(before);
      },
    );

    describe('nothing silently supersedes a running release', () => {
      async function running() {
        const ctx = await setup();
        const started = await ctx.releases.release(
          ctx.application.id,
          {
            image: NEW,
            clusters: [CLUSTERS.replicas],
            strategy: strategy([{ setWeight: 50 }, { pause: {} }]),
          },
          'user:default/ada',
        );
        await runUntil(
          ctx,
          started.id,
          r => !!r.progress?.clusters[0].awaitingPromote,
        );
        const deployment = (await ctx.stores.deployments.getDeploymentFor(
          ctx.application.id,
          CLUSTERS.replicas,
        ))!;
        return { ...ctx, release: started, deployment };
      }

      it('an immediate release during a progressive one is a 409 naming it and abort', async () => {
        const ctx = await running();
        await expect(
          ctx.releases.release(
            ctx.application.id,
            { image: 'registry.example/checkout:3.0.0' },
            'user:default/ada',
          ),
        ).rejects.toMatchObject({
          name: 'ConflictError',
          message: expect.stringContaining(
            `POST /releases/${ctx.release.id}/abort`,
          ),
        });
      });

      it('a rollback or a deploy by hand on a cluster of a running release is a 409; after abort the release rolls itself back', async () => {
        const ctx = await running();
        await expect(
          ctx.deployments.rollback({
            deploymentId: ctx.deployment.id,
            toRevision: 1,
            actor: 'user:default/ada',
          }),
        ).rejects.toMatchObject({
          name: 'ConflictError',
          message: expect.stringContaining(`Release '${ctx.release.id}'`),
        });
        await expect(
          ctx.deployments.deploy(
            { entityRef: ENTITY, cluster: CLUSTERS.replicas, image: NEW },
            'user:default/ada',
          ),
        ).rejects.toMatchObject({ name: 'ConflictError' });
        // A cluster the release does not hold takes a deploy as before.
        const other = await ctx.deployments.deploy(
          { entityRef: ENTITY, cluster: CLUSTERS.istio, image: OLD },
          'user:default/ada',
        );
        expect(other.cluster).toBe(CLUSTERS.istio);
        // The release's own rollback is not refused.
        await ctx.releases.steer(ctx.release.id, 'abort', 'user:default/ada');
        const release = await runUntil(ctx, ctx.release.id, ended);
        expect(release.status).toBe('ROLLED_BACK');
        expect(release.progress!.clusters[0].state).toBe('ROLLED_BACK');
        // Once it ended, a rollback by hand is accepted again.
        await settle(ctx.stores, ctx.deployment.id);
        const back = await ctx.deployments.rollback({
          deploymentId: ctx.deployment.id,
          toRevision: 1,
          actor: 'user:default/ada',
        });
        expect(back.revision).toBeGreaterThan(ctx.deployment.revision);
      });
    });
  },
);
