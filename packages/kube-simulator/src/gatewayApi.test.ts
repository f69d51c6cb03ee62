/*
 * Gateway API's HTTPRoute in the simulator, through the real client: served only once its CRD
 * is installed, checked against the published CRD's schema, and its rules' backend weights
 * spread over the pods their Services select.
 */
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
} from '@kubernetes/client-node';
import { request } from 'node:https';
import { KubeSimulator } from './KubeSimulator';
import { gatewayTraffic } from './gatewayTraffic';

let sim: KubeSimulator;

beforeAll(async () => {
  sim = await KubeSimulator.start({
    clusters: ['gw'],
    readyDelayMs: 10,
    crds: { gw: [] },
  });
});

afterAll(async () => {
  await sim?.stop();
});

function clients() {
  const kc = new KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath('gw'));
  return {
    apps: kc.makeApiClient(AppsV1Api),
    core: kc.makeApiClient(CoreV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
  };
}

const ROUTES = {
  group: 'gateway.networking.k8s.io',
  version: 'v1',
  namespace: 'default',
  plural: 'httproutes',
};

function route(backendRefs: object[]) {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'web' },
    spec: {
      parentRefs: [{ name: 'gateway' }],
      rules: [{ backendRefs }],
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

describe('Gateway API HTTPRoutes', () => {
  it('serves HTTPRoutes once the CRD is installed, and refuses one its schema refuses', async () => {
    const { custom } = clients();
    await expect(
      custom.createNamespacedCustomObject({
        ...ROUTES,
        body: route([{ name: 'web', port: 80 }]),
      }),
    ).rejects.toMatchObject({ code: 404 });
    sim.setCrd('gw', 'httproutes.gateway.networking.k8s.io', true);
    // The published schema bounds a weight to 0..1000000.
    await expect(
      custom.createNamespacedCustomObject({
        ...ROUTES,
        body: route([{ name: 'web', port: 80, weight: -1 }]),
      }),
    ).rejects.toMatchObject({ code: 422 });
    const created = await custom.createNamespacedCustomObject({
      ...ROUTES,
      body: route([{ name: 'web', port: 80, weight: 1 }]),
    });
    expect(created.spec.rules[0].backendRefs).toEqual([
      { name: 'web', port: 80, weight: 1 },
    ]);
    const read = await custom.getNamespacedCustomObject({
      ...ROUTES,
      name: 'web',
    });
    expect(read.metadata.generation).toBe(1);
  });

  it("splits a rule's requests by its backends' weights over the ready pods their Services select", async () => {
    sim.setCrd('gw', 'httproutes.gateway.networking.k8s.io', true);
    const { apps, core, custom } = clients();
    const namespace = 'default';
    for (const [name, labels, replicas] of [
      ['app', { app: 'app', track: 'stable' }, 3],
      ['app-canary', { app: 'app', track: 'canary' }, 1],
    ] as const) {
      await apps.createNamespacedDeployment({
        namespace,
        body: {
          metadata: { name },
          spec: {
            replicas,
            selector: { matchLabels: labels },
            template: {
              metadata: { labels },
              spec: { containers: [{ name: 'app', image: 'app:1' }] },
            },
          },
        },
      });
      await core.createNamespacedService({
        namespace,
        body: {
          metadata: { name },
          spec: { selector: labels, ports: [{ port: 80 }] },
        },
      });
    }
    await custom.createNamespacedCustomObject({
      ...ROUTES,
      body: {
        ...route([
          { name: 'app', port: 80, weight: 80 },
          { name: 'app-canary', port: 80, weight: 20 },
        ]),
        metadata: { name: 'app' },
      },
    });
    await waitFor(
      () =>
        sim
          .objects('gw')
          .filter(
            (o: any) =>
              o.kind === 'Pod' &&
              o.metadata.name.startsWith('app-') &&
              o.status?.conditions?.some(
                (c: any) => c.type === 'Ready' && c.status === 'True',
              ),
          ).length === 4,
    );
    const traffic = gatewayTraffic(sim.objects('gw') as any, namespace, 'app');
    expect(traffic.unavailable).toBe(0);
    const canary = Object.entries(traffic.pods)
      .filter(([pod]) => pod.startsWith('app-canary-'))
      .reduce((sum, [, share]) => sum + share, 0);
    expect(canary).toBeCloseTo(0.2, 9);
    expect(Object.keys(traffic.pods)).toHaveLength(4);

    // The same over the control API, for a test or a demo in another process.
    const answer = await controlGet(
      '/clusters/gw/_sim/traffic?namespace=default&httpRoute=app&rule=0',
    );
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual(JSON.parse(JSON.stringify(traffic)));
    expect(
      (
        await controlGet(
          '/clusters/gw/_sim/traffic?namespace=default&httpRoute=app&rule=1',
        )
      ).status,
    ).toBe(400);
  });
});
