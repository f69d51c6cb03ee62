/*
 * End-to-end through the real @kubernetes/client-node 1.4.0, loading the
 * kubeconfig files the simulator wrote, as Fleet's backend does.
 */
import {
  ApiException,
  AppsV1Api,
  AutoscalingV2Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  Observable,
  PatchStrategy,
  PolicyV1Api,
  RequestContext,
  ResponseContext,
  setHeaderOptions,
  V1Deployment,
  V1Service,
  VersionApi,
} from '@kubernetes/client-node';
import { readFileSync, statSync } from 'node:fs';
import { request } from 'node:https';
import { parse } from 'yaml';
import { KubeSimulator } from './KubeSimulator';

let sim: KubeSimulator;

beforeAll(async () => {
  sim = await KubeSimulator.start({ clusters: 3, readyDelayMs: 150 });
});

afterAll(async () => {
  await sim?.stop();
});

function kubeConfig(name: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath(name));
  return kc;
}

function clients(name: string) {
  const kc = kubeConfig(name);
  return {
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    policy: kc.makeApiClient(PolicyV1Api),
    autoscaling: kc.makeApiClient(AutoscalingV2Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    version: kc.makeApiClient(VersionApi),
  };
}

/** Waits until `condition` holds, checking every 10 ms for at most 30 s (a loaded machine). */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition() && Date.now() < deadline) {
    await new Promise(resolve => setTimeout(resolve, 10));
  }
  expect(condition()).toBe(true);
}

/** Per-call timeout that really aborts the request (SETUP.md). */
function timeoutOption(ms: number) {
  return {
    middleware: [
      {
        pre: (c: RequestContext) => {
          c.setSignal(AbortSignal.timeout(ms));
          return new Observable(Promise.resolve(c));
        },
        post: (r: ResponseContext) => new Observable(Promise.resolve(r)),
      },
    ],
    middlewareMergeStrategy: 'append' as const,
  };
}

async function apiError(
  promise: Promise<unknown>,
): Promise<ApiException<string>> {
  try {
    await promise;
  } catch (e) {
    if (e instanceof ApiException) return e as ApiException<string>;
    throw e;
  }
  throw new Error('expected the call to fail');
}

function deployment(
  name: string,
  image = 'ghcr.io/acme/web:1.0.0',
  replicas = 3,
): V1Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name,
      labels: {
        'app.kubernetes.io/name': name,
        'app.kubernetes.io/managed-by': 'fleet',
      },
    },
    spec: {
      replicas,
      selector: { matchLabels: { 'app.kubernetes.io/name': name } },
      template: {
        metadata: { labels: { 'app.kubernetes.io/name': name } },
        spec: {
          containers: [
            {
              name: 'app',
              image,
              ports: [{ containerPort: 8000 }],
              env: [{ name: 'MODE', value: 'prod' }],
              readinessProbe: { httpGet: { path: '/health', port: 8000 } },
            },
          ],
        },
      },
    },
  };
}

function service(name: string): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name },
    spec: {
      selector: { 'app.kubernetes.io/name': name },
      ports: [{ name: 'http', port: 80, targetPort: 8000 }],
    },
  };
}

/** Raw HTTPS to the simulator (control API, or API calls without client-node). */
function raw(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: any; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      `${sim.url}${path}`,
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
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, json, text });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('kubeconfig files', () => {
  it('are written per cluster with a path-prefixed server, the CA, a token and mode 0600', () => {
    expect(sim.clusterNames()).toEqual(['sim-1', 'sim-2', 'sim-3']);
    const path = sim.kubeconfigPath('sim-2');
    expect(path).toBe(`${sim.kubeconfigDir}/sim-2.yaml`);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const doc = parse(readFileSync(path, 'utf8'));
    expect(doc['current-context']).toBe('sim-2');
    expect(doc.contexts).toHaveLength(1);
    expect(doc.contexts[0].name).toBe('sim-2');
    expect(doc.clusters[0].cluster.server).toBe(`${sim.url}/clusters/sim-2`);
    expect(sim.endpoint('sim-2')).toBe(`${sim.url}/clusters/sim-2`);
    expect(
      Buffer.from(
        doc.clusters[0].cluster['certificate-authority-data'],
        'base64',
      ).toString(),
    ).toBe(sim.caPem);
    expect(doc.users[0].user.token).toBe(sim.token('sim-2'));
    expect(sim.token('sim-1')).not.toBe(sim.token('sim-2'));
    expect(sim.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });
});

describe('discovery and auth', () => {
  it('serves /version, namespaces with limit, and discovery documents', async () => {
    const { core, version } = clients('sim-1');
    const v = await version.getCode();
    expect(v.gitVersion).toBe('v1.30.0');
    expect(v.major).toBe('1');
    const all = await core.listNamespace();
    expect(all.items.map(n => n.metadata?.name)).toEqual(
      expect.arrayContaining(['default', 'kube-system', 'kube-public']),
    );
    const page = await core.listNamespace({ limit: 1 });
    expect(page.items).toHaveLength(1);
    const rest = await core.listNamespace({
      limit: 1,
      _continue: page.metadata?._continue,
    });
    expect(rest.items[0].metadata?.name).not.toBe(page.items[0].metadata?.name);
    const big = await core.listNamespace({ limit: 500 });
    expect(big.metadata?._continue ?? '').toBe('');

    const token = { Authorization: `Bearer ${sim.token('sim-1')}` };
    const apis = await raw('GET', '/clusters/sim-1/apis', undefined, token);
    const groups = apis.json.groups.map(
      (g: any) => g.preferredVersion.groupVersion,
    );
    expect(groups).toEqual(
      expect.arrayContaining([
        'apps/v1',
        'policy/v1',
        'autoscaling/v2',
        'argoproj.io/v1alpha1',
      ]),
    );
    const appsV1 = await raw(
      'GET',
      '/clusters/sim-1/apis/apps/v1',
      undefined,
      token,
    );
    expect(appsV1.json.kind).toBe('APIResourceList');
    expect(appsV1.json.resources.map((r: any) => r.name)).toContain(
      'deployments',
    );
    const readyz = await raw('GET', '/clusters/sim-1/readyz', undefined, token);
    expect(readyz).toMatchObject({ status: 200, text: 'ok' });
  });

  it('answers 401 with a Status to a wrong or missing token, and 404 to an unknown cluster', async () => {
    const kc = kubeConfig('sim-1');
    kc.users[0] = { ...kc.users[0], token: sim.token('sim-2') } as any;
    const err = await apiError(kc.makeApiClient(CoreV1Api).listNamespace());
    expect(err.code).toBe(401); // client-node 1.4 drops the body of a 401
    const missing = await raw('GET', '/clusters/sim-1/api/v1/namespaces');
    expect(missing.status).toBe(401);
    expect(missing.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Unauthorized',
      reason: 'Unauthorized',
      code: 401,
    });
    const wrong = await raw('GET', '/clusters/sim-1/version', undefined, {
      Authorization: `Bearer ${sim.token('sim-2')}`,
    });
    expect(wrong.status).toBe(401);
    const unknown = await raw('GET', '/clusters/nope/api/v1/namespaces');
    expect(unknown.status).toBe(404);
    expect(unknown.json.kind).toBe('Status');
  });
});

describe('faults', () => {
  afterEach(() => sim.setFault('sim-3', { mode: 'ok' }));

  it('counts the requests the timeout fault holds, until the client aborts them', async () => {
    const { core } = clients('sim-2');
    sim.setFault('sim-2', { mode: 'timeout' });
    try {
      expect(sim.heldRequestCount('sim-2')).toBe(0);
      const controller = new AbortController();
      const pending = core
        .listNamespace(undefined, {
          middleware: [
            {
              pre: (c: RequestContext) => {
                c.setSignal(controller.signal);
                return new Observable(Promise.resolve(c));
              },
              post: (r: ResponseContext) => new Observable(Promise.resolve(r)),
            },
          ],
          middlewareMergeStrategy: 'append' as const,
        })
        .catch((error: Error) => error);
      await until(() => sim.heldRequestCount('sim-2') === 1);
      controller.abort();
      expect(await pending).toMatchObject({ name: 'AbortError' });
      await until(() => sim.heldRequestCount('sim-2') === 0);
    } finally {
      sim.setFault('sim-2', { mode: 'ok' });
    }
  });

  it('down destroys the connection, timeout holds it, error answers 500, latency delays, ok recovers', async () => {
    const { core } = clients('sim-3');
    const before = sim.requestCount('sim-3');
    const listsBefore = sim.requestCount('sim-3', '/api/v1/namespaces');
    const versionsBefore = sim.requestCount('sim-3', '/version');

    sim.setFault('sim-3', { mode: 'down' });
    await expect(core.listNamespace()).rejects.toThrow(
      /socket hang up|ECONNRESET/,
    );

    sim.setFault('sim-3', { mode: 'timeout' });
    const started = Date.now();
    await expect(
      core.listNamespace(undefined, timeoutOption(300)),
    ).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);

    sim.setFault('sim-3', { mode: 'error' });
    const err = await apiError(core.listNamespace());
    expect(err.code).toBe(500);
    expect(JSON.parse(err.body)).toMatchObject({
      reason: 'InternalError',
      code: 500,
    });

    sim.setFault('sim-3', { mode: 'ok', latencyMs: 250 });
    const t0 = Date.now();
    await core.listNamespace();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(240);

    sim.setFault('sim-3', { mode: 'ok' });
    const ok = await core.listNamespace({ limit: 1 });
    expect(ok.items).toHaveLength(1);
    expect(sim.requestCount('sim-3') - before).toBe(5);
    // Counted per path too (query strings left out): all five were namespace lists.
    expect(sim.requestCount('sim-3', '/api/v1/namespaces') - listsBefore).toBe(
      5,
    );
    expect(sim.requestCount('sim-3', '/version') - versionsBefore).toBe(0);
    expect(sim.getFault('sim-3')).toEqual({ mode: 'ok' });
  });

  it('faults one cluster only, and the control API sets, reads and validates faults without a token', async () => {
    let res = await raw('POST', '/clusters/sim-3/_sim/fault', {
      mode: 'error',
      latencyMs: 10,
    });
    expect(res).toMatchObject({
      status: 200,
      json: { mode: 'error', latencyMs: 10 },
    });
    expect(sim.getFault('sim-3')).toEqual({ mode: 'error', latencyMs: 10 });
    res = await raw('GET', '/clusters/sim-3/_sim/fault');
    expect(res.json).toEqual({ mode: 'error', latencyMs: 10 });
    // the control API itself is never faulted, and other clusters are unaffected
    await expect(
      clients('sim-1').core.listNamespace({ limit: 1 }),
    ).resolves.toBeDefined();
    for (const bad of [
      { mode: 'broken' },
      { mode: 'ok', latencyMs: -1 },
      'x',
      { mode: 'ok', extra: 1 },
    ]) {
      res = await raw('POST', '/clusters/sim-3/_sim/fault', bad);
      expect(res.status).toBe(400);
    }
    expect(sim.getFault('sim-3')).toEqual({ mode: 'error', latencyMs: 10 });
    expect(() => sim.setFault('sim-3', { mode: 'nope' as any })).toThrow(
      /invalid fault/,
    );
    res = await raw('GET', '/_sim/clusters');
    expect(res.json).toEqual({ clusters: ['sim-1', 'sim-2', 'sim-3'] });
  });
});

describe('objects', () => {
  it('create twice → 409 AlreadyExists; missing namespace → 404; bad name → 422', async () => {
    const { apps, core } = clients('sim-1');
    const created = await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('twice'),
    });
    expect(created.metadata).toMatchObject({
      namespace: 'default',
      generation: 1,
    });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);
    const conflict = await apiError(
      apps.createNamespacedDeployment({
        namespace: 'default',
        body: deployment('twice'),
      }),
    );
    expect(conflict.code).toBe(409);
    expect(JSON.parse(conflict.body)).toMatchObject({
      reason: 'AlreadyExists',
      message: 'deployments.apps "twice" already exists',
    });
    const noNs = await apiError(
      apps.createNamespacedDeployment({
        namespace: 'ghost',
        body: deployment('x'),
      }),
    );
    expect(noNs.code).toBe(404);
    expect(JSON.parse(noNs.body).message).toBe('namespaces "ghost" not found');
    const invalid = await apiError(
      apps.createNamespacedDeployment({
        namespace: 'default',
        body: deployment('Bad_Name'),
      }),
    );
    expect(invalid.code).toBe(422);
    expect(JSON.parse(invalid.body).reason).toBe('Invalid');
    const missing = await apiError(
      apps.readNamespacedDeployment({ name: 'absent', namespace: 'default' }),
    );
    expect(missing.code).toBe(404);

    await core.createNamespace({ body: { metadata: { name: 'team-a' } } });
    const ns = await core.readNamespace({ name: 'team-a' });
    expect(ns.status?.phase).toBe('Active');
  });

  it('stores resource quantities in canonical form: cpu "0.5" reads back "500m"; a bad one is a 400', async () => {
    const { apps } = clients('sim-2');
    const body = deployment('sized');
    body.spec!.template.spec!.containers[0].resources = {
      requests: { cpu: '0.5', memory: '1024Mi' },
      limits: { cpu: '1.5', memory: '1536Mi' },
    };
    const created = await apps.createNamespacedDeployment({
      namespace: 'default',
      body,
    });
    const expected = {
      requests: { cpu: '500m', memory: '1Gi' },
      limits: { cpu: '1500m', memory: '1536Mi' },
    };
    expect(created.spec?.template.spec?.containers[0].resources).toEqual(
      expected,
    );
    const read = await apps.readNamespacedDeployment({
      name: 'sized',
      namespace: 'default',
    });
    expect(read.spec?.template.spec?.containers[0].resources).toEqual(expected);

    const bad = deployment('badly-sized');
    bad.spec!.template.spec!.containers[0].resources = {
      requests: { cpu: 'half' },
    };
    const rejected = await apiError(
      apps.createNamespacedDeployment({ namespace: 'default', body: bad }),
    );
    expect(rejected.code).toBe(400);
    expect(JSON.parse(rejected.body)).toMatchObject({
      reason: 'BadRequest',
      message: expect.stringContaining(
        'Deployment in version "v1" cannot be handled as a Deployment: quantities must match',
      ),
    });
  });

  it('a Service gets a clusterIP that a replace keeps, and may not change', async () => {
    const { core } = clients('sim-1');
    const created = await core.createNamespacedService({
      namespace: 'default',
      body: service('web'),
    });
    const ip = created.spec?.clusterIP;
    expect(ip).toMatch(/^10\.96\.\d+\.\d+$/);
    expect(created.spec?.ports?.[0]).toMatchObject({
      protocol: 'TCP',
      targetPort: 8000,
    });
    const other = await core.createNamespacedService({
      namespace: 'default',
      body: service('api'),
    });
    expect(other.spec?.clusterIP).not.toBe(ip);

    const replaced = await core.replaceNamespacedService({
      name: 'web',
      namespace: 'default',
      body: {
        ...service('web'),
        metadata: {
          name: 'web',
          resourceVersion: created.metadata?.resourceVersion,
        },
      },
    });
    expect(replaced.spec?.clusterIP).toBe(ip);
    expect(replaced.metadata?.resourceVersion).toBe(
      created.metadata?.resourceVersion,
    ); // nothing changed

    const stale = await apiError(
      core.replaceNamespacedService({
        name: 'web',
        namespace: 'default',
        body: {
          ...service('web'),
          metadata: { name: 'web', resourceVersion: '1' },
        },
      }),
    );
    expect(stale.code).toBe(409);
    expect(JSON.parse(stale.body).reason).toBe('Conflict');

    const moved = await apiError(
      core.replaceNamespacedService({
        name: 'web',
        namespace: 'default',
        body: {
          ...service('web'),
          spec: { ...service('web').spec, clusterIP: '10.96.200.200' },
        },
      }),
    );
    expect(moved.code).toBe(422);
    expect(JSON.parse(moved.body).message).toContain('field is immutable');
  });

  it('an identical patch changes nothing; a spec change bumps generation; strategic merge merges by name', async () => {
    const { apps } = clients('sim-2');
    sim.setReadiness('sim-2', { readyDelayMs: 60_000 }); // no status churn during this test
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('pay'),
    });
    // As read back once the deployment controller wrote its revision annotation.
    const created = await apps.readNamespacedDeployment({
      name: 'pay',
      namespace: 'default',
    });
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const same = await apps.patchNamespacedDeployment(
      { name: 'pay', namespace: 'default', body: deployment('pay') },
      merge,
    );
    expect(same.metadata?.generation).toBe(1);
    expect(same.metadata?.resourceVersion).toBe(
      created.metadata?.resourceVersion,
    );

    const labelled = await apps.patchNamespacedDeployment(
      {
        name: 'pay',
        namespace: 'default',
        body: { metadata: { labels: { env: 'prod' } } },
      },
      merge,
    );
    expect(labelled.metadata?.generation).toBe(1);
    expect(Number(labelled.metadata?.resourceVersion)).toBeGreaterThan(
      Number(created.metadata?.resourceVersion),
    );

    const strategic = setHeaderOptions(
      'Content-Type',
      PatchStrategy.StrategicMergePatch,
    );
    const bumped = await apps.patchNamespacedDeployment(
      {
        name: 'pay',
        namespace: 'default',
        body: {
          spec: {
            template: {
              spec: {
                containers: [{ name: 'app', image: 'ghcr.io/acme/web:2.0.0' }],
              },
            },
          },
        },
      },
      strategic,
    );
    expect(bumped.metadata?.generation).toBe(2);
    const container = bumped.spec?.template.spec?.containers[0];
    expect(container?.image).toBe('ghcr.io/acme/web:2.0.0');
    expect(container?.env).toEqual([{ name: 'MODE', value: 'prod' }]); // merged, not replaced
    expect(container?.ports).toEqual([
      { containerPort: 8000, protocol: 'TCP' },
    ]);
    expect(bumped.status?.observedGeneration).toBe(2);

    const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
    const scaled = await apps.patchNamespacedDeployment(
      {
        name: 'pay',
        namespace: 'default',
        body: [{ op: 'replace', path: '/spec/replicas', value: 5 }],
      },
      jsonPatch,
    );
    expect(scaled.spec?.replicas).toBe(5);
    expect(scaled.metadata?.generation).toBe(3);

    const replaced = await apps.replaceNamespacedDeployment({
      name: 'pay',
      namespace: 'default',
      body: scaled,
    });
    expect(replaced.metadata?.resourceVersion).toBe(
      scaled.metadata?.resourceVersion,
    );
    expect(replaced.metadata?.generation).toBe(3);
    sim.setReadiness('sim-2', { readyDelayMs: 150 });
  });

  it('a Deployment becomes available after the ready delay; neverReady keeps it at 0', async () => {
    const { apps } = clients('sim-1');
    // Long enough for the first read to come before the pods are ready, even on a busy machine.
    sim.setReadiness('sim-1', { readyDelayMs: 3000 });
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('ready', undefined, 2),
    });
    const early = await apps.readNamespacedDeployment({
      name: 'ready',
      namespace: 'default',
    });
    expect(early.status).toMatchObject({
      observedGeneration: 1,
      replicas: 2,
      updatedReplicas: 2,
    });
    expect(early.status?.availableReplicas ?? 0).toBe(0);
    let late = early;
    const deadline = Date.now() + 30_000; // a loaded machine
    while ((late.status?.availableReplicas ?? 0) < 2 && Date.now() < deadline) {
      await new Promise(r => setTimeout(r, 100));
      late = await apps.readNamespacedDeployment({
        name: 'ready',
        namespace: 'default',
      });
    }
    expect(late.status).toMatchObject({
      readyReplicas: 2,
      availableReplicas: 2,
      updatedReplicas: 2,
    });
    expect(
      late.status?.conditions?.find(c => c.type === 'Available')?.status,
    ).toBe('True');
    expect(Number(late.metadata?.resourceVersion)).toBeGreaterThan(
      Number(early.metadata?.resourceVersion),
    );

    sim.setReadiness('sim-1', { neverReady: true });
    try {
      await apps.createNamespacedDeployment({
        namespace: 'default',
        body: deployment('stuck', undefined, 2),
      });
      await new Promise(r => setTimeout(r, 200));
      const stuck = await apps.readNamespacedDeployment({
        name: 'stuck',
        namespace: 'default',
      });
      expect(stuck.status?.availableReplicas ?? 0).toBe(0);
      expect(stuck.status?.updatedReplicas).toBe(2);
    } finally {
      sim.setReadiness('sim-1', { neverReady: false, readyDelayMs: 150 });
    }
  });

  it('serves PDBs, HPAs and Argo Rollouts; objects() shows what was applied, per cluster', async () => {
    const { policy, autoscaling, custom, apps } = clients('sim-3');
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('svc-a', undefined, 2),
    });
    await policy.createNamespacedPodDisruptionBudget({
      namespace: 'default',
      body: {
        metadata: { name: 'svc-a' },
        spec: {
          minAvailable: 1,
          selector: { matchLabels: { 'app.kubernetes.io/name': 'svc-a' } },
        },
      },
    });
    const pdbs = await policy.listNamespacedPodDisruptionBudget({
      namespace: 'default',
      labelSelector: 'nothing=here',
    });
    expect(pdbs.items).toHaveLength(0);
    await autoscaling.createNamespacedHorizontalPodAutoscaler({
      namespace: 'default',
      body: {
        metadata: { name: 'svc-a' },
        spec: {
          scaleTargetRef: {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            name: 'svc-a',
          },
          minReplicas: 4,
          maxReplicas: 6,
        },
      },
    });
    const scaled = await apps.readNamespacedDeployment({
      name: 'svc-a',
      namespace: 'default',
    });
    expect(scaled.spec?.replicas).toBe(4); // the HPA enforces minReplicas

    const rollout = await custom.createNamespacedCustomObject({
      group: 'argoproj.io',
      version: 'v1alpha1',
      namespace: 'default',
      plural: 'rollouts',
      body: {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Rollout',
        metadata: { name: 'canary' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'canary' } },
          template: {
            metadata: { labels: { app: 'canary' } },
            spec: { containers: [{ name: 'app', image: 'x:1' }] },
          },
          strategy: { canary: { steps: [{ setWeight: 20 }, { pause: {} }] } },
        },
      },
    });
    expect(rollout.metadata.generation).toBe(1);

    const byKind = (name: string) =>
      sim.objects(name).map(o => `${o.kind}/${o.metadata.name}`);
    expect(byKind('sim-3')).toEqual(
      expect.arrayContaining([
        'Deployment/svc-a',
        'PodDisruptionBudget/svc-a',
        'HorizontalPodAutoscaler/svc-a',
        'Rollout/canary',
      ]),
    );
    expect(byKind('sim-2')).not.toContain('Deployment/svc-a');
    expect(byKind('sim-2')).not.toContain('Rollout/canary');
    const res = await raw('GET', '/clusters/sim-3/_sim/objects');
    expect(res.json.items.map((o: any) => o.kind)).toContain('Rollout');
    expect(
      res.json.items.find((o: any) => o.kind === 'Deployment'),
    ).toMatchObject({
      apiVersion: 'apps/v1',
      metadata: { name: 'svc-a', namespace: 'default' },
      spec: { replicas: 4 },
    });
  });
});

describe('runtime clusters and stop', () => {
  it('adds a cluster at runtime, and stop() ends held timeout requests', async () => {
    const extra = await KubeSimulator.start({
      clusters: ['edge-a'],
      readyDelayMs: 0,
    });
    const path = await extra.addCluster('edge-b');
    expect(path).toBe(extra.kubeconfigPath('edge-b'));
    await expect(extra.addCluster('edge-b')).rejects.toThrow(/already exists/);
    await expect(extra.addCluster('Not_DNS')).rejects.toThrow(/DNS-1123/);
    const kc = new KubeConfig();
    kc.loadFromFile(path);
    const core = kc.makeApiClient(CoreV1Api);
    expect((await core.listNamespace()).items.length).toBeGreaterThanOrEqual(3);
    extra.setFault('edge-b', { mode: 'timeout' });
    const held = core.listNamespace();
    held.catch(() => undefined);
    await new Promise(r => setTimeout(r, 100));
    const t0 = Date.now();
    await extra.stop();
    // Held requests would keep stop() waiting for ever; 10 s is a loaded machine's margin.
    expect(Date.now() - t0).toBeLessThan(10_000);
    await expect(held).rejects.toThrow();
  });
});
