/*
 * Secrets and Ingresses through the real @kubernetes/client-node 1.4.0, and the root-served
 * cluster that in-cluster config reaches.
 */
import {
  ApiException,
  CoreV1Api,
  KubeConfig,
  NetworkingV1Api,
  PatchStrategy,
  setHeaderOptions,
  V1Ingress,
} from '@kubernetes/client-node';
import { request } from 'node:https';
import { KubeSimulator } from './KubeSimulator';

let sim: KubeSimulator;

beforeAll(async () => {
  sim = await KubeSimulator.start({
    clusters: ['hub', 'edge'],
    rootCluster: 'hub',
  });
});

afterAll(async () => {
  await sim?.stop();
});

function kubeConfig(name: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath(name));
  return kc;
}

async function status(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
    return 200;
  } catch (error) {
    if (error instanceof ApiException) return error.code;
    throw error;
  }
}

const b64 = (text: string) => Buffer.from(text).toString('base64');

describe('Secrets', () => {
  const core = () => kubeConfig('hub').makeApiClient(CoreV1Api);

  it('stores data, merges stringData into data, defaults the type, and has no status', async () => {
    const created = await core().createNamespacedSecret({
      namespace: 'default',
      body: {
        metadata: { name: 'kc-one', labels: { 'cnp.io/kubeconfig': 'true' } },
        data: { a: b64('alpha') },
        stringData: { b: 'beta', a: 'wins' },
      },
    });
    expect(created.type).toBe('Opaque');
    expect(created.data).toEqual({ a: b64('wins'), b: b64('beta') });
    expect(created.stringData).toBeUndefined();
    expect(created.metadata?.resourceVersion).toBeTruthy();
    const raw = sim
      .objects('hub')
      .find(o => o.kind === 'Secret' && o.metadata.name === 'kc-one');
    expect(raw).toBeDefined();
    expect((raw as unknown as Record<string, unknown>).status).toBeUndefined();
    const read = await core().readNamespacedSecret({
      name: 'kc-one',
      namespace: 'default',
    });
    expect(Buffer.from(read.data!.b, 'base64').toString()).toBe('beta');
  });

  it('answers 409 on a second create and 404 for a missing one', async () => {
    const body = { metadata: { name: 'kc-dup' }, stringData: { k: 'v' } };
    await core().createNamespacedSecret({ namespace: 'default', body });
    expect(
      await status(
        core().createNamespacedSecret({ namespace: 'default', body }),
      ),
    ).toBe(409);
    expect(
      await status(
        core().readNamespacedSecret({ name: 'nope', namespace: 'default' }),
      ),
    ).toBe(404);
    expect(
      await status(
        core().deleteNamespacedSecret({ name: 'nope', namespace: 'default' }),
      ),
    ).toBe(404);
  });

  it('lists by label selector, across namespaces too', async () => {
    await core().createNamespace({
      body: { metadata: { name: 'fleet-system' } },
    });
    await core().createNamespacedSecret({
      namespace: 'fleet-system',
      body: {
        metadata: { name: 'kc-two', labels: { 'cnp.io/kubeconfig': 'true' } },
        stringData: { kubeconfig: 'x' },
      },
    });
    await core().createNamespacedSecret({
      namespace: 'fleet-system',
      body: { metadata: { name: 'other' }, stringData: { k: 'v' } },
    });
    const all = await core().listSecretForAllNamespaces({
      labelSelector: 'cnp.io/kubeconfig=true',
    });
    expect(
      all.items.map(s => `${s.metadata?.namespace}/${s.metadata?.name}`).sort(),
    ).toEqual(['default/kc-one', 'fleet-system/kc-two']);
    const one = await core().listNamespacedSecret({
      namespace: 'fleet-system',
      labelSelector: 'cnp.io/kubeconfig',
    });
    expect(one.items.map(s => s.metadata?.name)).toEqual(['kc-two']);
  });

  it('patches (merge and strategic), bumping resourceVersion, and deletes', async () => {
    const before = await core().readNamespacedSecret({
      name: 'kc-one',
      namespace: 'default',
    });
    const patched = await core().patchNamespacedSecret(
      {
        name: 'kc-one',
        namespace: 'default',
        body: { stringData: { c: 'gamma' } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    expect(Object.keys(patched.data!).sort()).toEqual(['a', 'b', 'c']);
    expect(patched.metadata?.resourceVersion).not.toBe(
      before.metadata?.resourceVersion,
    );
    const removed = await core().patchNamespacedSecret(
      { name: 'kc-one', namespace: 'default', body: { data: { c: null } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(Object.keys(removed.data!).sort()).toEqual(['a', 'b']);
    await core().deleteNamespacedSecret({
      name: 'kc-dup',
      namespace: 'default',
    });
    expect(
      await status(
        core().readNamespacedSecret({ name: 'kc-dup', namespace: 'default' }),
      ),
    ).toBe(404);
  });

  it('refuses data that is not base64 (400), bad keys and a type change (422)', async () => {
    const raw = (body: unknown) =>
      fetchSim('POST', '/api/v1/namespaces/default/secrets', body);
    const notBase64 = await raw({
      metadata: { name: 'bad64' },
      data: { k: 'not base64!' },
    });
    expect(notBase64.status).toBe(400);
    expect(notBase64.text).not.toContain('not base64!');
    expect(
      await status(
        core().createNamespacedSecret({
          namespace: 'default',
          body: { metadata: { name: 'badkey' }, stringData: { 'a/b': 'v' } },
        }),
      ),
    ).toBe(422);
    expect(
      await status(
        core().patchNamespacedSecret(
          {
            name: 'kc-one',
            namespace: 'default',
            body: { type: 'kubernetes.io/tls' },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      ),
    ).toBe(422);
  });

  it('keeps the data of an immutable Secret', async () => {
    await core().createNamespacedSecret({
      namespace: 'default',
      body: {
        metadata: { name: 'frozen' },
        immutable: true,
        stringData: { k: 'v' },
      },
    });
    expect(
      await status(
        core().patchNamespacedSecret(
          {
            name: 'frozen',
            namespace: 'default',
            body: { stringData: { k: 'w' } },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      ),
    ).toBe(422);
  });
});

describe('Ingresses', () => {
  const net = () => kubeConfig('edge').makeApiClient(NetworkingV1Api);
  const ingress = (host: string): V1Ingress => ({
    metadata: { name: 'web' },
    spec: {
      ingressClassName: 'nginx',
      rules: [
        {
          host,
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name: 'web', port: { number: 80 } } },
              },
            ],
          },
        },
      ],
      tls: [{ hosts: [host], secretName: 'web-tls' }],
    },
  });

  it('creates, reads, lists, patches (generation moves) and deletes', async () => {
    const created = await net().createNamespacedIngress({
      namespace: 'default',
      body: ingress('web.example.com'),
    });
    expect(created.metadata?.generation).toBe(1);
    expect(created.status).toEqual({ loadBalancer: {} });
    expect(
      await status(
        net().createNamespacedIngress({
          namespace: 'default',
          body: ingress('web.example.com'),
        }),
      ),
    ).toBe(409);
    const patched = await net().patchNamespacedIngress(
      {
        name: 'web',
        namespace: 'default',
        body: { spec: { ingressClassName: 'alb' } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(patched.metadata?.generation).toBe(2);
    expect(patched.spec?.rules?.[0].host).toBe('web.example.com');
    const list = await net().listNamespacedIngress({ namespace: 'default' });
    expect(list.items.map(i => i.metadata?.name)).toEqual(['web']);
    await net().deleteNamespacedIngress({ name: 'web', namespace: 'default' });
    expect(
      await status(
        net().readNamespacedIngress({ name: 'web', namespace: 'default' }),
      ),
    ).toBe(404);
  });

  it('refuses a bad host, a path without pathType, and an empty spec (422)', async () => {
    expect(
      await status(
        net().createNamespacedIngress({
          namespace: 'default',
          body: ingress('Not_A_Host'),
        }),
      ),
    ).toBe(422);
    const noType = ingress('ok.example.com');
    (noType.spec!.rules![0].http!.paths[0] as { pathType?: string }).pathType =
      undefined;
    expect(
      await status(
        net().createNamespacedIngress({ namespace: 'default', body: noType }),
      ),
    ).toBe(422);
    expect(
      await status(
        net().createNamespacedIngress({
          namespace: 'default',
          body: { metadata: { name: 'empty' }, spec: {} },
        }),
      ),
    ).toBe(422);
  });

  it('is in discovery under networking.k8s.io/v1', async () => {
    const res = await fetchSim(
      'GET',
      '/apis/networking.k8s.io/v1',
      undefined,
      'edge',
    );
    expect(res.status).toBe(200);
    expect(
      JSON.parse(res.text).resources.map((r: { name: string }) => r.name),
    ).toContain('ingresses');
  });
});

describe('rootCluster', () => {
  it('serves the root cluster at the listener root, with its token and objects', async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'root', server: sim.url, caData: b64(sim.caPem) }],
      users: [{ name: 'u', token: sim.token('hub') }],
      contexts: [{ name: 'c', cluster: 'root', user: 'u' }],
      currentContext: 'c',
    });
    const secrets = await kc
      .makeApiClient(CoreV1Api)
      .listNamespacedSecret({ namespace: 'fleet-system' });
    expect(secrets.items.map(s => s.metadata?.name).sort()).toEqual([
      'kc-two',
      'other',
    ]);
    const wrongToken = new KubeConfig();
    wrongToken.loadFromOptions({
      clusters: [{ name: 'root', server: sim.url, caData: b64(sim.caPem) }],
      users: [{ name: 'u', token: sim.token('edge') }],
      contexts: [{ name: 'c', cluster: 'root', user: 'u' }],
      currentContext: 'c',
    });
    expect(
      await status(wrongToken.makeApiClient(CoreV1Api).listNamespace()),
    ).toBe(401);
  });

  it('must name one of the clusters', async () => {
    await expect(
      KubeSimulator.start({ clusters: ['a'], rootCluster: 'b' }),
    ).rejects.toThrow(/rootCluster "b"/);
  });
});

/** A raw request to a cluster of the simulator, for bodies client-node would not send. */
async function fetchSim(
  method: string,
  path: string,
  body: unknown,
  cluster = 'hub',
): Promise<{ status: number; text: string }> {
  return new Promise((done, fail) => {
    const req = request(
      `${sim.endpoint(cluster)}${path}`,
      {
        method,
        ca: sim.caPem,
        headers: {
          authorization: `Bearer ${sim.token(cluster)}`,
          'content-type': 'application/json',
        },
      },
      res => {
        const chunks: Buffer[] = [];
        res.on('data', c => chunks.push(c));
        res.on('end', () =>
          done({
            status: res.statusCode ?? 0,
            text: Buffer.concat(chunks).toString(),
          }),
        );
      },
    );
    req.on('error', fail);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}
