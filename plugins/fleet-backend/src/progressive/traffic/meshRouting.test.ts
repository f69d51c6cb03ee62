import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { KubeconfigAccessPolicy } from '@cnp/plugin-fleet-node';
import type { FleetTrafficStepOutcome } from '@cnp/plugin-fleet-node';
import { meshTraffic, useSimulator } from '@cnp/kube-simulator';
import { ClusterClients } from '../../kubernetes/ClusterClients';
import { ManifestApplier } from '../../deploy/ManifestApplier';
import { buildManifests } from '../../deploy/manifests';
import { builtInTrafficProviders, TrafficProviders } from './TrafficProviders';
import type { CanaryTarget } from './canaryObjects';

jest.setTimeout(60_000);

const VS_CRD = 'virtualservices.networking.istio.io';
const ROLLOUT_CRD = 'rollouts.argoproj.io';
const sim = useSimulator({
  clusters: ['mesh', 'both'],
  readyDelayMs: 20,
  crds: { mesh: [VS_CRD], both: [ROLLOUT_CRD, VS_CRD] },
});
const ENTITY = 'component:default/payments';
const OLD = 'registry.example/payments:1.0.0';
const NEW = 'registry.example/payments:2.0.0';

const clients = () =>
  ClusterClients.create({
    policy: KubeconfigAccessPolicy.create({ kubeconfigDir: sim.kubeconfigDir }),
  });
const access = (name: string) => ({
  name,
  endpoint: sim.endpoint(name),
  kubeconfigRef: sim.kubeconfigPath(name),
  source: 'discovered' as const,
});
const provider = (id: string) =>
  builtInTrafficProviders({ requestTimeoutMs: 5_000 }).find(p => p.id === id)!;

let tests = 0;

/** A namespace of its own, the stable revision running 4 replicas, and the canary's target. */
async function setup(
  cluster: string,
  options: { name?: string; canaryImage?: string } = {},
) {
  tests += 1;
  const namespace = `mesh-${tests}`;
  const name = options.name ?? 'payments';
  const cc = clients();
  const manifests = (image: string) =>
    buildManifests({
      name,
      entityRef: ENTITY,
      namespace,
      spec: { image, replicas: 4 },
      defaultReplicas: 4,
    });
  const stable = manifests(OLD);
  const applied = await ManifestApplier.create({ clients: cc }).apply(
    access(cluster),
    namespace,
    stable,
  );
  expect(applied.kind).toBe('applied');
  await until(() => readyPods(cluster, namespace, name).length === 4);
  const traffic = TrafficProviders.create({
    clients: cc,
    providers: builtInTrafficProviders(),
  });
  const target: CanaryTarget = {
    cluster: traffic.cluster(access(cluster)),
    namespace,
    name,
    stable,
    canary: manifests(options.canaryImage ?? NEW),
    stableRevision: 1,
    canaryRevision: 2,
    replicas: 4,
    maxSurge: 1,
    maxUnavailable: 0,
    weights: [10, 50, 100],
    istio: { virtualService: 'payments-vs', routes: ['primary'] },
  };
  return { namespace, name, target };
}

function readyPods(cluster: string, namespace: string, prefix: string) {
  return sim
    .objects(cluster)
    .filter(
      (o: any) =>
        o.kind === 'Pod' &&
        o.metadata.namespace === namespace &&
        o.metadata.name.startsWith(`${prefix}-`) &&
        o.status?.conditions?.some(
          (c: any) => c.type === 'Ready' && c.status === 'True',
        ),
    );
}

async function until(check: () => boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise(r => setTimeout(r, 20));
  }
}

/** Asks again while the provider waits; the outcome once it does not. */
async function settle(
  call: () => Promise<FleetTrafficStepOutcome>,
  timeoutMs = 10_000,
): Promise<FleetTrafficStepOutcome> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const outcome = await call();
    if (outcome.kind !== 'waiting' || Date.now() > deadline) return outcome;
    await new Promise(r => setTimeout(r, 25));
  }
}

async function createIstioObjects(
  cluster: string,
  namespace: string,
  destination: Record<string, unknown>,
  subsets?: Array<{ name: string; labels: Record<string, string> }>,
) {
  const kc = new KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath(cluster));
  const custom = kc.makeApiClient(CustomObjectsApi);
  const istio = { group: 'networking.istio.io', version: 'v1beta1', namespace };
  await custom.createNamespacedCustomObject({
    ...istio,
    plural: 'virtualservices',
    body: {
      apiVersion: 'networking.istio.io/v1beta1',
      kind: 'VirtualService',
      metadata: {
        name: 'payments-vs',
        namespace,
        annotations: { 'cnp.io/entity-ref': ENTITY },
      },
      spec: {
        hosts: ['payments.example.com'],
        http: [{ name: 'primary', route: [{ destination }] }],
      },
    },
  });
  if (!subsets) return;
  await custom.createNamespacedCustomObject({
    ...istio,
    plural: 'destinationrules',
    body: {
      apiVersion: 'networking.istio.io/v1beta1',
      kind: 'DestinationRule',
      metadata: { name: 'payments', namespace },
      spec: { host: destination.host, subsets },
    },
  });
}

/** The part of the route's requests the canary's pods get. */
function canaryShare(cluster: string, namespace: string, name: string) {
  const traffic = meshTraffic(
    sim.objects(cluster) as any,
    namespace,
    'payments-vs',
    'primary',
  );
  const canary = Object.entries(traffic.pods)
    .filter(([pod]) => pod.startsWith(`${name}-canary-`))
    .reduce((sum, [, share]) => sum + share, 0);
  return { canary, unavailable: traffic.unavailable, traffic };
}

function liveObject(cluster: string, namespace: string, kind: string) {
  return sim
    .objects(cluster)
    .filter(
      (o: any) => o.kind === kind && o.metadata.namespace === namespace,
    ) as any[];
}

describe('Istio canaries as the mesh routes them', () => {
  it('sends the canary its weight over 4 replicas: 10 % at weight 10, none at weight 0', async () => {
    const { namespace, name, target } = await setup('mesh');
    await createIstioObjects('mesh', namespace, {
      host: 'payments',
      port: { number: 80 },
    });
    const istio = provider('istio');
    const step = await settle(() =>
      istio.step(target, { weight: 10, weightIndex: 0 }),
    );
    expect(step).toMatchObject({ kind: 'reached' });
    await until(
      () => readyPods('mesh', namespace, `${name}-canary`).length > 0,
    );
    // Each destination's share is spread evenly over the ready pods its Service selects:
    // exact, so the tolerance is rounding only.
    const at10 = canaryShare('mesh', namespace, name);
    expect(at10.unavailable).toBe(0);
    expect(at10.canary).toBeCloseTo(0.1, 9);

    const back = await settle(() =>
      istio.trafficToStable(target, { cause: 'rollback' }),
    );
    expect(back).toMatchObject({ kind: 'reached' });
    const at0 = canaryShare('mesh', namespace, name);
    expect(at0.canary).toBe(0);
    expect(at0.unavailable).toBe(0);

    expect(await settle(() => istio.removeCanary(target))).toMatchObject({
      kind: 'reached',
    });
    // The Service selects every pod of the application again, as it did before the canary.
    const service = liveObject('mesh', namespace, 'Service').find(
      s => s.metadata.name === 'payments',
    );
    expect(service.spec.selector).toEqual({
      'app.kubernetes.io/name': 'payments',
    });
    expect(canaryShare('mesh', namespace, name).unavailable).toBe(0);
  });

  it("keeps a subset-based route working: the stable destination as written, the canary's without the subset", async () => {
    const { namespace, name, target } = await setup('mesh');
    const host = `payments.${namespace}.svc.cluster.local`;
    await createIstioObjects(
      'mesh',
      namespace,
      { host, subset: 'v1', port: { number: 80 } },
      [{ name: 'v1', labels: { 'app.kubernetes.io/name': 'payments' } }],
    );
    const istio = provider('istio');
    expect(
      await settle(() => istio.step(target, { weight: 10, weightIndex: 0 })),
    ).toMatchObject({ kind: 'reached' });
    const vs = liveObject('mesh', namespace, 'VirtualService')[0];
    expect(vs.spec.http[0].route).toEqual([
      { destination: { host, subset: 'v1', port: { number: 80 } }, weight: 90 },
      {
        destination: {
          host: `payments-canary.${namespace}.svc.cluster.local`,
          port: { number: 80 },
        },
        weight: 10,
      },
    ]);
    const share = canaryShare('mesh', namespace, name);
    expect(share.traffic.destinations.map(d => d.unavailable)).toEqual([
      undefined,
      undefined,
    ]);
    expect(share.unavailable).toBe(0);
    expect(share.canary).toBeCloseTo(0.1, 9);
  });

  it('releases an application whose name has 63 characters', async () => {
    const name = `payments-${'x'.repeat(54)}`;
    expect(name).toHaveLength(63);
    const { namespace, target } = await setup('mesh', { name });
    await createIstioObjects('mesh', namespace, { host: name });
    const istio = provider('istio');
    for (const [weightIndex, weight] of [10, 50].entries()) {
      expect(
        await settle(() => istio.step(target, { weight, weightIndex })),
      ).toMatchObject({ kind: 'reached' });
    }
    const services = liveObject('mesh', namespace, 'Service').map(
      s => s.metadata.name,
    );
    expect(services).toHaveLength(2);
    for (const service of services) expect(service.length).toBeLessThan(64);
    expect(canaryShare('mesh', namespace, name).canary).toBeCloseTo(0.5, 9);
    expect(
      await settle(() =>
        istio.trafficToStable(target, { cause: 'completion' }),
      ),
    ).toMatchObject({ kind: 'reached' });
    expect(await settle(() => istio.removeCanary(target))).toMatchObject({
      kind: 'reached',
    });
    expect(liveObject('mesh', namespace, 'Service')).toHaveLength(1);
  });

  it("fails the step with the API server's reason when it refuses the canary, rather than waiting", async () => {
    const { namespace, target } = await setup('mesh');
    await createIstioObjects('mesh', namespace, { host: 'payments' });
    target.canary.deployment.spec!.template.spec!.containers[0].resources = {
      requests: { cpu: '2' },
      limits: { cpu: '1' },
    };
    const outcome = await provider('istio').step(target, {
      weight: 10,
      weightIndex: 0,
    });
    expect(outcome.kind).toBe('failed');
    expect(outcome.message).toMatch(
      /refused.*must be less than or equal to cpu limit/,
    );
  });

  it('gives the Rollout Istio traffic routing on a cluster that serves both Argo Rollouts and Istio', async () => {
    const { namespace, name, target } = await setup('both');
    await createIstioObjects('both', namespace, {
      host: 'payments',
      port: { number: 80 },
    });
    const rollout = provider('rollout');
    const traffic = TrafficProviders.create({
      clients: clients(),
      providers: builtInTrafficProviders(),
    });
    const detected = await traffic.detect(target.cluster, {
      waves: [{ percent: 100 }],
      canary: {
        steps: [{ setWeight: 10 }],
        trafficRouting: { istio: { virtualService: { name: 'payments-vs' } } },
      },
    });
    expect(detected.id).toBe('rollout');
    const routeWeights = () =>
      Object.fromEntries(
        liveObject(
          'both',
          namespace,
          'VirtualService',
        )[0].spec.http[0].route.map((r: any) => [r.destination.host, r.weight]),
      );
    // Argo Rollouts (simulated) sets the route weights at each step; once the canary is
    // promoted, everything goes to the stable Service, which now selects the new pods.
    const expected = [
      { payments: 90, 'payments-canary': 10 },
      { payments: 50, 'payments-canary': 50 },
      { payments: 100, 'payments-canary': 0 },
    ];
    for (const [weightIndex, weight] of target.weights.entries()) {
      expect(
        await settle(
          () => rollout.step(target, { weight, weightIndex }),
          20_000,
        ),
      ).toMatchObject({ kind: 'reached' });
      expect(routeWeights()).toEqual(expected[weightIndex]);
    }
    const written = liveObject('both', namespace, 'Rollout')[0];
    expect(written.spec.strategy.canary).toMatchObject({
      canaryService: 'payments-canary',
      stableService: 'payments',
      trafficRouting: {
        istio: {
          virtualService: { name: 'payments-vs', routes: ['primary'] },
        },
      },
    });
    // What Argo Rollouts needs to steer them: both Services, and a route to each of them.
    const services = liveObject('both', namespace, 'Service').map(
      s => s.metadata.name,
    );
    expect(services.sort()).toEqual(['payments', 'payments-canary']);
    const vs = liveObject('both', namespace, 'VirtualService')[0];
    expect(
      vs.spec.http[0].route.map((r: any) => r.destination.host).sort(),
    ).toEqual(['payments', 'payments-canary']);
    expect(name).toBe('payments');

    // Argo Rollouts narrowed the application's Service to the Rollout's stable pods; once the
    // Rollout goes, the Service must select the Deployment's pods again.
    const kc = new KubeConfig();
    kc.loadFromFile(sim.kubeconfigPath('both'));
    await kc.makeApiClient(CoreV1Api).patchNamespacedService(
      {
        namespace,
        name: 'payments',
        body: { spec: { selector: { 'rollouts-pod-template-hash': 'abc12' } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(await settle(() => rollout.removeCanary(target))).toMatchObject({
      kind: 'reached',
    });
    const service = liveObject('both', namespace, 'Service');
    expect(service.map(s => [s.metadata.name, s.spec.selector])).toEqual([
      ['payments', { 'app.kubernetes.io/name': 'payments' }],
    ]);
    expect(liveObject('both', namespace, 'Rollout')).toEqual([]);
  });
});
