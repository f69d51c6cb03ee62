import { mockServices } from '@backstage/backend-test-utils';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import type {
  Deployment,
  Release,
  ReleaseStrategy,
} from '@cnp/plugin-fleet-common';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import { createFleet } from '../testing/fleet';
import type { FleetStores } from '../database/types';
import { DeploymentService } from '../deploy/DeploymentService';
import { ManifestApplier } from '../deploy/ManifestApplier';
import { ManifestRemover } from '../deploy/ManifestRemover';
import {
  builtInTrafficProviders,
  TrafficProviders,
} from './traffic/TrafficProviders';
import { lookAlpha } from './judge/judgment';
import { queryRange, type QueryRange } from './judge/rangeQuery';
import { ReleaseOrchestrator } from './ReleaseOrchestrator';
import { ReleaseService } from './ReleaseService';

/*
 * The canary judged against its baseline, end to end on the simulator's clusters and its
 * Prometheus, whose range queries draw samples from the distributions each test sets: a
 * canary 30 % slower than its baseline fails, one equal to it within noise completes (with
 * replicas, and with Istio routes), as does one under Gateway API HTTPRoute weights with a
 * regression, a marginal score and a metric with no data pause.
 */

jest.setTimeout(120_000);

const databases = createTestDatabases();
const sim = useSimulator({
  clusters: ['pl-1', 'is-1', 'gw-1'],
  readyDelayMs: 60,
  prometheus: true,
  crds: { 'gw-1': ['httproutes.gateway.networking.k8s.io'] },
});

const ENTITY = 'component:default/payments';
const OLD = 'registry.example/payments:1.0.0';
const NEW = 'registry.example/payments:2.0.0';
const ISTIO_CRD = 'virtualservices.networking.istio.io';

/**
 * 40 samples a side at a 50 ms resolution: a window of about two seconds. A canary 30 % slower
 * (three standard deviations) is then failed at its first look with room to spare, the serial
 * correlation's estimate from that few points (erring high) and the release's shares counted.
 */
function strategy(
  cluster: string,
  compare: Record<string, unknown> = {},
): ReleaseStrategy {
  return {
    waves: [{ clusters: [cluster] }],
    canary: {
      steps: [
        { setWeight: 40 },
        { pause: { duration: '200ms' } },
        { setWeight: 100 },
      ],
      maxSurge: '25%',
      maxUnavailable: 0,
    },
    analysis: {
      templates: [
        {
          name: 'latency-p99',
          interval: '50ms',
          compare: {
            baseline: true,
            direction: 'increase',
            minSamples: 40,
            ...compare,
          },
          provider: {
            prometheus: {
              address: sim.prometheusUrl!,
              query:
                'histogram_quantile(0.99, rate(http_latency_bucket{app="{{app}}",cluster="{{cluster}}",variant="{{variant}}"}[1m]))',
            },
          },
        },
      ],
    },
    rollback: { enabled: true, timeout: '30s' },
  } as ReleaseStrategy;
}

const normal = (mean: number, seed: number) => ({
  distribution: { kind: 'normal' as const, mean, sd: 0.01 },
  seed,
});

describe.each(databases.eachSupportedId())(
  'canaries judged against a baseline (%s)',
  databaseId => {
    const services: DeploymentService[] = [];
    afterEach(() => Promise.all(services.splice(0).map(s => s.stop())));
    let namespace = '';
    let tests = 0;

    beforeEach(() => {
      for (const cluster of ['pl-1', 'is-1'])
        sim.setCrd(cluster, 'rollouts.argoproj.io', false);
      sim.setCrd('pl-1', ISTIO_CRD, false);
      sim.setCrd('is-1', ISTIO_CRD, true);
      sim.clearPrometheusRules();
      sim.setPrometheusFault('ok');
    });

    async function setup(cluster = 'pl-1', queryRangeImpl?: QueryRange) {
      tests += 1;
      namespace = `judge-${databaseId
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
          defaultReplicas: 4,
          progressDeadlineMs: 20_000,
          pollIntervalMs: 25,
        },
      });
      services.push(deployments);
      const listener = { releaseProgressed: jest.fn() };
      const orchestrator = ReleaseOrchestrator.create({
        listener,
        stores: harness.stores,
        deployments,
        traffic: TrafficProviders.create({
          clients: harness.clients,
          providers: builtInTrafficProviders(),
        }),
        logger: harness.logger,
        defaultReplicas: 4,
        namespace,
        analysisTimeoutMs: 2_000,
        queryRange: queryRangeImpl,
      });
      const releases = ReleaseService.create({
        stores: harness.stores,
        deployments,
      });
      const first = await deployments.deploy(
        { entityRef: ENTITY, cluster, image: OLD, replicas: 4 },
        'user:default/ada',
      );
      await settle(harness.stores, first.id);
      const application =
        (await harness.stores.applications.getApplicationByEntityRef(ENTITY))!;
      return {
        ...harness,
        deployments,
        releases,
        orchestrator,
        application,
        listener,
      };
    }

    async function settle(stores: FleetStores, id: string) {
      for (let i = 0; i < 800; i++) {
        const d: Deployment = (await stores.deployments.getDeployment(id))!;
        if (d.status !== 'PROGRESSING' && d.status !== 'PENDING') return d;
        await new Promise(r => setTimeout(r, 25));
      }
      throw new Error(`deployment ${id} did not settle`);
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

    async function createHttpRoute(cluster: string) {
      const kc = new KubeConfig();
      kc.loadFromFile(sim.kubeconfigPath(cluster));
      await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
        group: 'gateway.networking.k8s.io',
        version: 'v1',
        namespace,
        plural: 'httproutes',
        body: {
          apiVersion: 'gateway.networking.k8s.io/v1',
          kind: 'HTTPRoute',
          metadata: {
            name: 'payments-route',
            namespace,
            annotations: { 'cnp.io/entity-ref': ENTITY },
          },
          spec: {
            parentRefs: [{ name: 'shared-gateway', namespace: 'infra' }],
            rules: [{ backendRefs: [{ name: 'payments', port: 80 }] }],
          },
        },
      });
    }

    type Ctx = Awaited<ReturnType<typeof setup>>;

    /** Ticks the orchestrator until `done` holds; `each` sees every tick's release. */
    async function runUntil(
      ctx: Ctx,
      id: string,
      done: (r: Release) => boolean,
      each: (r: Release) => void = () => {},
    ): Promise<Release> {
      const deadline = Date.now() + 60_000;
      for (;;) {
        await ctx.orchestrator.tick();
        const release = await ctx.releases.getRelease(id);
        each(release);
        if (done(release)) return release;
        if (Date.now() > deadline) {
          throw new Error(
            `release did not get there: ${JSON.stringify(release.progress)}`,
          );
        }
        await new Promise(r => setTimeout(r, 30));
      }
    }

    const deploymentNamed = (cluster: string, name: string) =>
      sim
        .objects(cluster)
        .find(
          o =>
            o.kind === 'Deployment' &&
            (o.metadata as any).namespace === namespace &&
            (o.metadata as any).name === name,
        ) as any;
    const liveImage = (cluster: string) =>
      deploymentNamed(cluster, 'payments')?.spec.template.spec.containers[0]
        .image;

    const release = (ctx: Ctx, cluster: string, s: ReleaseStrategy) =>
      ctx.releases.release(
        ctx.application.id,
        { image: NEW, clusters: [cluster], strategy: s },
        'user:default/ada',
      );

    async function eventsOf(ctx: Ctx, id: string) {
      const events = await ctx.stores.events.listEvents({
        subjectKind: 'release',
        subject: id,
        limit: 500,
      });
      return [...events].reverse();
    }

    /** Records the baseline Deployment as each tick leaves it. */
    function baselineWatch() {
      const seen: Array<{ replicas: number; image: string; labels: any }> = [];
      return {
        seen,
        each: () => {
          const b = deploymentNamed('pl-1', 'payments-baseline');
          if (b)
            seen.push({
              replicas: b.spec.replicas,
              image: b.spec.template.spec.containers[0].image,
              labels: b.spec.template.metadata.labels,
            });
        },
      };
    }

    it('rolls back a canary 30 % slower than its baseline, naming the metric, the medians and p', async () => {
      sim.setPrometheusRule(
        { app: 'payments', variant: 'baseline' },
        normal(0.1, 3),
      );
      sim.setPrometheusRule(
        { app: 'payments', variant: 'canary' },
        normal(0.13, 3),
      );
      const ctx = await setup();
      const started = await release(ctx, 'pl-1', strategy('pl-1'));
      const watch = baselineWatch();
      const done = await runUntil(
        ctx,
        started.id,
        r => r.status === 'ROLLED_BACK' || r.status === 'COMPLETED',
        watch.each,
      );
      expect(done.status).toBe('ROLLED_BACK');
      expect(done.progress!.abort).toMatchObject({
        reason: 'ANALYSIS_FAILED',
        cluster: 'pl-1',
        metric: 'latency-p99',
      });
      expect(done.progress!.abort!.message).toMatch(
        /^Judged against the baseline, score 0: latency-p99 on pl-1: canary median 0\.1[23]\d vs baseline 0\.(09|10)\d \(p=(0\.\d{4}|\d\.\de-\d+), level (0\.\d{4}|\d\.\de-\d+)\), High$/,
      );
      const judgment = done.progress!.judgments!.at(-1)!;
      expect(judgment).toMatchObject({
        cluster: 'pl-1',
        stepIndex: 1,
        score: 0,
        verdict: 'Fail',
      });
      const metric = judgment.metrics[0];
      expect(metric).toMatchObject({ template: 'latency-p99', result: 'High' });
      expect(metric.canarySamples).toBeGreaterThanOrEqual(40);
      expect(metric.baselineSamples).toBeGreaterThanOrEqual(40);
      expect(metric.canaryMedian! - metric.baselineMedian!).toBeCloseTo(
        0.03,
        1,
      );
      // One cluster, one compared template, three steps and the completion: the release's
      // 0.05 shared by 4 sequences, and spent over the looks at the pause.
      const looks = done.progress!.clusters[0].judgmentLooks!;
      expect(looks).toMatchObject({ stepIndex: 1 });
      expect(looks.count).toBeGreaterThanOrEqual(1);
      expect(metric.alpha).toBeCloseTo(lookAlpha(0.05, looks.count, 4), 12);
      expect(metric.p!).toBeLessThan(metric.alpha!);
      // The baseline ran the stable revision beside the canary, at its size, then went.
      expect(watch.seen.length).toBeGreaterThan(0);
      expect(watch.seen.at(-1)).toMatchObject({
        replicas: 2,
        image: OLD,
        labels: expect.objectContaining({ 'cnp.io/track': 'baseline' }),
      });
      expect(deploymentNamed('pl-1', 'payments-baseline')).toBeUndefined();
      expect(deploymentNamed('pl-1', 'payments-canary')).toBeUndefined();
      expect(liveImage('pl-1')).toBe(OLD);
      const events = await eventsOf(ctx, started.id);
      expect(events.some(e => e.reason === 'JUDGMENT_FAILED')).toBe(true);
      expect(events.some(e => e.reason === 'CLUSTER_PROMOTED')).toBe(false);
      // Both sides were read over the step's window, at the template's resolution.
      const ranges = sim
        .prometheusQueries()
        .filter(q => q.includes('http_latency_bucket'));
      expect(ranges).toEqual(
        expect.arrayContaining([
          expect.stringContaining('variant="canary"'),
          expect.stringContaining('variant="baseline"'),
        ]),
      );
    });

    it('completes a canary equal to its baseline within noise, its baseline removed', async () => {
      sim.setPrometheusRule(
        { app: 'payments', variant: 'baseline' },
        normal(0.1, 5),
      );
      sim.setPrometheusRule(
        { app: 'payments', variant: 'canary' },
        normal(0.1, 5),
      );
      const windows: Array<{ stepMs: number; points: number }> = [];
      const ctx = await setup('pl-1', (tp, variant, context, window, o) => {
        windows.push({
          stepMs: window.stepMs,
          points:
            Math.floor((window.endMs - window.startMs) / window.stepMs) + 1,
        });
        return queryRange(tp, variant, context, window, o);
      });
      // A significance level this low makes a false alarm on equal samples all but impossible.
      const started = await release(
        ctx,
        'pl-1',
        strategy('pl-1', { alpha: 0.001 }),
      );
      const watch = baselineWatch();
      const done = await runUntil(
        ctx,
        started.id,
        r => r.status !== 'PROGRESSING',
        watch.each,
      );
      expect(done.status).toBe('COMPLETED');
      expect(liveImage('pl-1')).toBe(NEW);
      const judgments = done.progress!.judgments!;
      expect(judgments.length).toBeGreaterThan(0);
      expect(judgments.every(j => j.verdict === 'Pass')).toBe(true);
      // The pause step was judged before it ended, each look at a stricter level.
      expect(judgments.some(j => j.stepIndex === 1 && j.score === 100)).toBe(
        true,
      );
      const levels = judgments
        .filter(j => j.stepIndex === 1)
        .map(j => j.metrics[0].alpha);
      expect(levels).toEqual(
        levels.map((_, i) => expect.closeTo(lookAlpha(0.001, i + 1, 4), 12)),
      );
      expect(windows.every(w => w.stepMs === 50 && w.points >= 40)).toBe(true);
      // A judgment commits no status event: the component's release panel is told all the same.
      expect(ctx.listener.releaseProgressed).toHaveBeenCalledWith({
        releaseId: started.id,
        entityRef: ENTITY,
        phase: 'PROGRESSING',
      });
      expect(watch.seen.length).toBeGreaterThan(0);
      expect(watch.seen.every(b => b.image === OLD)).toBe(true);
      expect(deploymentNamed('pl-1', 'payments-baseline')).toBeUndefined();
      expect(deploymentNamed('pl-1', 'payments-canary')).toBeUndefined();
      // The application's Service never narrowed in the replicas mode: it selects by name.
      const service = sim
        .objects('pl-1')
        .find(
          o =>
            o.kind === 'Service' &&
            (o.metadata as any).namespace === namespace &&
            (o.metadata as any).name === 'payments',
        ) as any;
      expect(service.spec.selector['cnp.io/track']).toBeUndefined();
    });

    it('pauses, never rolls back, on a metric with no data', async () => {
      sim.setPrometheusRule(
        { app: 'payments', variant: 'baseline' },
        { distribution: { kind: 'none' } },
      );
      sim.setPrometheusRule(
        { app: 'payments', variant: 'canary' },
        { distribution: { kind: 'none' } },
      );
      const ctx = await setup();
      const started = await release(ctx, 'pl-1', strategy('pl-1'));
      const paused = await runUntil(
        ctx,
        started.id,
        r => r.status !== 'PROGRESSING',
      );
      expect(paused.status).toBe('PAUSED');
      expect(paused.progress).toMatchObject({
        pausedBy: 'fleet-release',
        abort: null,
      });
      expect(paused.progress!.judgments ?? []).toEqual([]);
      const events = await eventsOf(ctx, started.id);
      expect(
        events.filter(e => e.reason === 'INCONCLUSIVE').map(e => e.message),
      ).toEqual([
        'Analysis latency-p99 on pl-1 was inconclusive 1 times in a row (limit 0): no value (no data); the release is paused: resume it to measure again, or abort it',
      ]);
      expect(events.some(e => e.to === 'ABORTING')).toBe(false);
      // The baseline waits with the canary for a human.
      expect(deploymentNamed('pl-1', 'payments-baseline')).toBeDefined();
      await ctx.releases.steer(started.id, 'abort', 'user:default/ada');
      await runUntil(ctx, started.id, r => r.status === 'ROLLED_BACK');
      expect(deploymentNamed('pl-1', 'payments-baseline')).toBeUndefined();
    });

    it('pauses on a marginal score: one light metric of two worse, the heavy one equal', async () => {
      const side = (metric: string, variant: string) => ({
        app: 'payments',
        metric,
        variant,
      });
      sim.setPrometheusRule(side('latency', 'baseline'), normal(0.1, 7));
      sim.setPrometheusRule(side('latency', 'canary'), normal(0.13, 7));
      sim.setPrometheusRule(side('errors', 'baseline'), normal(0.1, 8));
      sim.setPrometheusRule(side('errors', 'canary'), normal(0.1, 8));
      const ctx = await setup();
      const s = strategy('pl-1');
      const [latency] = s.analysis!.templates;
      const query = (metric: string) =>
        `x{app="{{app}}",metric="${metric}",variant="{{variant}}"}`;
      s.analysis!.templates = [
        {
          ...latency,
          provider: {
            prometheus: {
              address: sim.prometheusUrl!,
              query: query('latency'),
            },
          },
        },
        {
          ...latency,
          name: 'error-rate',
          weight: 4,
          compare: { ...latency.compare!, alpha: 0.001 },
          provider: {
            prometheus: { address: sim.prometheusUrl!, query: query('errors') },
          },
        },
      ];
      const started = await release(ctx, 'pl-1', s);
      const paused = await runUntil(
        ctx,
        started.id,
        r => r.status !== 'PROGRESSING',
      );
      expect(paused.status).toBe('PAUSED');
      expect(paused.progress!.abort).toBeNull();
      expect(paused.progress!.judgments!.at(-1)).toMatchObject({
        score: 80,
        verdict: 'Marginal',
      });
      const events = await eventsOf(ctx, started.id);
      const pause = events.find(
        e =>
          e.reason === 'JUDGMENT_MARGINAL' &&
          e.to === 'PAUSED' &&
          e.from === 'PROGRESSING',
      );
      expect(pause?.message).toMatch(
        /^Judgment against the baseline on pl-1 at step 2 is marginal: score 80 \(passes at 95\): latency-p99 on pl-1: canary median .*, High; the release is paused/,
      );
      await ctx.releases.steer(started.id, 'abort', 'user:default/ada');
      await runUntil(ctx, started.id, r => r.status === 'ROLLED_BACK');
      expect(deploymentNamed('pl-1', 'payments-baseline')).toBeUndefined();
    });

    it('counts a read that fails as an error, never judging half the metrics', async () => {
      const ctx = await setup('pl-1', async () => ({
        kind: 'error',
        message: 'unreachable',
      }));
      const started = await release(ctx, 'pl-1', strategy('pl-1'));
      const done = await runUntil(
        ctx,
        started.id,
        r => r.status === 'ROLLED_BACK' || r.status === 'COMPLETED',
      );
      expect(done.progress!.abort).toMatchObject({
        reason: 'ANALYSIS_FAILED',
        message:
          'Analysis latency-p99 on pl-1 could not be measured 5 times in a row (limit 4): unreachable',
      });
      expect(done.progress!.judgments ?? []).toEqual([]);
    });

    it("routes the baseline the canary's share under Istio, then the routes go back and it goes", async () => {
      sim.setPrometheusRule(
        { app: 'payments', variant: 'baseline' },
        normal(0.1, 9),
      );
      sim.setPrometheusRule(
        { app: 'payments', variant: 'canary' },
        normal(0.1, 9),
      );
      const ctx = await setup('is-1');
      await createVirtualService('is-1');
      const s = strategy('is-1', { alpha: 0.001 });
      s.canary.trafficRouting = {
        istio: { virtualService: { name: 'payments-vs', routes: ['primary'] } },
      };
      const started = await release(ctx, 'is-1', s);
      const routes: string[] = [];
      const done = await runUntil(
        ctx,
        started.id,
        r => r.status !== 'PROGRESSING',
        () => {
          const vs = sim
            .objects('is-1')
            .find(
              o =>
                o.kind === 'VirtualService' &&
                (o.metadata as any).namespace === namespace,
            ) as any;
          const text = vs.spec.http[0].route
            .map((r: any) => `${r.destination.host}=${r.weight ?? ''}`)
            .join(' ');
          if (routes.at(-1) !== text) routes.push(text);
        },
      );
      expect(done.status).toBe('COMPLETED');
      expect(routes).toContain(
        'payments=20 payments-canary=40 payments-baseline=40',
      );
      expect(routes.at(-1)).toBe('payments=100');
      expect(done.progress!.judgments!.some(j => j.verdict === 'Pass')).toBe(
        true,
      );
      const left = sim
        .objects('is-1')
        .filter(
          o =>
            (o.metadata as any).namespace === namespace &&
            /-(baseline|canary)$/.test((o.metadata as any).name),
        );
      expect(left).toEqual([]);
    });

    it("rolls back a canary 30 % slower under Gateway API, the baseline given the canary's share", async () => {
      sim.setPrometheusRule(
        { app: 'payments', variant: 'baseline' },
        normal(0.1, 5),
      );
      sim.setPrometheusRule(
        { app: 'payments', variant: 'canary' },
        normal(0.13, 5),
      );
      const ctx = await setup('gw-1');
      await createHttpRoute('gw-1');
      const s = strategy('gw-1');
      s.canary.trafficRouting = {
        gatewayAPI: { httpRoute: 'payments-route' },
      };
      const started = await release(ctx, 'gw-1', s);
      const done = await runUntil(
        ctx,
        started.id,
        r => r.status === 'ROLLED_BACK' || r.status === 'COMPLETED',
      );
      expect(done.status).toBe('ROLLED_BACK');
      expect(done.progress!.clusters[0].mode).toBe('gateway-api');
      expect(done.progress!.abort).toMatchObject({
        reason: 'ANALYSIS_FAILED',
        cluster: 'gw-1',
        metric: 'latency-p99',
      });
      expect(done.progress!.abort!.message).toMatch(
        /latency-p99 on gw-1: canary median 0\.1[23]\d vs baseline 0\.(09|10)\d \(p=.+\), High$/,
      );
      const weights = sim
        .history('gw-1', { kind: 'HTTPRoute', namespace })
        .filter(h => h.verb !== 'create')
        .map(h =>
          (h.object as any).spec.rules[0].backendRefs
            .map((b: any) => `${b.name}=${b.weight}`)
            .join(' '),
        );
      expect(weights).toEqual([
        'payments=20 payments-canary=40 payments-baseline=40',
        'payments=100',
      ]);
      const left = sim
        .objects('gw-1')
        .filter(
          o =>
            (o.metadata as any).namespace === namespace &&
            /-(baseline|canary)$/.test((o.metadata as any).name),
        );
      expect(left).toEqual([]);
      expect(liveImage('gw-1')).toBe(OLD);
    });

    it('refuses to judge a canary a Rollout would steer: its baseline would take no traffic', async () => {
      const ctx = await setup();
      sim.setCrd('pl-1', 'rollouts.argoproj.io', true);
      const started = await release(ctx, 'pl-1', strategy('pl-1'));
      const done = await runUntil(
        ctx,
        started.id,
        r => r.status === 'ROLLED_BACK' || r.status === 'COMPLETED',
      );
      expect(done.progress!.abort).toMatchObject({
        reason: 'STEP_FAILED',
        cluster: 'pl-1',
        message:
          'pl-1: a canary judged against a baseline runs with a canary Deployment (replicas), Istio route weights or Gateway API backend weights only, and this cluster would steer it through an Argo Rollout',
      });
      expect(deploymentNamed('pl-1', 'payments-baseline')).toBeUndefined();
    });
  },
);
