/*
 * Progressive delivery end to end, through HTTPS and the real
 * @kubernetes/client-node: CRD switches, VirtualServices, a Rollout promoted
 * and aborted as kubectl argo rollouts does it, the write history and the
 * Prometheus query endpoint.
 */
import {
  ApiException,
  ApisApi,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { request as httpRequest } from 'node:http';
import { request } from 'node:https';
import { KubeSimulator } from './KubeSimulator';

let sim: KubeSimulator;

beforeAll(async () => {
  sim = await KubeSimulator.start({
    clusters: ['ro', 'mesh', 'bare'],
    readyDelayMs: 50,
    crds: {
      mesh: ['virtualservices.networking.istio.io'],
      bare: [],
    },
    prometheus: true,
  });
});

afterAll(async () => {
  await sim?.stop();
});

function custom(name: string) {
  const kc = new KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath(name));
  return {
    custom: kc.makeApiClient(CustomObjectsApi),
    apis: kc.makeApiClient(ApisApi),
  };
}

function call(
  url: string,
  method: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    let payload: string | undefined;
    if (typeof body === 'string') payload = body;
    else if (body !== undefined) payload = JSON.stringify(body);
    const send = url.startsWith('https:') ? request : httpRequest;
    const req = send(
      url,
      {
        method,
        ca: sim.caPem,
        headers: {
          ...(payload ? { 'Content-Type': 'application/json' } : {}),
          ...headers,
        },
      },
      res => {
        let text = '';
        res.on('data', c => {
          text += c;
        });
        res.on('end', () => {
          let json: any;
          try {
            json = JSON.parse(text);
          } catch {
            json = text;
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const control = (path: string, method = 'GET', body?: unknown) =>
  call(`${sim.url}${path}`, method, body);

async function statusOf(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
    return 200;
  } catch (e) {
    if (e instanceof ApiException) return e.code;
    throw e;
  }
}

async function until(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000; // a loaded machine
  while (Date.now() < deadline) {
    if (await condition()) return;
    await new Promise(r => setTimeout(r, 10));
  }
  expect(await condition()).toBe(true);
}

const vs = (name: string, weight: number) => ({
  apiVersion: 'networking.istio.io/v1beta1',
  kind: 'VirtualService',
  metadata: { name },
  spec: {
    hosts: [name],
    http: [
      {
        route: [
          {
            destination: { host: name, subset: 'stable' },
            weight: 100 - weight,
          },
          { destination: { host: name, subset: 'canary' }, weight },
        ],
      },
    ],
  },
});

describe('CRD switches and discovery', () => {
  it('lists only what each cluster has installed, and 404s the rest', async () => {
    const groups = async (name: string) =>
      (await custom(name).apis.getAPIVersions()).groups.map(g => g.name);
    expect(await groups('ro')).toContain('argoproj.io');
    expect(await groups('ro')).not.toContain('networking.istio.io');
    expect(await groups('mesh')).toContain('networking.istio.io');
    expect(await groups('mesh')).not.toContain('argoproj.io');
    expect(await groups('bare')).not.toContain('argoproj.io');
    expect(await groups('bare')).not.toContain('networking.istio.io');

    const token = sim.token('ro');
    const auth = { Authorization: `Bearer ${token}` };
    const argo = await call(
      `${sim.endpoint('ro')}/apis/argoproj.io/v1alpha1`,
      'GET',
      undefined,
      auth,
    );
    expect(argo.json.resources.map((r: any) => r.name)).toEqual([
      'rollouts',
      'rollouts/status',
      'analysistemplates',
      'analysistemplates/status',
    ]);
    expect((await control('/clusters/ro/_sim/crds')).json.crds).toEqual([
      'analysistemplates.argoproj.io',
      'rollouts.argoproj.io',
    ]);

    const meshAuth = { Authorization: `Bearer ${sim.token('mesh')}` };
    const istio = await call(
      `${sim.endpoint('mesh')}/apis/networking.istio.io`,
      'GET',
      undefined,
      meshAuth,
    );
    expect(istio.json.versions.map((v: any) => v.version)).toEqual([
      'v1beta1',
      'v1',
    ]);
    const v1 = await call(
      `${sim.endpoint('mesh')}/apis/networking.istio.io/v1`,
      'GET',
      undefined,
      meshAuth,
    );
    expect(v1.json.resources[0]).toMatchObject({
      name: 'virtualservices',
      kind: 'VirtualService',
      namespaced: true,
      shortNames: ['vs'],
    });

    const { custom: ro } = custom('ro');
    expect(
      await statusOf(
        ro.listNamespacedCustomObject({
          group: 'networking.istio.io',
          version: 'v1beta1',
          namespace: 'default',
          plural: 'virtualservices',
        }),
      ),
    ).toBe(404);
    expect(
      await statusOf(
        custom('bare').custom.listNamespacedCustomObject({
          group: 'argoproj.io',
          version: 'v1alpha1',
          namespace: 'default',
          plural: 'analysistemplates',
        }),
      ),
    ).toBe(404);

    // Switched at runtime, over the control API and the library.
    const on = await control('/clusters/bare/_sim/crds', 'POST', {
      name: 'virtualservices.networking.istio.io',
      installed: true,
    });
    // Istio's install ships the DestinationRule CRD with the VirtualService one.
    expect(on.json.crds).toEqual([
      'destinationrules.networking.istio.io',
      'virtualservices.networking.istio.io',
    ]);
    expect(await groups('bare')).toContain('networking.istio.io');
    sim.setCrd('bare', 'virtualservices.networking.istio.io', false);
    expect(await groups('bare')).not.toContain('networking.istio.io');
    expect(
      (
        await control('/clusters/bare/_sim/crds', 'POST', {
          name: 'gateways.networking.istio.io',
          installed: true,
        })
      ).status,
    ).toBe(400);
  });
});

describe('VirtualServices', () => {
  it('are stored as sent, under v1beta1 and v1, with merge and JSON patches', async () => {
    const { custom: c } = custom('mesh');
    const ref = {
      group: 'networking.istio.io',
      version: 'v1beta1',
      namespace: 'default',
      plural: 'virtualservices',
    };
    const created = await c.createNamespacedCustomObject({
      ...ref,
      body: vs('payments', 0),
    });
    expect(created.spec).toEqual(vs('payments', 0).spec);
    expect(created.metadata.generation).toBe(1);
    expect(
      await statusOf(
        c.createNamespacedCustomObject({ ...ref, body: vs('payments', 0) }),
      ),
    ).toBe(409);
    const merged = await c.patchNamespacedCustomObject(
      {
        ...ref,
        name: 'payments',
        body: { spec: { hosts: ['payments', 'payments.example.com'] } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(merged.spec.hosts).toEqual(['payments', 'payments.example.com']);
    expect(Number(merged.metadata.resourceVersion)).toBeGreaterThan(
      Number(created.metadata.resourceVersion),
    );
    const patched = await c.patchNamespacedCustomObject(
      {
        ...ref,
        name: 'payments',
        body: [
          { op: 'replace', path: '/spec/http/0/route/0/weight', value: 80 },
          { op: 'replace', path: '/spec/http/0/route/1/weight', value: 20 },
        ],
      },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    expect(patched.spec.http[0].route.map((r: any) => r.weight)).toEqual([
      80, 20,
    ]);
    expect(patched.metadata.generation).toBe(3);
    const viaV1 = await c.getNamespacedCustomObject({
      ...ref,
      version: 'v1',
      name: 'payments',
    });
    expect(viaV1.apiVersion).toBe('networking.istio.io/v1');
    expect(viaV1.spec.http[0].route[1].weight).toBe(20);
    const list = await c.listNamespacedCustomObject({ ...ref, version: 'v1' });
    expect(list.items.map((i: any) => i.apiVersion)).toEqual([
      'networking.istio.io/v1',
    ]);
    await c.deleteNamespacedCustomObject({ ...ref, name: 'payments' });
    expect(
      await statusOf(c.getNamespacedCustomObject({ ...ref, name: 'payments' })),
    ).toBe(404);

    const history = await control(
      '/clusters/mesh/_sim/history?kind=VirtualService&name=payments',
    );
    expect(history.json.items.map((h: any) => h.verb)).toEqual([
      'create',
      'patch',
      'patch',
      'delete',
    ]);
    expect(history.json.items[2]).toMatchObject({
      kind: 'VirtualService',
      namespace: 'default',
      name: 'payments',
      resourceVersion: patched.metadata.resourceVersion,
    });
    expect(history.json.items[2].object.spec.http[0].route[1].weight).toBe(20);
    expect(sim.history('mesh', { kind: 'VirtualService' })).toHaveLength(4);
  });
});

describe('Rollouts through the API', () => {
  it('runs steps, promotes and aborts through the status subresource', async () => {
    const { custom: c } = custom('ro');
    const ref = {
      group: 'argoproj.io',
      version: 'v1alpha1',
      namespace: 'default',
      plural: 'rollouts',
      name: 'pay',
    };
    const body = (image: string) => ({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Rollout',
      metadata: { name: 'pay' },
      spec: {
        replicas: 5,
        selector: { matchLabels: { app: 'pay' } },
        template: {
          metadata: { labels: { app: 'pay' } },
          spec: { containers: [{ name: 'app', image }] },
        },
        strategy: {
          canary: {
            steps: [
              { setWeight: 20 },
              { pause: {} },
              { setWeight: 60 },
              // Long enough to be read paused, even on a busy machine.
              { pause: { duration: 10 } },
              { setWeight: 100 },
            ],
          },
        },
      },
    });
    const get = async () => (await c.getNamespacedCustomObject(ref)).status;
    await c.createNamespacedCustomObject({ ...ref, body: body('pay:1') });
    await until(async () => (await get()).phase === 'Healthy');
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    await c.patchNamespacedCustomObject(
      {
        ...ref,
        body: {
          spec: {
            template: {
              spec: { containers: [{ name: 'app', image: 'pay:2' }] },
            },
          },
        },
      },
      merge,
    );
    await until(async () => (await get()).phase === 'Paused');
    expect(await get()).toMatchObject({
      currentStepIndex: 1,
      updatedReplicas: 1,
      pauseConditions: [{ reason: 'CanaryPauseStep' }],
    });
    // kubectl argo rollouts promote
    const promoted = await c.patchNamespacedCustomObjectStatus(
      { ...ref, body: { status: { pauseConditions: null } } },
      merge,
    );
    expect(promoted.status.currentStepIndex).toBe(2);
    let timedPause: any;
    await until(async () => {
      timedPause = await get();
      return timedPause.currentStepIndex === 3;
    });
    expect(timedPause).toMatchObject({ phase: 'Paused', updatedReplicas: 3 });
    await until(async () => (await get()).phase === 'Healthy');
    const done = await get();
    expect(done).toMatchObject({ currentStepIndex: 5, updatedReplicas: 5 });
    expect(done.stableRS).toBe(done.currentPodHash);

    // A new revision, aborted (kubectl argo rollouts abort).
    await c.patchNamespacedCustomObject(
      {
        ...ref,
        body: {
          spec: {
            template: {
              spec: { containers: [{ name: 'app', image: 'pay:3' }] },
            },
          },
        },
      },
      merge,
    );
    await until(async () => (await get()).phase === 'Paused');
    const aborted = await c.patchNamespacedCustomObjectStatus(
      { ...ref, body: { status: { abort: true } } },
      merge,
    );
    expect(aborted.status).toMatchObject({
      phase: 'Degraded',
      message: 'RolloutAborted: Rollout aborted update to revision 3',
      abort: true,
      currentStepIndex: 0,
    });
    const objects = await control('/clusters/ro/_sim/objects');
    expect(
      objects.json.items.find((o: any) => o.kind === 'Rollout').status,
    ).toMatchObject({ phase: 'Degraded', abort: true });
    expect(
      sim.history('ro', { kind: 'Rollout', name: 'pay' }).map(h => h.verb),
    ).toEqual(['create', 'patch', 'status', 'patch', 'status']);
  });
});

describe('Prometheus', () => {
  const query = (q: string) =>
    call(
      `${sim.prometheusUrl}/api/v1/query?query=${encodeURIComponent(q)}`,
      'GET',
    );

  it('answers from the most specific rule, in the Prometheus format', async () => {
    expect(sim.prometheusUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await control('/_sim/prometheus/rules', 'DELETE');
    expect(
      (
        await control('/_sim/prometheus/rules', 'POST', {
          match: { app: 'payments' },
          value: 0.999,
        })
      ).status,
    ).toBe(200);
    sim.setPrometheusRule({ app: 'payments', cluster: 'sim-3' }, 0.5);
    sim.setPrometheusRule({ app: 'payments', revision: '2' }, null);
    sim.setPrometheusRule(
      { app: 'payments', cluster: 'sim-4' },
      { error: 'query timed out in expression evaluation' },
    );

    const q =
      'sum(rate(http_requests_total{app="payments",cluster="sim-3",code!~"5.."}[5m]))';
    const specific = await query(q);
    expect(specific.status).toBe(200);
    expect(specific.json).toEqual({
      status: 'success',
      data: {
        resultType: 'vector',
        result: [
          {
            metric: { app: 'payments', cluster: 'sim-3' },
            value: [expect.any(Number), '0.5'],
          },
        ],
      },
    });
    const general = await query('up{app="payments", cluster="sim-1"}');
    expect(general.json.data.result[0].value[1]).toBe('0.999');
    const posted = await call(
      `${sim.prometheusUrl}/api/v1/query`,
      'POST',
      'query=up%7Bapp%3D%22payments%22%7D&time=1700000000.5',
      { 'Content-Type': 'application/x-www-form-urlencoded' },
    );
    expect(posted.json.data.result[0].value).toEqual([1700000000.5, '0.999']);
    const empty = await query('up{app="payments",revision="2"}');
    expect(empty.json).toEqual({
      status: 'success',
      data: { resultType: 'vector', result: [] },
    });
    expect((await query('up{app="orders"}')).json.data.result).toEqual([]);
    expect((await query('up{app!="payments"}')).json.data.result).toEqual([]);
    const failed = await query('up{app="payments",cluster="sim-4"}');
    expect(failed.status).toBe(422);
    expect(failed.json).toEqual({
      status: 'error',
      errorType: 'execution',
      error: 'query timed out in expression evaluation',
    });
    const bad = await call(`${sim.prometheusUrl}/api/v1/query`, 'GET');
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ status: 'error', errorType: 'bad_data' });
    expect(sim.prometheusQueries()).toContain(q);
    expect((await control('/_sim/prometheus/queries')).json.queries).toContain(
      q,
    );
  });

  it('goes down and comes back', async () => {
    await control('/_sim/prometheus/fault', 'POST', { mode: 'down' });
    await expect(query('up')).rejects.toThrow();
    sim.setPrometheusFault('ok');
    expect((await query('up')).status).toBe(200);
    sim.clearPrometheusRules();
    expect(sim.prometheusRules()).toEqual([]);
  });
});
