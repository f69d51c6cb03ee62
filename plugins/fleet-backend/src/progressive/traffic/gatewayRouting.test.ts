import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { KubeconfigAccessPolicy } from '@cnp/plugin-fleet-node';
import type { FleetTrafficStepOutcome } from '@cnp/plugin-fleet-node';
import { gatewayTraffic, useSimulator } from '@cnp/kube-simulator';
import { ClusterClients } from '../../kubernetes/ClusterClients';
import { ManifestApplier } from '../../deploy/ManifestApplier';
import { buildManifests } from '../../deploy/manifests';
import { builtInTrafficProviders, TrafficProviders } from './TrafficProviders';
import type { CanaryTarget } from './canaryObjects';

jest.setTimeout(60_000);

const ROUTE_CRD = 'httproutes.gateway.networking.k8s.io';
const sim = useSimulator({
  clusters: ['gw', 'gw-rollouts'],
  readyDelayMs: 20,
  crds: { gw: [ROUTE_CRD], 'gw-rollouts': ['rollouts.argoproj.io', ROUTE_CRD] },
});
const ENTITY = 'component:default/payments';
const OTHER_TEAM = 'component:other/checkout';

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
const gateway = () =>
  builtInTrafficProviders({ requestTimeoutMs: 5_000 }).find(
    p => p.id === 'gateway-api',
  )!;

let tests = 0;

/** A namespace of its own, the stable revision running 4 replicas, and the canary's target. */
async function setup(cluster = 'gw') {
  tests += 1;
  const namespace = `gw-${tests}`;
  const name = 'payments';
  const cc = clients();
  const manifests = (image: string) =>
    buildManifests({
      name,
      entityRef: ENTITY,
      namespace,
      spec: { image, replicas: 4 },
      defaultReplicas: 4,
    });
  const stable = manifests('registry.example/payments:1.0.0');
  const applied = await ManifestApplier.create({ clients: cc }).apply(
    access(cluster),
    namespace,
    stable,
  );
  expect(applied.kind).toBe('applied');
  const traffic = TrafficProviders.create({
    clients: cc,
    providers: builtInTrafficProviders(),
  });
  const target: CanaryTarget = {
    cluster: traffic.cluster(access(cluster)),
    namespace,
    name,
    stable,
    canary: manifests('registry.example/payments:2.0.0'),
    stableRevision: 1,
    canaryRevision: 2,
    replicas: 4,
    maxSurge: 1,
    maxUnavailable: 0,
    weights: [20, 50, 100],
    gatewayAPI: { httpRoute: 'payments-route' },
  };
  return { namespace, target, traffic };
}

/** The HTTPRoute: rule 0 to the application's Service, rule 1 to another team's. */
async function createRoute(
  namespace: string,
  options: { owner?: string; mixed?: boolean } = {},
) {
  const kc = new KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath('gw'));
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
        annotations: { 'cnp.io/entity-ref': options.owner ?? ENTITY },
      },
      spec: {
        parentRefs: [{ name: 'shared-gateway', namespace: 'infra' }],
        hostnames: ['shop.example.com'],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/pay' } }],
            backendRefs: [
              { name: 'payments', port: 80 },
              ...(options.mixed ? [{ name: 'legacy-payments', port: 80 }] : []),
            ],
          },
          {
            matches: [{ path: { type: 'PathPrefix', value: '/cart' } }],
            backendRefs: [{ name: 'cart', port: 80 }],
          },
        ],
      },
    },
  });
}

const liveRoute = (namespace: string, cluster = 'gw') =>
  sim
    .objects(cluster)
    .find(
      (o: any) => o.kind === 'HTTPRoute' && o.metadata.namespace === namespace,
    ) as any;

const weights = (namespace: string, rule = 0) =>
  Object.fromEntries(
    liveRoute(namespace).spec.rules[rule].backendRefs.map((r: any) => [
      r.name,
      r.weight,
    ]),
  );

/** The part of rule 0's requests the canary's pods get. */
function canaryShare(namespace: string) {
  const traffic = gatewayTraffic(
    sim.objects('gw') as any,
    namespace,
    'payments-route',
  );
  const canary = Object.entries(traffic.pods)
    .filter(([pod]) => pod.startsWith('payments-canary-'))
    .reduce((sum, [, share]) => sum + share, 0);
  return { canary, unavailable: traffic.unavailable };
}

/** Asks again while the provider waits; the outcome once it does not. */
async function settle(
  call: () => Promise<FleetTrafficStepOutcome>,
  timeoutMs = 15_000,
): Promise<FleetTrafficStepOutcome> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const outcome = await call();
    if (outcome.kind !== 'waiting' || Date.now() > deadline) return outcome;
    await new Promise(r => setTimeout(r, 25));
  }
}

const strategy = {
  waves: [{ percent: 100 }],
  canary: {
    steps: [{ setWeight: 20 }],
    trafficRouting: { gatewayAPI: { httpRoute: 'payments-route' } },
  },
};

describe('Gateway API canaries', () => {
  it('is chosen where the strategy names an HTTPRoute, even where Argo Rollouts is served', async () => {
    const { target, traffic } = await setup('gw-rollouts');
    expect((await traffic.detect(target.cluster, strategy)).id).toBe(
      'gateway-api',
    );
    const { trafficRouting: _, ...plain } = strategy.canary;
    expect(
      (await traffic.detect(target.cluster, { ...strategy, canary: plain })).id,
    ).toBe('rollout');
  });

  it('splits the rule naming the Service 80/20 then 50/50, and back to the stable Service alone at completion', async () => {
    const { namespace, target } = await setup();
    await createRoute(namespace);
    const provider = gateway();
    expect(await provider.ownershipConflict(target)).toBeUndefined();
    for (const [weightIndex, weight] of [20, 50].entries()) {
      expect(
        await settle(() => provider.step(target, { weight, weightIndex })),
      ).toMatchObject({ kind: 'reached' });
      expect(weights(namespace)).toEqual({
        payments: 100 - weight,
        'payments-canary': weight,
      });
      // The other rule is someone else's traffic: never changed.
      expect(liveRoute(namespace).spec.rules[1].backendRefs).toEqual([
        { name: 'cart', port: 80 },
      ]);
    }
    // The stable Service selects the stable pods only: the canary gets its weight, exactly.
    const share = canaryShare(namespace);
    expect(share.unavailable).toBe(0);
    expect(share.canary).toBeCloseTo(0.5, 9);

    expect(
      await settle(() =>
        provider.trafficToStable(target, { cause: 'completion' }),
      ),
    ).toMatchObject({ kind: 'reached' });
    expect(weights(namespace)).toEqual({ payments: 100 });
    expect(await settle(() => provider.removeCanary(target))).toMatchObject({
      kind: 'reached',
    });
    const services = sim
      .objects('gw')
      .filter(
        (o: any) => o.kind === 'Service' && o.metadata.namespace === namespace,
      ) as any[];
    expect(services.map(s => [s.metadata.name, s.spec.selector])).toEqual([
      ['payments', { 'app.kubernetes.io/name': 'payments' }],
    ]);
    expect(canaryShare(namespace)).toEqual({ canary: 0, unavailable: 0 });
  });

  it('takes the weight back to the stable Service on abort', async () => {
    const { namespace, target } = await setup();
    await createRoute(namespace);
    const provider = gateway();
    expect(
      await settle(() => provider.step(target, { weight: 20, weightIndex: 0 })),
    ).toMatchObject({ kind: 'reached' });
    expect(weights(namespace)).toEqual({ payments: 80, 'payments-canary': 20 });
    expect(
      await settle(() =>
        provider.trafficToStable(target, { cause: 'rollback' }),
      ),
    ).toMatchObject({ kind: 'reached' });
    expect(weights(namespace)).toEqual({ payments: 100 });
    expect(canaryShare(namespace).canary).toBe(0);
  });

  it("refuses another team's route and leaves it untouched", async () => {
    const { namespace, target } = await setup();
    await createRoute(namespace, { owner: OTHER_TEAM });
    const before = liveRoute(namespace);
    const provider = gateway();
    expect(await provider.ownershipConflict(target)).toMatch(
      /OWNERSHIP_CONFLICT: HTTPRoute gw-\d+\/payments-route is not Fleet's to change \(it belongs to component:other\/checkout\)/,
    );
    const outcome = await settle(() =>
      provider.step(target, { weight: 20, weightIndex: 0 }),
    );
    expect(outcome).toMatchObject({
      kind: 'failed',
      reason: 'OWNERSHIP_CONFLICT',
    });
    expect(liveRoute(namespace)).toEqual(before);
  });

  it('refuses a rule that also sends to another Service, and leaves the route untouched', async () => {
    const { namespace, target } = await setup();
    await createRoute(namespace, { mixed: true });
    const before = liveRoute(namespace);
    const provider = gateway();
    expect(await provider.ownershipConflict(target)).toMatch(
      /rule 0 sends to Service legacy-payments besides the application's Service payments/,
    );
    expect(
      await settle(() => provider.step(target, { weight: 20, weightIndex: 0 })),
    ).toMatchObject({ kind: 'failed', reason: 'OWNERSHIP_CONFLICT' });
    expect(liveRoute(namespace)).toEqual(before);
  });
});
