/*
 * What the simulator says of a mesh and of a cluster's version, through the real client: a
 * VirtualService's traffic spread over the pods its Services and DestinationRule subsets select
 * (503 for a subset nothing defines), and a cluster below Kubernetes 1.30 refusing the `sleep`
 * lifecycle handler.
 */
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  VersionApi,
} from '@kubernetes/client-node';
import { request } from 'node:https';
import { KubeSimulator } from './KubeSimulator';
import { meshTraffic } from './meshTraffic';

let sim: KubeSimulator;

beforeAll(async () => {
  sim = await KubeSimulator.start({
    clusters: ['mesh', 'old'],
    readyDelayMs: 10,
    crds: { mesh: ['virtualservices.networking.istio.io'] },
    serverVersions: { old: 'v1.29.4' },
  });
});

afterAll(async () => {
  await sim?.stop();
});

function clients(name: string) {
  const kc = new KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath(name));
  return {
    apps: kc.makeApiClient(AppsV1Api),
    core: kc.makeApiClient(CoreV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    version: kc.makeApiClient(VersionApi),
  };
}

function deployment(
  name: string,
  labels: Record<string, string>,
  replicas: number,
  lifecycle?: object,
) {
  return {
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'app', image: 'app:1', lifecycle }] },
      },
    },
  };
}

function controlGet(path: string): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = request(`${sim.url}${path}`, { ca: sim.caPem }, res => {
      let text = '';
      res.on('data', c => {
        text += c;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

async function waitFor(check: () => boolean) {
  for (let i = 0; i < 400 && !check(); i++)
    await new Promise(r => setTimeout(r, 10));
  expect(check()).toBe(true);
}

describe('mesh traffic', () => {
  it('splits a route by its weights, each share over the ready pods its Service selects, and answers 503 for a subset no DestinationRule defines', async () => {
    const { apps, core, custom } = clients('mesh');
    const namespace = 'default';
    await apps.createNamespacedDeployment({
      namespace,
      body: deployment('web', { app: 'web', track: 'stable' }, 3),
    });
    await apps.createNamespacedDeployment({
      namespace,
      body: deployment('web-canary', { app: 'web', track: 'canary' }, 1),
    });
    for (const [name, selector] of [
      ['web', { app: 'web' }],
      ['web-canary', { app: 'web', track: 'canary' }],
    ] as const) {
      await core.createNamespacedService({
        namespace,
        body: { metadata: { name }, spec: { selector, ports: [{ port: 80 }] } },
      });
    }
    const istio = {
      group: 'networking.istio.io',
      version: 'v1beta1',
      namespace,
    };
    await custom.createNamespacedCustomObject({
      ...istio,
      plural: 'destinationrules',
      body: {
        apiVersion: 'networking.istio.io/v1beta1',
        kind: 'DestinationRule',
        metadata: { name: 'web' },
        spec: {
          host: 'web.default.svc.cluster.local',
          subsets: [{ name: 'stable', labels: { track: 'stable' } }],
        },
      },
    });
    await custom.createNamespacedCustomObject({
      ...istio,
      plural: 'virtualservices',
      body: {
        apiVersion: 'networking.istio.io/v1beta1',
        kind: 'VirtualService',
        metadata: { name: 'web' },
        spec: {
          hosts: ['web.example.com'],
          http: [
            {
              name: 'wide',
              route: [
                { destination: { host: 'web' }, weight: 80 },
                { destination: { host: 'web-canary' }, weight: 20 },
              ],
            },
            {
              name: 'subsets',
              route: [
                {
                  destination: { host: 'web', subset: 'stable' },
                  weight: 70,
                },
                {
                  destination: { host: 'web-canary', subset: 'stable' },
                  weight: 30,
                },
              ],
            },
          ],
        },
      },
    });
    const pods = () =>
      sim
        .objects('mesh')
        .filter(
          (o: any) =>
            o.kind === 'Pod' &&
            o.status?.conditions?.some(
              (c: any) => c.type === 'Ready' && c.status === 'True',
            ),
        );
    await waitFor(() => pods().length === 4);
    const canaryOf = (traffic: ReturnType<typeof meshTraffic>) =>
      Object.entries(traffic.pods)
        .filter(([pod]) => pod.startsWith('web-canary-'))
        .reduce((sum, [, share]) => sum + share, 0);

    // The wide Service selects the canary's pod too: 20 % + a quarter of 80 %.
    const wide = meshTraffic(sim.objects('mesh') as any, namespace, 'web');
    expect(wide.unavailable).toBe(0);
    expect(canaryOf(wide)).toBeCloseTo(0.4, 9);
    expect(Object.values(wide.pods).reduce((a, b) => a + b, 0)).toBeCloseTo(
      1,
      9,
    );

    const subsets = meshTraffic(
      sim.objects('mesh') as any,
      namespace,
      'web',
      'subsets',
    );
    expect(canaryOf(subsets)).toBe(0);
    expect(subsets.unavailable).toBeCloseTo(0.3, 9);
    expect(subsets.destinations[1].unavailable).toBe(
      'no DestinationRule defines subset stable of web-canary',
    );
    // The stable subset selects the three stable pods only.
    expect(Object.keys(subsets.pods)).toHaveLength(3);

    // The same over the control API, for a test or a demo in another process.
    const answer = await controlGet(
      '/clusters/mesh/_sim/traffic?namespace=default&virtualService=web&route=subsets',
    );
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual(JSON.parse(JSON.stringify(subsets)));
    expect(
      (await controlGet('/clusters/mesh/_sim/traffic?namespace=default'))
        .status,
    ).toBe(400);
  });
});

describe("Argo Rollouts' Istio traffic routing", () => {
  it('sets the weights of the routes to both Services at each step, and leaves a route without the canary alone', async () => {
    const { custom } = clients('mesh');
    sim.setCrd('mesh', 'rollouts.argoproj.io', true);
    const namespace = 'default';
    const istio = { group: 'networking.istio.io', version: 'v1', namespace };
    const route = (name: string, hosts: string[]) => ({
      name,
      route: hosts.map((host, i) => ({
        destination: { host },
        weight: i === 0 ? 100 : 0,
      })),
    });
    await custom.createNamespacedCustomObject({
      ...istio,
      plural: 'virtualservices',
      body: {
        apiVersion: 'networking.istio.io/v1',
        kind: 'VirtualService',
        metadata: { name: 'shop' },
        spec: {
          hosts: ['shop.example.com'],
          http: [
            route('primary', ['shop', 'shop-canary.default.svc.cluster.local']),
            route('other', ['shop']),
          ],
        },
      },
    });
    const argo = {
      group: 'argoproj.io',
      version: 'v1alpha1',
      namespace,
      plural: 'rollouts',
    };
    const template = (image: string) => ({
      metadata: { labels: { app: 'shop' } },
      spec: { containers: [{ name: 'app', image }] },
    });
    await custom.createNamespacedCustomObject({
      ...argo,
      body: {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Rollout',
        metadata: { name: 'shop' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'shop' } },
          template: template('shop:1'),
          strategy: {
            canary: {
              stableService: 'shop',
              canaryService: 'shop-canary',
              trafficRouting: {
                istio: { virtualService: { name: 'shop', routes: [] } },
              },
              steps: [{ setWeight: 20 }, { pause: {} }],
            },
          },
        },
      },
    });
    await custom.patchNamespacedCustomObject(
      {
        ...argo,
        name: 'shop',
        body: { spec: { template: template('shop:2') } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const weights = async () =>
      (
        (await custom.getNamespacedCustomObject({
          ...istio,
          plural: 'virtualservices',
          name: 'shop',
        })) as any
      ).spec.http.map((r: any) => r.route.map((d: any) => d.weight));
    const deadline = Date.now() + 30_000; // a loaded machine
    while ((await weights())[0][1] !== 20 && Date.now() < deadline) {
      await new Promise(r => setTimeout(r, 10));
    }
    expect(await weights()).toEqual([[80, 20], [100]]);
  });
});

describe('server version', () => {
  it('answers the version it serves, and below 1.30 refuses the sleep lifecycle handler but takes exec', async () => {
    const old = clients('old');
    expect((await old.version.getCode()).gitVersion).toBe('v1.29.4');
    expect((await clients('mesh').version.getCode()).gitVersion).toBe(
      'v1.30.0',
    );
    const sleep = { preStop: { sleep: { seconds: 5 } } };
    await expect(
      old.apps.createNamespacedDeployment({
        namespace: 'default',
        body: deployment('sleeper', { app: 'sleeper' }, 1, sleep),
      }),
    ).rejects.toMatchObject({
      code: 422,
      body: expect.stringContaining(
        'spec.template.spec.containers[0].lifecycle.preStop',
      ),
    });
    await old.apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('sleeper', { app: 'sleeper' }, 1, {
        preStop: { exec: { command: ['sleep', '5'] } },
      }),
    });
    // A 1.30 server takes the same sleep handler.
    await clients('mesh').apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('sleeper', { app: 'sleeper' }, 1, sleep),
    });
  });
});
