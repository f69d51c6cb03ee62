import { mockServices } from '@backstage/backend-test-utils';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import type {
  Deployment,
  Release,
  ReleaseStrategy,
} from '@cnp/plugin-fleet-common';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import { holdDate } from '../testing/clock';
import { eventually } from '../testing/eventually';
import { createFleet } from '../testing/fleet';
import type { FleetStores } from '../database/types';
import { DeploymentService } from '../deploy/DeploymentService';
import { ManifestApplier } from '../deploy/ManifestApplier';
import { ManifestRemover } from '../deploy/ManifestRemover';
import {
  builtInTrafficProviders,
  TrafficProviders,
} from './traffic/TrafficProviders';
import { measure as measurePrometheus } from './analysis';
import { ReleaseOrchestrator } from './ReleaseOrchestrator';
import { ReleaseService } from './ReleaseService';
import { ReconcileWorker } from '../reconcile/ReconcileWorker';

jest.setTimeout(120_000);

/* Six clusters: two serve Argo Rollouts, two serve Istio, two serve neither. */
const ROLLOUT = ['ro-1', 'ro-2'];
const ISTIO = ['is-1', 'is-2'];
const PLAIN = ['pl-1', 'pl-2'];
const ALL = [...ROLLOUT, ...ISTIO, ...PLAIN];
const ISTIO_CRD = 'virtualservices.networking.istio.io';
const ROLLOUT_CRD = 'rollouts.argoproj.io';

const databases = createTestDatabases();
const sim = useSimulator({
  clusters: ALL,
  readyDelayMs: 60,
  prometheus: true,
});

const ENTITY = 'component:default/payments';
const OLD = 'registry.example/payments:1.0.0';
const NEW = 'registry.example/payments:2.0.0';

function strategy(over: Partial<ReleaseStrategy> = {}): ReleaseStrategy {
  return {
    waves: [
      { clusters: ['ro-1', 'is-1'] },
      { clusters: ['pl-1', 'ro-2'] },
      { percent: 100 },
    ],
    canary: {
      steps: [
        { setWeight: 20 },
        { pause: { duration: '200ms' } },
        { setWeight: 60 },
        { setWeight: 100 },
      ],
      maxSurge: '25%',
      maxUnavailable: 0,
      trafficRouting: {
        istio: { virtualService: { name: 'payments-vs', routes: ['primary'] } },
      },
    },
    analysis: {
      templates: [
        {
          name: 'success-rate',
          interval: '100ms',
          failureLimit: 1,
          successCondition: 'result[0] >= 0.995',
          provider: {
            prometheus: {
              address: sim.prometheusUrl!,
              query:
                'sum(rate(http_requests_total{app="{{app}}",cluster="{{cluster}}",revision="{{revision}}",code!~"5.."}[1m]))',
            },
          },
        },
      ],
    },
    rollback: { enabled: true, timeout: '30s' },
    ...over,
  };
}

describe.each(databases.eachSupportedId())(
  'progressive releases across the fleet (%s)',
  databaseId => {
    const services: DeploymentService[] = [];
    afterEach(() => Promise.all(services.splice(0).map(s => s.stop())));
    // Every test has its own namespace: the simulator's clusters live for the whole file.
    let namespace = '';
    let tests = 0;

    beforeEach(async () => {
      for (const name of ALL) {
        sim.setCrd(name, ROLLOUT_CRD, ROLLOUT.includes(name));
        sim.setCrd(name, ISTIO_CRD, ISTIO.includes(name));
      }
      sim.clearPrometheusRules();
      sim.setPrometheusFault('ok');
      sim.setPrometheusRule({ app: 'payments' }, 0.999);
    });

    async function setup() {
      tests += 1;
      namespace = `rel-${databaseId.toLowerCase().replace(/_/g, '-')}-${tests}`;
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
          defaultReplicas: 5,
          // Generous: a loaded machine makes replicas slow to come up, never a failure here.
          progressDeadlineMs: 60_000,
          pollIntervalMs: 25,
        },
      });
      services.push(deployments);
      const makeOrchestrator = (
        over: Partial<Parameters<typeof ReleaseOrchestrator.create>[0]> = {},
      ) =>
        ReleaseOrchestrator.create({
          stores: harness.stores,
          deployments,
          traffic: TrafficProviders.create({
            clients: harness.clients,
            providers: builtInTrafficProviders(),
          }),
          logger: harness.logger,
          defaultReplicas: 5,
          namespace,
          // Generous: a measurement that times out counts as failed, and a loaded machine must
          // not turn a passing release into a rollback.
          analysisTimeoutMs: 30_000,
          ...over,
        });
      const releases = ReleaseService.create({
        stores: harness.stores,
        deployments,
      });
      // Every cluster runs the old revision first, and the Istio ones have their VirtualService.
      const first = await Promise.all(
        ALL.map(cluster =>
          deployments.deploy(
            { entityRef: ENTITY, cluster, image: OLD, replicas: 5 },
            'user:default/ada',
          ),
        ),
      );
      for (const d of first) await settle(harness.stores, d.id);
      for (const cluster of ISTIO) await createVirtualService(cluster);
      const application =
        (await harness.stores.applications.getApplicationByEntityRef(ENTITY))!;
      return {
        ...harness,
        deployments,
        releases,
        orchestrator: makeOrchestrator(),
        makeOrchestrator,
        application,
      };
    }

    async function createVirtualService(cluster: string) {
      const kc = new KubeConfig();
      kc.loadFromFile(sim.kubeconfigPath(cluster));
      await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
        group: 'networking.istio.io',
        version: 'v1beta1',
        namespace,
        plural: 'virtualservices',
        body: {
          apiVersion: 'networking.istio.io/v1beta1',
          kind: 'VirtualService',
          // Its owner lets Fleet steer it for this component.
          metadata: {
            name: 'payments-vs',
            namespace,
            annotations: { 'cnp.io/entity-ref': ENTITY },
          },
          spec: {
            hosts: ['payments.example.com'],
            http: [
              {
                name: 'primary',
                route: [
                  { destination: { host: 'payments', port: { number: 80 } } },
                ],
              },
            ],
          },
        },
      });
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

    /** Ticks the orchestrator until `done` holds for the release. */
    async function runUntil(
      ctx: { orchestrator: ReleaseOrchestrator; releases: ReleaseService },
      id: string,
      done: (r: Release) => boolean,
      timeoutMs = 60_000,
    ): Promise<Release> {
      return eventually(
        async () => {
          await ctx.orchestrator.tick();
          const release = await ctx.releases.getRelease(id);
          if (done(release)) return release;
          throw new Error(
            `release did not get there: ${JSON.stringify(
              release.progress,
              null,
              1,
            )}`,
          );
        },
        { timeoutMs, intervalMs: 30 },
      );
    }

    /** This test's objects in a cluster (earlier tests' namespaces left out). */
    const objects = (cluster: string) =>
      sim
        .objects(cluster)
        .filter(o => (o.metadata as any).namespace === namespace);
    const history: typeof sim.history = (cluster, filter) =>
      sim.history(cluster, { ...filter, namespace });
    const liveImage = (cluster: string) =>
      (
        objects(cluster).find(
          o =>
            o.kind === 'Deployment' && (o.metadata as any).name === 'payments',
        ) as any
      )?.spec.template.spec.containers[0].image;
    const canaryLeft = (cluster: string) =>
      objects(cluster)
        .filter(
          o =>
            ((o.kind === 'Deployment' || o.kind === 'Service') &&
              (o.metadata as any).name === 'payments-canary') ||
            o.kind === 'Rollout',
        )
        .map(o => `${o.kind}/${(o.metadata as any).name}`);

    it("runs 3 waves over Rollout, Istio and plain clusters with passing analysis: everyone on the new revision, waves in order, each step's weight in the clusters", async () => {
      const ctx = await setup();
      const started = await ctx.releases.release(
        ctx.application.id,
        { image: NEW, strategy: strategy() },
        'user:default/ada',
      );
      expect(started).toMatchObject({
        status: 'PROGRESSING',
        image: NEW,
        version: null,
      });
      expect(started.progress!.waves).toEqual([
        ['ro-1', 'is-1'],
        ['pl-1', 'ro-2'],
        ['is-2', 'pl-2'],
      ]);
      // Nothing is applied before the task runs.
      expect(ALL.map(liveImage)).toEqual(ALL.map(() => OLD));

      const done = await runUntil(
        ctx,
        started.id,
        r => r.status !== 'PROGRESSING',
      );
      // With the abort, if any: a failure says why.
      expect({
        status: done.status,
        abort: done.progress?.abort ?? undefined,
      }).toEqual({
        status: 'COMPLETED',
        abort: undefined,
      });
      expect(
        done.progress!.clusters.map(c => [c.cluster, c.state, c.mode]),
      ).toEqual(
        expect.arrayContaining([
          ['ro-1', 'DONE', 'rollout'],
          ['ro-2', 'DONE', 'rollout'],
          ['is-1', 'DONE', 'istio'],
          ['is-2', 'DONE', 'istio'],
          ['pl-1', 'DONE', 'replicas'],
          ['pl-2', 'DONE', 'replicas'],
        ]),
      );
      for (const cluster of ALL) {
        expect(liveImage(cluster)).toBe(NEW);
        expect(canaryLeft(cluster)).toEqual([]);
        const d = (await ctx.stores.deployments.getDeploymentFor(
          ctx.application.id,
          cluster,
        ))!;
        expect(d).toMatchObject({ image: NEW, revision: 2 });
        const revision = await ctx.stores.revisions.getRevision(d.id, 2);
        expect(revision).toMatchObject({
          cause: 'release',
          outcome: 'DEPLOYED',
        });
      }
      expect(done.targets.map(t => t.cluster).sort()).toEqual([...ALL].sort());

      // Waves in order: no cluster of a wave started before every cluster of the one before was done.
      const events = (
        await ctx.stores.events.listEvents({
          subjectKind: 'release',
          subject: started.id,
          limit: 500,
        })
      ).reverse();
      const at = (reason: string, cluster: string) =>
        events.findIndex(
          e => e.reason === reason && e.message?.startsWith(`${cluster}:`),
        );
      for (const [earlier, later] of [
        [
          ['ro-1', 'is-1'],
          ['pl-1', 'ro-2'],
        ],
        [
          ['pl-1', 'ro-2'],
          ['is-2', 'pl-2'],
        ],
      ]) {
        const lastDone = Math.max(...earlier.map(c => at('CLUSTER_DONE', c)));
        const firstStart = Math.min(
          ...later.map(c => at('CLUSTER_STARTED', c)),
        );
        expect(lastDone).toBeGreaterThan(-1);
        expect(firstStart).toBeGreaterThan(lastDone);
      }
      expect(events[0]).toMatchObject({
        reason: 'CREATED',
        message: `Release of ${NEW} started by user:default/ada: 3 waves over 6 clusters`,
      });
      expect(events.at(-1)).toMatchObject({ to: 'COMPLETED' });

      // Istio: the VirtualService carried 20 then 60 to the canary, then all back to the stable host.
      for (const cluster of ISTIO) {
        const weights = history(cluster, {
          kind: 'VirtualService',
          name: 'payments-vs',
        })
          .filter(h => h.verb !== 'create')
          .map(h =>
            (h.object as any).spec.http[0].route
              .map((r: any) => `${r.destination.host}=${r.weight}`)
              .join(','),
          );
        expect(weights).toEqual([
          'payments=80,payments-canary=20',
          'payments=40,payments-canary=60',
          'payments=100',
        ]);
      }
      // Plain: the canary Deployment had 1 of 5 replicas at 20 %, 3 at 60 %, within maxSurge 25 % (2).
      for (const cluster of PLAIN) {
        const canaryReplicas = history(cluster, {
          kind: 'Deployment',
          name: 'payments-canary',
        })
          .filter(h => h.verb !== 'delete')
          .map(h => (h.object as any).spec.replicas);
        expect(canaryReplicas[canaryReplicas.length - 1]).toBe(3);
        expect(canaryReplicas).toContain(1);
        const stableReplicas = history(cluster, {
          kind: 'Deployment',
          name: 'payments',
        }).map(h => (h.object as any).spec.replicas);
        expect(stableReplicas).toEqual(expect.arrayContaining([4, 2]));
        expect(Math.min(...stableReplicas)).toBeGreaterThanOrEqual(2);
      }
      // Rollouts: Fleet wrote the strategy's weights as the Rollout's steps, and promoted past each pause.
      for (const cluster of ROLLOUT) {
        const rollout = history(cluster, { kind: 'Rollout', name: 'payments' });
        const created = rollout.find(h => h.verb === 'create')!.object as any;
        expect(created.spec.strategy.canary.steps).toEqual([
          { setWeight: 20 },
          { pause: {} },
          { setWeight: 60 },
          { pause: {} },
          { setWeight: 100 },
        ]);
        // Two promotes, each past a pause and on to the next weight's step: the first status
        // written is past the first pause (at the 60 % step, or already at its pause when the
        // controller took both in one pass on a loaded machine), the last at the end (at the
        // 100 % step, or past it, done, when the controller took that in one pass too).
        const steps = rollout
          .filter(h => h.verb === 'status')
          .map(h => (h.object as any).status.currentStepIndex);
        expect(steps).toHaveLength(2);
        expect([2, 3]).toContain(steps[0]);
        expect([4, 5]).toContain(steps[1]);
      }
      // Analysis ran on every cluster with the placeholders filled.
      expect(
        sim
          .prometheusQueries()
          .some(
            q => q.includes('cluster="pl-2"') && q.includes('app="payments"'),
          ),
      ).toBe(true);
    });

    it('rolls back waves 1 and 2 when analysis fails on one cluster of wave 2, never touching wave 3, and names metric, value and cluster', async () => {
      const ctx = await setup();
      sim.setPrometheusRule({ app: 'payments', cluster: 'pl-1' }, 0.42);
      const started = await ctx.releases.release(
        ctx.application.id,
        { image: NEW, strategy: strategy() },
        'user:default/ada',
      );
      const done = await runUntil(
        ctx,
        started.id,
        r => r.status === 'ROLLED_BACK' || r.status === 'COMPLETED',
      );
      expect(done.status).toBe('ROLLED_BACK');
      expect(done.progress!.abort).toMatchObject({
        reason: 'ANALYSIS_FAILED',
        cluster: 'pl-1',
        metric: 'success-rate',
        value: 0.42,
        condition: 'result[0] >= 0.995',
      });
      expect(done.progress!.abort!.message).toBe(
        'Analysis success-rate failed on pl-1: 0.42 does not meet result[0] >= 0.995',
      );
      const state = Object.fromEntries(
        done.progress!.clusters.map(c => [c.cluster, c.state]),
      );
      expect(state).toEqual({
        'ro-1': 'ROLLED_BACK',
        'is-1': 'ROLLED_BACK',
        'pl-1': 'ROLLED_BACK',
        'ro-2': 'ROLLED_BACK',
        'is-2': 'SKIPPED',
        'pl-2': 'SKIPPED',
      });
      for (const cluster of ['ro-1', 'is-1', 'pl-1', 'ro-2']) {
        expect(liveImage(cluster)).toBe(OLD);
        expect(canaryLeft(cluster)).toEqual([]);
        const d = await settle(
          ctx.stores,
          (await ctx.stores.deployments.getDeploymentFor(
            ctx.application.id,
            cluster,
          ))!.id,
        );
        expect(d).toMatchObject({ image: OLD, status: 'DEPLOYED' });
        const revisions = await ctx.stores.revisions.listRevisions(d.id);
        expect(revisions[0]).toMatchObject({ cause: 'rollback', image: OLD });
      }
      // Wave 1 had reached the new revision before wave 2 failed: it went back.
      const ro1 = (await ctx.stores.deployments.getDeploymentFor(
        ctx.application.id,
        'ro-1',
      ))!;
      expect(
        (await ctx.stores.revisions.listRevisions(ro1.id)).map(r => r.cause),
      ).toEqual(['rollback', 'release', 'deploy']);
      for (const cluster of ['is-2', 'pl-2']) {
        const d = (await ctx.stores.deployments.getDeploymentFor(
          ctx.application.id,
          cluster,
        ))!;
        expect(d.revision).toBe(1);
        expect(liveImage(cluster)).toBe(OLD);
        expect(history(cluster, { name: 'payments-canary' })).toEqual([]);
        expect(
          history(cluster, { kind: 'VirtualService' }).filter(
            h => h.verb !== 'create',
          ),
        ).toEqual([]);
      }
    });

    it('waits at an untimed pause until promote, and abort in the middle rolls back', async () => {
      const ctx = await setup();
      const started = await ctx.releases.release(
        ctx.application.id,
        {
          image: NEW,
          clusters: ['pl-1', 'pl-2'],
          strategy: strategy({
            waves: [{ clusters: ['pl-1'] }, { clusters: ['pl-2'] }],
            canary: {
              steps: [
                { setWeight: 20 },
                { pause: {} },
                { setWeight: 60 },
                { pause: {} },
              ],
            },
          }),
        },
        'user:default/ada',
      );
      await expect(
        ctx.releases.steer(started.id, 'promote', 'user:default/ada'),
      ).rejects.toThrow('No cluster of the current wave is in a pause');
      const waiting = await runUntil(
        ctx,
        started.id,
        r => r.progress!.clusters[0].awaitingPromote === true,
      );
      expect(waiting.progress!.clusters[0]).toMatchObject({
        cluster: 'pl-1',
        stepIndex: 1,
        weight: 20,
      });
      // It stays there, however many ticks pass.
      for (let i = 0; i < 10; i++) await ctx.orchestrator.tick();
      expect(
        (await ctx.releases.getRelease(started.id)).progress!.clusters[0],
      ).toMatchObject({ stepIndex: 1, awaitingPromote: true });

      const promoted = await ctx.releases.steer(
        started.id,
        'promote',
        'user:default/ada',
      );
      expect(promoted.progress!.clusters[0]).toMatchObject({
        stepIndex: 2,
        awaitingPromote: false,
      });
      await runUntil(
        ctx,
        started.id,
        r =>
          r.progress!.clusters[0].stepIndex === 3 &&
          r.progress!.clusters[0].weight === 60,
      );

      const aborting = await ctx.releases.steer(
        started.id,
        'abort',
        'user:default/grace',
      );
      expect(aborting.status).toBe('ABORTING');
      await expect(
        ctx.releases.steer(started.id, 'abort', 'user:default/grace'),
      ).rejects.toThrow('ABORTING');
      const done = await runUntil(
        ctx,
        started.id,
        r => r.status === 'ROLLED_BACK',
      );
      expect(done.progress!.abort).toMatchObject({
        reason: 'ABORTED',
        by: 'user:default/grace',
      });
      expect(done.progress!.clusters.map(c => c.state)).toEqual([
        'ROLLED_BACK',
        'SKIPPED',
      ]);
      expect(liveImage('pl-1')).toBe(OLD);
      expect(canaryLeft('pl-1')).toEqual([]);
      const replicas = (
        objects('pl-1').find(
          o =>
            o.kind === 'Deployment' && (o.metadata as any).name === 'payments',
        ) as any
      ).spec.replicas;
      expect(replicas).toBe(5);
    });

    it('starts a release the task takes up the moment it is stored: no conflict, its start events and each step once', async () => {
      const ctx = await setup();
      // The scheduled task ticks twice a second: here it reads the release as soon as the start
      // stored it, before the start answers.
      const insert = ctx.stores.releases.insertRelease.bind(
        ctx.stores.releases,
      );
      const versionsAfterTick: number[] = [];
      const spy = jest
        .spyOn(ctx.stores.releases, 'insertRelease')
        .mockImplementation(async (...args) => {
          const record = await insert(...args);
          await ctx.orchestrator.tick();
          versionsAfterTick.push(
            (await ctx.stores.releases.getRelease(record.id))!.version,
          );
          return record;
        });
      const started = await ctx.releases.release(
        ctx.application.id,
        {
          image: NEW,
          clusters: ['pl-1'],
          strategy: strategy({
            waves: [{ clusters: ['pl-1'] }],
            canary: { steps: [{ setWeight: 20 }, { pause: {} }] },
          }),
        },
        'user:default/ada',
      );
      spy.mockRestore();
      // The task wrote the release before the start answered.
      expect(versionsAfterTick).toEqual([1]);
      expect(started.status).toBe('PROGRESSING');
      await runUntil(
        ctx,
        started.id,
        r => r.progress!.clusters[0].awaitingPromote === true,
      );
      const reasons = (
        await ctx.stores.events.listEvents({
          subjectKind: 'release',
          subject: started.id,
          limit: 500,
        })
      )
        .reverse()
        .map(e => e.reason)
        .filter(r => ['CREATED', 'WAVE_STARTED', 'WEIGHT_SET'].includes(r!));
      expect(reasons).toEqual(['CREATED', 'WAVE_STARTED', 'WEIGHT_SET']);
    });

    it('resumes a timed pause after a restart with the time that was left, never re-running a finished step', async () => {
      const ctx = await setup();
      const started = await ctx.releases.release(
        ctx.application.id,
        {
          image: NEW,
          clusters: ['pl-1'],
          strategy: strategy({
            waves: undefined,
            canary: {
              steps: [
                { setWeight: 20 },
                { pause: { duration: '3s' } },
                { setWeight: 60 },
              ],
            },
          }),
        },
        'user:default/ada',
      );
      const pausing = await runUntil(
        ctx,
        started.id,
        r => !!r.progress!.clusters[0].pauseUntil,
      );
      const pauseUntil = pausing.progress!.clusters[0].pauseUntil!;
      const weightEvents = async () =>
        (
          await ctx.stores.events.listEvents({
            subjectKind: 'release',
            subject: started.id,
            limit: 100,
          })
        ).filter(e => e.reason === 'WEIGHT_SET').length;
      expect(await weightEvents()).toBe(1);

      // "Restart": a new orchestrator over the same database, as a new backend would build it.
      // Its first tick runs with the clock held 1 s before the pause ends (only Date is faked),
      // so a loaded machine cannot let the pause run out first: the tick must keep the pause.
      const restarted = ctx.makeOrchestrator();
      const clock = holdDate(Date.parse(pauseUntil) - 1_000);
      try {
        await restarted.tick();
      } finally {
        clock.restore();
      }
      const after = await ctx.releases.getRelease(started.id);
      expect(after.progress!.clusters[0]).toMatchObject({
        stepIndex: 1,
        pauseUntil,
        weight: 20,
      });
      expect(await weightEvents()).toBe(1);

      const done = await runUntil(
        { ...ctx, orchestrator: restarted },
        started.id,
        r => r.status === 'COMPLETED',
      );
      const events = await ctx.stores.events.listEvents({
        subjectKind: 'release',
        subject: started.id,
        limit: 100,
      });
      const pauseOver = events.find(e => e.reason === 'STEP_DONE')!;
      expect(Date.parse(pauseOver.createdAt)).toBeGreaterThanOrEqual(
        Date.parse(pauseUntil) - 5,
      );
      expect(await weightEvents()).toBe(2);
      expect(done.progress!.clusters[0].state).toBe('DONE');
    });

    it('keeps the reconcile off a cluster while its canary runs: no self-heal of the scaled-down stable, no degraded mark', async () => {
      const ctx = await setup();
      await ctx.stores.applications.updateApplication(ctx.application.id, {
        spec: { ...ctx.application.spec, selfHeal: true },
      });
      const reconciler = ReconcileWorker.create({
        stores: ctx.stores,
        applier: ManifestApplier.create({ clients: ctx.clients }),
        deployments: ctx.deployments,
        logger: ctx.logger,
        deploy: { namespace },
        reconcile: { intervalMs: 60_000, concurrency: 4 },
        heldDeployments: () => ctx.orchestrator.heldDeployments(),
      });
      const started = await ctx.releases.release(
        ctx.application.id,
        {
          image: NEW,
          clusters: ['pl-1'],
          strategy: strategy({
            waves: undefined,
            canary: { steps: [{ setWeight: 60 }, { pause: {} }] },
          }),
        },
        'user:default/ada',
      );
      await runUntil(
        ctx,
        started.id,
        r => r.progress!.clusters[0].awaitingPromote === true,
      );
      const stableReplicas = () =>
        (
          objects('pl-1').find(
            o =>
              o.kind === 'Deployment' &&
              (o.metadata as any).name === 'payments',
          ) as any
        ).spec.replicas;
      expect(stableReplicas()).toBe(2);
      const summary = await reconciler.runOnce();
      expect(summary.healed).toBe(0);
      expect(stableReplicas()).toBe(2);
      const d = (await ctx.stores.deployments.getDeploymentFor(
        ctx.application.id,
        'pl-1',
      ))!;
      expect(d).toMatchObject({ status: 'DEPLOYED', revision: 1 });

      // Once the release is done with it, the reconcile looks after it again.
      await ctx.releases.steer(started.id, 'abort', 'user:default/ada');
      await runUntil(ctx, started.id, r => r.status === 'ROLLED_BACK');
      expect(await ctx.orchestrator.heldDeployments()).toEqual(new Set());
    });

    it('applies an abort on an OFFLINE cluster when it returns, and rolls the others back at once', async () => {
      const ctx = await setup();
      const started = await ctx.releases.release(
        ctx.application.id,
        {
          image: NEW,
          clusters: ['pl-1', 'pl-2'],
          strategy: strategy({
            waves: undefined,
            canary: {
              steps: [{ setWeight: 20 }, { pause: {} }, { setWeight: 100 }],
            },
          }),
        },
        'user:default/ada',
      );
      await runUntil(ctx, started.id, r =>
        r.progress!.clusters.every(c => c.awaitingPromote),
      );
      sim.setFault('pl-1', { mode: 'down' });
      for (let i = 0; i < 3; i++) await ctx.worker.runCycle();
      expect((await ctx.stores.clusters.getCluster('pl-1'))!.status).toBe(
        'OFFLINE',
      );

      await ctx.releases.steer(started.id, 'abort', 'user:default/grace');
      const waiting = await runUntil(ctx, started.id, r =>
        r.progress!.clusters.some(
          c => c.cluster === 'pl-2' && c.state === 'ROLLED_BACK',
        ),
      );
      expect(waiting.status).toBe('ABORTING');
      expect(
        waiting.progress!.clusters.find(c => c.cluster === 'pl-1'),
      ).toMatchObject({
        state: 'ROLLBACK_PENDING',
      });
      expect(liveImage('pl-2')).toBe(OLD);
      for (let i = 0; i < 5; i++) await ctx.orchestrator.tick();
      expect((await ctx.releases.getRelease(started.id)).status).toBe(
        'ABORTING',
      );

      sim.setFault('pl-1', { mode: 'ok' });
      await ctx.worker.runCycle();
      expect((await ctx.stores.clusters.getCluster('pl-1'))!.status).toBe(
        'ONLINE',
      );
      const done = await runUntil(
        ctx,
        started.id,
        r => r.status === 'ROLLED_BACK',
      );
      expect(done.progress!.clusters.map(c => c.state)).toEqual([
        'ROLLED_BACK',
        'ROLLED_BACK',
      ]);
      expect(liveImage('pl-1')).toBe(OLD);
      expect(canaryLeft('pl-1')).toEqual([]);
      const events = await ctx.stores.events.listEvents({
        subjectKind: 'release',
        subject: started.id,
        limit: 100,
      });
      expect(
        events.some(
          e =>
            e.reason === 'ROLLBACK_RESUMED' &&
            e.message?.startsWith('pl-1 is ONLINE again'),
        ),
      ).toBe(true);
    });

    /** The release's events, oldest first. */
    async function eventsOf(ctx: { stores: FleetStores }, id: string) {
      const events = await ctx.stores.events.listEvents({
        subjectKind: 'release',
        subject: id,
        limit: 500,
      });
      return [...events].reverse();
    }

    /** A release of pl-1 alone (one wave), by `strategy()`'s analysis. */
    const releaseOnPl1 = (ctx: Awaited<ReturnType<typeof setup>>) =>
      ctx.releases.release(
        ctx.application.id,
        {
          image: NEW,
          clusters: ['pl-1'],
          strategy: strategy({ waves: [{ clusters: ['pl-1'] }] }),
        },
        'user:default/ada',
      );

    it('with Prometheus down for 3 measurements, then back: errors within consecutiveErrorLimit, no abort', async () => {
      const ctx = await setup();
      // Prometheus is down for the first three measurements, whenever the ticks take them.
      let measurements = 0;
      const orchestrator = ctx.makeOrchestrator({
        measure: (template, context, options) => {
          measurements += 1;
          sim.setPrometheusFault(measurements <= 3 ? 'down' : 'ok');
          return measurePrometheus(template, context, options);
        },
      });
      const started = await releaseOnPl1(ctx);
      const done = await runUntil(
        { orchestrator, releases: ctx.releases },
        started.id,
        r => r.status !== 'PROGRESSING',
      );
      // With the abort, if any: a failure says why.
      expect({
        status: done.status,
        abort: done.progress?.abort ?? undefined,
      }).toEqual({
        status: 'COMPLETED',
        abort: undefined,
      });
      expect(done.progress!.abort ?? null).toBeNull();
      expect(liveImage('pl-1')).toBe(NEW);
      const events = await eventsOf(ctx, started.id);
      expect(
        events.filter(e => e.reason === 'ANALYSIS_ERROR').map(e => e.message),
      ).toEqual([
        'success-rate on pl-1: could not be measured (unreachable; 1 in a row, limit 4)',
        'success-rate on pl-1: could not be measured (unreachable; 2 in a row, limit 4)',
        'success-rate on pl-1: could not be measured (unreachable; 3 in a row, limit 4)',
      ]);
      expect(done.progress!.analysis).toEqual([
        expect.objectContaining({ cluster: 'pl-1', phase: 'Successful' }),
      ]);
    });

    it('with Prometheus down for 5 measurements: abort past consecutiveErrorLimit (4), never a promotion', async () => {
      const ctx = await setup();
      sim.setPrometheusFault('down');
      const started = await releaseOnPl1(ctx);
      const done = await runUntil(
        ctx,
        started.id,
        r => r.status === 'ROLLED_BACK' || r.status === 'COMPLETED',
      );
      expect(done.status).toBe('ROLLED_BACK');
      expect(done.progress!.abort).toMatchObject({
        reason: 'ANALYSIS_FAILED',
        cluster: 'pl-1',
        metric: 'success-rate',
        message:
          'Analysis success-rate on pl-1 could not be measured 5 times in a row (limit 4): unreachable',
      });
      const events = await eventsOf(ctx, started.id);
      expect(events.filter(e => e.reason === 'ANALYSIS_ERROR')).toHaveLength(5);
      expect(events.some(e => e.reason === 'ANALYSIS_INCONCLUSIVE')).toBe(
        false,
      );
      expect(events.some(e => e.reason === 'CLUSTER_PROMOTED')).toBe(false);
      const d = (await ctx.stores.deployments.getDeploymentFor(
        ctx.application.id,
        'pl-1',
      ))!;
      expect(
        (await ctx.stores.revisions.listRevisions(d.id)).map(r => r.cause),
      ).toEqual(['rollback', 'deploy']);
      expect(liveImage('pl-1')).toBe(OLD);
    });

    it('pauses, never rolls back, on a metric with no data; resumed, it measures again and completes', async () => {
      const ctx = await setup();
      // No series matches the query: Prometheus answers an empty vector.
      sim.clearPrometheusRules();
      const started = await releaseOnPl1(ctx);
      const paused = await runUntil(
        ctx,
        started.id,
        r => r.status !== 'PROGRESSING',
      );
      expect(paused.status).toBe('PAUSED');
      expect(paused.progress).toMatchObject({
        phase: 'PAUSED',
        pausedBy: 'fleet-release',
        abort: null,
      });
      // failureLimit 1 is also the inconclusive limit: the second in a row pauses.
      const message =
        'Analysis success-rate on pl-1 was inconclusive 2 times in a row (limit 1): no value (no data); the release is paused: resume it to measure again, or abort it';
      const events = await eventsOf(ctx, started.id);
      expect(
        events
          .filter(e => e.reason === 'INCONCLUSIVE')
          .map(e => [e.message, e.to]),
      ).toEqual([[message, 'PAUSED']]);
      // Nothing goes back while it waits for a human, however many ticks pass.
      for (let i = 0; i < 5; i++) await ctx.orchestrator.tick();
      const still = await ctx.releases.getRelease(started.id);
      expect(still.status).toBe('PAUSED');
      expect(still.progress!.clusters[0].state).toBe('RUNNING');
      expect(canaryLeft('pl-1')).not.toEqual([]);

      sim.setPrometheusRule({ app: 'payments' }, 0.999);
      await ctx.releases.steer(started.id, 'resume', 'user:default/ada');
      const done = await runUntil(
        ctx,
        started.id,
        r => r.status !== 'PROGRESSING',
      );
      // With the abort, if any: a failure says why.
      expect({
        status: done.status,
        abort: done.progress?.abort ?? undefined,
      }).toEqual({
        status: 'COMPLETED',
        abort: undefined,
      });
      expect(liveImage('pl-1')).toBe(NEW);
      const after = await eventsOf(ctx, started.id);
      expect(after.filter(e => e.reason === 'INCONCLUSIVE')).toHaveLength(1);
      expect(after.some(e => e.to === 'ABORTING')).toBe(false);
    });

    it("gives a Rollout's AnalysisTemplate the template's consecutiveErrorLimit", async () => {
      const ctx = await setup();
      const base = strategy().analysis!.templates[0];
      const started = await ctx.releases.release(
        ctx.application.id,
        {
          image: NEW,
          clusters: ['ro-1'],
          strategy: strategy({
            waves: [{ clusters: ['ro-1'] }],
            analysis: { templates: [{ ...base, consecutiveErrorLimit: 6 }] },
          }),
        },
        'user:default/ada',
      );
      const analysisTemplate = () =>
        objects('ro-1').find(o => o.kind === 'AnalysisTemplate') as any;
      await runUntil(ctx, started.id, () => analysisTemplate() !== undefined);
      expect(analysisTemplate().spec.metrics).toEqual([
        expect.objectContaining({
          name: 'success-rate',
          failureLimit: 1,
          consecutiveErrorLimit: 6,
        }),
      ]);
      await ctx.releases.steer(started.id, 'abort', 'user:default/ada');
      await runUntil(ctx, started.id, r => r.status === 'ROLLED_BACK');
    });

    it('counts a measurement that rejects as an error: abort past consecutiveErrorLimit, its text only logged', async () => {
      const ctx = await setup();
      const orchestrator = ctx.makeOrchestrator({
        measure: async () => {
          throw new Error('socket hang up at metrics.internal, key k-77');
        },
      });
      const started = await releaseOnPl1(ctx);
      const done = await runUntil(
        { orchestrator, releases: ctx.releases },
        started.id,
        r => r.status === 'ROLLED_BACK' || r.status === 'COMPLETED',
      );
      expect(done.status).toBe('ROLLED_BACK');
      expect(done.progress!.abort).toMatchObject({
        reason: 'ANALYSIS_FAILED',
        cluster: 'pl-1',
        metric: 'success-rate',
        message:
          'Analysis success-rate on pl-1 could not be measured 5 times in a row (limit 4): error',
      });
      expect(JSON.stringify(done)).not.toContain('k-77');
      expect(ctx.logger.warn).toHaveBeenCalledWith(
        `Release ${started.id}: success-rate on pl-1 could not be measured: socket hang up at metrics.internal, key k-77`,
      );
    });
  },
);
