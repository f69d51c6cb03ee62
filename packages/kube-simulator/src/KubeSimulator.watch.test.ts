/*
 * Watch, through the real @kubernetes/client-node 1.4.0 (`Watch`, `makeInformer`/ListWatch) and
 * the kubeconfig files the simulator wrote, with the API server's semantics.
 */
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  makeInformer,
  V1Deployment,
  Watch,
} from '@kubernetes/client-node';
import { request } from 'node:https';
import { connect, constants as h2 } from 'node:http2';
import { KubeSimulator } from './KubeSimulator';

const FLEET = { 'app.kubernetes.io/managed-by': 'fleet' };

interface Seen {
  type: string;
  object: any;
}

interface OpenWatch {
  events: Seen[];
  /** Resolves with done's argument when the stream ends. */
  done: Promise<unknown>;
  stop(): void;
}

let sim: KubeSimulator;
/** A simulator with short server timers: bookmarks, default timeout, controller ticks. */
let fast: KubeSimulator;

beforeAll(async () => {
  [sim, fast] = await Promise.all([
    KubeSimulator.start({ clusters: 3, readyDelayMs: 200 }),
    KubeSimulator.start({
      clusters: 2,
      readyDelayMs: 200,
      watch: {
        bookmarkIntervalMs: 200,
        minTimeoutMs: 1500,
        controllerTickMs: 50,
        tooLargeWaitMs: 300,
      },
    }),
  ]);
});

afterAll(async () => {
  await Promise.all([sim?.stop(), fast?.stop()]);
});

function config(s: KubeSimulator, cluster: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(s.kubeconfigPath(cluster));
  return kc;
}

function clients(s: KubeSimulator, cluster: string) {
  const kc = config(s, cluster);
  return {
    kc,
    apps: kc.makeApiClient(AppsV1Api),
    core: kc.makeApiClient(CoreV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
  };
}

async function openWatch(
  s: KubeSimulator,
  cluster: string,
  path: string,
  params: Record<string, string | number | boolean> = {},
): Promise<OpenWatch> {
  const events: Seen[] = [];
  let finish!: (err: unknown) => void;
  const done = new Promise<unknown>(resolve => {
    finish = resolve;
  });
  const controller = await new Watch(config(s, cluster)).watch(
    path,
    params,
    (type, object) => events.push({ type, object }),
    err => finish(err),
  );
  return { events, done, stop: () => controller.abort() };
}

async function until<T>(
  what: string,
  probe: () => T | undefined | false,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(r => setTimeout(r, 20));
  }
}

function deployment(
  name: string,
  labels: Record<string, string> = FLEET,
  replicas = 1,
): V1Deployment {
  return {
    metadata: { name, labels },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image: `${name}:1` }] },
      },
    },
  };
}

function rvs(events: Seen[]): number[] {
  return events.map(e => Number(e.object.metadata.resourceVersion));
}

function raw(
  s: KubeSimulator,
  cluster: string,
  path: string,
  method = 'GET',
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${s.url}/clusters/${cluster}${path}`,
      {
        method,
        ca: s.caPem,
        headers: { Authorization: `Bearer ${s.token(cluster)}` },
      },
      res => {
        let text = '';
        res.on('data', c => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('watch', () => {
  it('streams ADDED, MODIFIED and DELETED in order, each with its resourceVersion', async () => {
    const { apps } = clients(sim, 'sim-1');
    const list = await apps.listNamespacedDeployment({ namespace: 'default' });
    const from = list.metadata!.resourceVersion!;
    const w = await openWatch(
      sim,
      'sim-1',
      '/apis/apps/v1/namespaces/default/deployments',
      { resourceVersion: from },
    );
    const created = await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('web'),
    });
    const patched = await apps.patchNamespacedDeployment({
      namespace: 'default',
      name: 'web',
      body: [{ op: 'replace', path: '/spec/replicas', value: 3 }],
    });
    await apps.deleteNamespacedDeployment({
      namespace: 'default',
      name: 'web',
    });
    const deleted = await until('DELETED', () =>
      w.events.find(e => e.type === 'DELETED'),
    );
    w.stop();
    expect(w.events[0]).toMatchObject({
      type: 'ADDED',
      object: {
        kind: 'Deployment',
        apiVersion: 'apps/v1',
        metadata: {
          name: 'web',
          resourceVersion: created.metadata!.resourceVersion,
        },
      },
    });
    expect(
      w.events.find(
        e =>
          e.object.metadata.resourceVersion ===
          patched.metadata!.resourceVersion,
      ),
    ).toMatchObject({ type: 'MODIFIED', object: { spec: { replicas: 3 } } });
    // status changes written by the Deployment controller are MODIFIED events too
    expect(w.events.every(e => e.object.metadata.name === 'web')).toBe(true);
    const seen = rvs(w.events);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen[0]).toBeGreaterThan(Number(from));
    // DELETED carries the last state, at the deletion's own resourceVersion
    expect(deleted.object.spec.replicas).toBe(3);
    expect(Number(deleted.object.metadata.resourceVersion)).toBe(
      Math.max(...seen),
    );
    expect(w.events[w.events.length - 1]).toBe(deleted);
  });

  it('replays every change after a resourceVersion, then streams live ones', async () => {
    const { core } = clients(sim, 'sim-1');
    const start = await core.listNamespacedService({ namespace: 'default' });
    const from = start.metadata!.resourceVersion!;
    for (const name of ['a', 'b', 'c']) {
      await core.createNamespacedService({
        namespace: 'default',
        body: {
          metadata: { name: `svc-${name}`, labels: FLEET },
          spec: { ports: [{ port: 80 }] },
        },
      });
    }
    await core.deleteNamespacedService({ namespace: 'default', name: 'svc-b' });
    const w = await openWatch(
      sim,
      'sim-1',
      '/api/v1/namespaces/default/services',
      {
        resourceVersion: from,
        labelSelector: 'app.kubernetes.io/managed-by=fleet',
      },
    );
    await until('the replay', () => w.events.length >= 4);
    await core.deleteNamespacedService({ namespace: 'default', name: 'svc-a' });
    await until('the live delete', () => w.events.length >= 5);
    w.stop();
    expect(w.events.map(e => `${e.type} ${e.object.metadata.name}`)).toEqual([
      'ADDED svc-a',
      'ADDED svc-b',
      'ADDED svc-c',
      'DELETED svc-b',
      'DELETED svc-a',
    ]);
    expect(w.events.every(e => e.object.kind === 'Service')).toBe(true);
  });

  it('without a resourceVersion (or with "0") starts with ADDED events for what exists', async () => {
    const { core } = clients(sim, 'sim-2');
    const noRv = await openWatch(sim, 'sim-2', '/api/v1/namespaces');
    const zero = await openWatch(sim, 'sim-2', '/api/v1/namespaces', {
      resourceVersion: '0',
    });
    for (const w of [noRv, zero]) {
      await until('the initial events', () => w.events.length >= 4);
      expect(w.events.map(e => `${e.type} ${e.object.metadata.name}`)).toEqual([
        'ADDED default',
        'ADDED kube-node-lease',
        'ADDED kube-public',
        'ADDED kube-system',
      ]);
    }
    await core.createNamespace({ body: { metadata: { name: 'team-a' } } });
    await until('the live ADDED', () =>
      noRv.events.find(e => e.object.metadata.name === 'team-a'),
    );
    noRv.stop();
    zero.stop();
  });

  it('filters by label selector: matching objects only, and leaving or joining the selection', async () => {
    const { apps } = clients(sim, 'sim-2');
    const w = await openWatch(
      sim,
      'sim-2',
      '/apis/apps/v1/namespaces/default/deployments',
      { labelSelector: 'app.kubernetes.io/managed-by=fleet' },
    );
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('manual', { team: 'a' }),
    });
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('managed'),
    });
    const relabel = (name: string, value: string | null) =>
      apps.patchNamespacedDeployment({
        namespace: 'default',
        name,
        body: [
          value === null
            ? {
                op: 'remove',
                path: '/metadata/labels/app.kubernetes.io~1managed-by',
              }
            : {
                op: 'add',
                path: '/metadata/labels/app.kubernetes.io~1managed-by',
                value,
              },
        ],
      });
    const unlabelled = await relabel('managed', null);
    await relabel('manual', 'fleet');
    await until('manual joining', () =>
      w.events.find(
        e => e.type === 'ADDED' && e.object.metadata.name === 'manual',
      ),
    );
    w.stop();
    const byName = w.events.map(e => `${e.type} ${e.object.metadata.name}`);
    // MODIFIED events are the Deployment controller's status writes while matching
    expect(byName.filter(e => !e.startsWith('MODIFIED'))).toEqual([
      'ADDED managed',
      'DELETED managed',
      'ADDED manual',
    ]);
    const left = byName.indexOf('DELETED managed');
    const joined = byName.indexOf('ADDED manual');
    // not shown before it joined, nor after it left
    expect(byName.slice(0, joined).some(e => e.endsWith(' manual'))).toBe(
      false,
    );
    expect(byName.slice(left + 1).some(e => e.endsWith(' managed'))).toBe(
      false,
    );
    // leaving the selection: the previous state, at the change's resourceVersion
    const gone = w.events.find(e => e.type === 'DELETED')!;
    expect(gone.object.metadata.labels).toEqual(FLEET);
    expect(gone.object.metadata.resourceVersion).toBe(
      unlabelled.metadata!.resourceVersion,
    );
  });

  it('streams the controllers’ writes: Pods created, becoming ready, and deleted, with no other request', async () => {
    const { apps } = clients(fast, 'sim-1');
    const pods = await openWatch(
      fast,
      'sim-1',
      '/api/v1/namespaces/default/pods',
      {
        labelSelector: 'app=pods-demo',
      },
    );
    const deployments = await openWatch(
      fast,
      'sim-1',
      '/apis/apps/v1/namespaces/default/deployments',
    );
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('pods-demo', FLEET, 2),
    });
    // Nothing else reads the cluster from here: the controllers run while watches are open.
    const readyPods = () =>
      new Set(
        pods.events
          .filter(
            e =>
              e.type === 'MODIFIED' &&
              (e.object.status.conditions ?? []).some(
                (c: any) => c.type === 'Ready' && c.status === 'True',
              ),
          )
          .map(e => e.object.metadata.name),
      );
    await until('two ready pods', () => readyPods().size === 2);
    const available = await until('the Deployment available', () =>
      deployments.events.find(
        e => e.type === 'MODIFIED' && e.object.status?.availableReplicas === 2,
      ),
    );
    expect(available.object.metadata.name).toBe('pods-demo');
    const added = pods.events.filter(e => e.type === 'ADDED');
    expect(added).toHaveLength(2);
    expect(added[0].object).toMatchObject({
      kind: 'Pod',
      apiVersion: 'v1',
      status: { phase: 'Pending' },
    });
    await apps.patchNamespacedDeployment({
      namespace: 'default',
      name: 'pods-demo',
      body: [{ op: 'replace', path: '/spec/replicas', value: 0 }],
    });
    await until('both pods deleted', () =>
      pods.events.filter(e => e.type === 'DELETED').length === 2
        ? true
        : undefined,
    );
    const seen = rvs(pods.events);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    pods.stop();
    deployments.stop();
  });

  it('filters by field selector as fields change: a Pod is ADDED when it becomes Running', async () => {
    const { apps } = clients(fast, 'sim-1');
    const running = await openWatch(
      fast,
      'sim-1',
      '/api/v1/namespaces/default/pods',
      { labelSelector: 'app=phases', fieldSelector: 'status.phase=Running' },
    );
    const all = await openWatch(
      fast,
      'sim-1',
      '/api/v1/namespaces/default/pods',
      {
        labelSelector: 'app=phases',
      },
    );
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('phases', FLEET, 1),
    });
    const added = await until('the running pod', () =>
      running.events.find(e => e.type === 'ADDED'),
    );
    expect(added.object.status.phase).toBe('Running');
    // the watch of every phase saw it first as Pending (its stream is another connection: its
    // events may arrive after the other watch's)
    await until('the watch of every phase', () => all.events[0]);
    expect(all.events[0]).toMatchObject({
      type: 'ADDED',
      object: { status: { phase: 'Pending' } },
    });
    expect(Number(added.object.metadata.resourceVersion)).toBeGreaterThan(
      Number(all.events[0].object.metadata.resourceVersion),
    );
    await apps.deleteNamespacedDeployment({
      namespace: 'default',
      name: 'phases',
    });
    running.stop();
    all.stop();
  });

  it('serves group APIs and CRDs across all namespaces: the Argo Rollouts controller’s writes', async () => {
    const { custom } = clients(fast, 'sim-2');
    const w = await openWatch(
      fast,
      'sim-2',
      '/apis/argoproj.io/v1alpha1/rollouts',
      {
        resourceVersion: '0',
      },
    );
    await custom.createNamespacedCustomObject({
      group: 'argoproj.io',
      version: 'v1alpha1',
      namespace: 'default',
      plural: 'rollouts',
      body: {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Rollout',
        metadata: { name: 'pay', labels: FLEET },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'pay' } },
          template: {
            metadata: { labels: { app: 'pay' } },
            spec: { containers: [{ name: 'app', image: 'pay:1' }] },
          },
          strategy: { canary: { steps: [{ setWeight: 50 }] } },
        },
      },
    });
    const healthy = await until('the Rollout healthy', () =>
      w.events.find(
        e => e.type === 'MODIFIED' && e.object.status?.phase === 'Healthy',
      ),
    );
    w.stop();
    expect(w.events[0]).toMatchObject({
      type: 'ADDED',
      object: { kind: 'Rollout', apiVersion: 'argoproj.io/v1alpha1' },
    });
    expect(healthy.object.status.availableReplicas).toBe(2);
  });

  it('shows a CRD served in two versions under the version the watch asked for', async () => {
    sim.setCrd('sim-1', 'virtualservices.networking.istio.io', true);
    const path = (v: string) =>
      `/apis/networking.istio.io/${v}/namespaces/default/virtualservices`;
    const v1 = await openWatch(sim, 'sim-1', path('v1'));
    const v1beta1 = await openWatch(sim, 'sim-1', path('v1beta1'));
    await clients(sim, 'sim-1').custom.createNamespacedCustomObject({
      group: 'networking.istio.io',
      version: 'v1beta1',
      namespace: 'default',
      plural: 'virtualservices',
      body: {
        apiVersion: 'networking.istio.io/v1beta1',
        kind: 'VirtualService',
        metadata: { name: 'pay' },
        spec: { hosts: ['pay'] },
      },
    });
    await until('both events', () => v1.events.length && v1beta1.events.length);
    v1.stop();
    v1beta1.stop();
    expect(v1.events[0].object.apiVersion).toBe('networking.istio.io/v1');
    expect(v1beta1.events[0].object.apiVersion).toBe(
      'networking.istio.io/v1beta1',
    );
    expect(v1.events[0].object.spec).toEqual({ hosts: ['pay'] });
  });
});

describe('watch history and 410 Expired', () => {
  it('answers a watch from a version older than the kept history with an ERROR 410 Expired, then ends', async () => {
    const { core } = clients(sim, 'sim-3');
    const old = (await core.listNamespacedService({ namespace: 'default' }))
      .metadata!.resourceVersion!;
    await core.createNamespace({ body: { metadata: { name: 'moved-on' } } });
    const oldest = sim.expireWatchHistory('sim-3');
    expect(Number(oldest)).toBeGreaterThan(Number(old));
    const w = await openWatch(
      sim,
      'sim-3',
      '/api/v1/namespaces/default/services',
      {
        resourceVersion: old,
      },
    );
    await expect(w.done).resolves.toBeNull(); // the server ends the stream after the error
    expect(w.events).toEqual([
      {
        type: 'ERROR',
        object: {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `too old resource version: ${old} (${oldest})`,
          reason: 'Expired',
          code: 410,
        },
      },
    ]);
    // from the compaction point on, watching works
    const fresh = await openWatch(sim, 'sim-3', '/api/v1/namespaces', {
      resourceVersion: oldest,
    });
    await core.deleteNamespace({ name: 'moved-on' });
    await until('the DELETED', () => fresh.events.length === 1);
    expect(fresh.events[0].type).toBe('DELETED');
    fresh.stop();
  });

  it('keeps a bounded window of changes (historyLimit)', async () => {
    const small = await KubeSimulator.start({
      clusters: ['tiny'],
      watch: { historyLimit: 3 },
    });
    try {
      const { core } = clients(small, 'tiny');
      const start = (await core.listNamespace()).metadata!.resourceVersion!;
      for (const name of ['n1', 'n2']) {
        await core.createNamespace({ body: { metadata: { name } } });
      }
      const inWindow = await openWatch(small, 'tiny', '/api/v1/namespaces', {
        resourceVersion: start,
      });
      await until('the replay', () => inWindow.events.length === 2);
      inWindow.stop();
      for (const name of ['n3', 'n4']) {
        await core.createNamespace({ body: { metadata: { name } } });
      }
      const tooOld = await openWatch(small, 'tiny', '/api/v1/namespaces', {
        resourceVersion: start,
      });
      await tooOld.done;
      expect(tooOld.events.map(e => [e.type, e.object.code])).toEqual([
        ['ERROR', 410],
      ]);
    } finally {
      await small.stop();
    }
  });

  it('lets client-node’s informer recover from 410 by relisting, catching up on what it missed', async () => {
    const { kc, apps } = clients(fast, 'sim-2');
    let lists = 0;
    for (const name of ['keep', 'goes']) {
      await apps.createNamespacedDeployment({
        namespace: 'default',
        body: deployment(name),
      });
    }
    const informer = makeInformer(
      kc,
      '/apis/apps/v1/namespaces/default/deployments',
      () => {
        lists += 1;
        return apps.listNamespacedDeployment({ namespace: 'default' });
      },
      'app.kubernetes.io/managed-by=fleet',
    );
    const log: string[] = [];
    informer.on('add', o => log.push(`add ${o.metadata!.name}`));
    informer.on('delete', o => log.push(`delete ${o.metadata!.name}`));
    let stopped = false;
    informer.on('error', () => {
      // what an informer's owner does: start again after an error
      if (!stopped)
        setTimeout(() => informer.start().catch(() => undefined), 50);
    });
    await informer.start();
    await until('the initial list', () => log.length >= 2);
    expect(lists).toBe(1);
    // The cluster stops answering for a moment: the open watch goes silent for good, and the
    // changes made after it are not streamed to it.
    fast.setFault('sim-2', { mode: 'timeout' });
    await until(
      'the watch silenced',
      () => fast.openWatches('sim-2') === 1 || undefined,
    );
    fast.setFault('sim-2', { mode: 'ok' });
    await apps.deleteNamespacedDeployment({
      namespace: 'default',
      name: 'goes',
    });
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('new'),
    });
    fast.expireWatchHistory('sim-2');
    expect(fast.dropWatches('sim-2')).toBeGreaterThanOrEqual(1);
    // The informer's watch resumes from its last resourceVersion: 410, so it relists.
    await until(
      'the relist',
      () => log.includes('add new') && log.includes('delete goes'),
    );
    expect(lists).toBe(2);
    expect(
      informer
        .list()
        .map(o => o.metadata!.name)
        .sort(),
    ).toEqual(['keep', 'new']);
    // and it keeps watching afterwards
    await apps.deleteNamespacedDeployment({
      namespace: 'default',
      name: 'keep',
    });
    await until('the live delete', () => log.includes('delete keep'));
    stopped = true;
    await informer.stop();
    await until(
      'the watch closed',
      () => fast.openWatches('sim-2') === 0 || undefined,
    );
  });
});

describe('bookmarks, timeouts and bad requests', () => {
  it('sends BOOKMARK events carrying only the resourceVersion when asked', async () => {
    const { core } = clients(fast, 'sim-1');
    const w = await openWatch(fast, 'sim-1', '/api/v1/namespaces', {
      allowWatchBookmarks: true,
      resourceVersion: (await core.listNamespace()).metadata!.resourceVersion!,
    });
    const plain = await openWatch(fast, 'sim-1', '/api/v1/namespaces', {
      resourceVersion: (await core.listNamespace()).metadata!.resourceVersion!,
    });
    await until('two bookmarks', () =>
      w.events.filter(e => e.type === 'BOOKMARK').length >= 2
        ? true
        : undefined,
    );
    w.stop();
    plain.stop();
    const bookmark = w.events.find(e => e.type === 'BOOKMARK')!;
    expect(bookmark.object).toEqual({
      kind: 'Namespace',
      apiVersion: 'v1',
      metadata: { resourceVersion: expect.stringMatching(/^[0-9]+$/) },
    });
    expect(plain.events.filter(e => e.type === 'BOOKMARK')).toEqual([]);
  });

  it('ends the stream after timeoutSeconds, and after the server’s default timeout without it', async () => {
    const short = await openWatch(sim, 'sim-1', '/api/v1/namespaces', {
      timeoutSeconds: 1,
    });
    await expect(short.done).resolves.toBeNull();
    const started = Date.now();
    const unbounded = await openWatch(fast, 'sim-1', '/api/v1/namespaces', {
      resourceVersion: (
        await clients(fast, 'sim-1').core.listNamespace()
      ).metadata!.resourceVersion!,
    });
    expect(fast.openWatches('sim-1')).toBeGreaterThanOrEqual(1);
    await expect(unbounded.done).resolves.toBeNull();
    // the default is minTimeoutMs (1.5 s here) to twice that
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
  });

  it('sends the initial state then an initial-events-end BOOKMARK with sendInitialEvents', async () => {
    const w = await openWatch(fast, 'sim-1', '/api/v1/namespaces', {
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
      allowWatchBookmarks: true,
    });
    await until('the end of initial events', () =>
      w.events.find(e => e.type === 'BOOKMARK'),
    );
    w.stop();
    const end = w.events.findIndex(e => e.type === 'BOOKMARK');
    expect(w.events.slice(0, end).every(e => e.type === 'ADDED')).toBe(true);
    expect(end).toBeGreaterThanOrEqual(4);
    expect(w.events[end].object.metadata.annotations).toEqual({
      'k8s.io/initial-events-end': 'true',
    });
  });

  it('answers a version the cluster has not reached with a 504 Too large resource version ERROR', async () => {
    const w = await openWatch(fast, 'sim-1', '/api/v1/namespaces', {
      resourceVersion: '999999999',
    });
    await w.done;
    expect(w.events).toEqual([
      {
        type: 'ERROR',
        object: expect.objectContaining({
          code: 504,
          reason: 'Timeout',
          message: expect.stringMatching(
            /^Too large resource version: 999999999, current: [0-9]+$/,
          ),
        }),
      },
    ]);
  });

  it('waits for a version the cluster is about to reach, then streams what follows it', async () => {
    const { core } = clients(sim, 'sim-1');
    const current = Number(
      (await core.listNamespace()).metadata!.resourceVersion,
    );
    const w = await openWatch(sim, 'sim-1', '/api/v1/namespaces', {
      resourceVersion: String(current + 1),
    });
    await core.createNamespace({ body: { metadata: { name: 'wait-a' } } });
    await core.createNamespace({ body: { metadata: { name: 'wait-b' } } });
    await until('wait-b', () => w.events.length >= 1);
    w.stop();
    expect(w.events.map(e => `${e.type} ${e.object.metadata.name}`)).toEqual([
      'ADDED wait-b',
    ]);
  });

  it('rejects bad watch parameters with a 400 or 422 that says what is wrong', async () => {
    const base = '/api/v1/namespaces?watch=true';
    const bad = await raw(sim, 'sim-1', `${base}&resourceVersion=abc`);
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).message).toContain('resourceVersion');
    const match = await raw(
      sim,
      'sim-1',
      `${base}&resourceVersionMatch=NotOlderThan`,
    );
    expect(match.status).toBe(422);
    expect(JSON.parse(match.text).message).toContain(
      'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
    );
    const initial = await raw(sim, 'sim-1', `${base}&sendInitialEvents=true`);
    expect(initial.status).toBe(422);
    expect(JSON.parse(initial.text).message).toContain(
      'sendInitialEvents requires setting allowWatchBookmarks to true',
    );
    const selector = await raw(
      sim,
      'sim-1',
      `${base}&fieldSelector=spec.nope%3Dx`,
    );
    expect(selector.status).toBe(400);
    expect(JSON.parse(selector.text).message).toBe(
      'field label not supported: spec.nope',
    );
    const flag = await raw(sim, 'sim-1', '/api/v1/namespaces?watch=maybe');
    expect(flag.status).toBe(400);
    const missing = await raw(
      sim,
      'sim-1',
      '/apis/apps/v1/nothings?watch=true',
    );
    expect(missing.status).toBe(404);
  });

  it('streams one JSON event per line over chunked application/json, also on the legacy /watch/ path', async () => {
    const res = await raw(
      sim,
      'sim-1',
      '/api/v1/watch/namespaces/default?timeoutSeconds=1',
    );
    expect(res.status).toBe(200);
    const lines = res.text
      .trim()
      .split('\n')
      .map(l => JSON.parse(l));
    expect(lines).toEqual([
      {
        type: 'ADDED',
        object: expect.objectContaining({
          kind: 'Namespace',
          metadata: expect.objectContaining({ name: 'default' }),
        }),
      },
    ]);
  });
});

describe('faults and test hooks', () => {
  it('ends open watches when the cluster goes down, and refuses new ones', async () => {
    const w = await openWatch(sim, 'sim-2', '/api/v1/namespaces', {
      resourceVersion: '0',
    });
    await until('the initial events', () => w.events.length >= 4);
    expect(sim.openWatches('sim-2')).toBe(1);
    sim.setFault('sim-2', { mode: 'down' });
    try {
      await w.done;
      await until(
        'no open watch',
        () => sim.openWatches('sim-2') === 0 || undefined,
      );
      const refused = await openWatch(sim, 'sim-2', '/api/v1/namespaces');
      const err = (await refused.done) as Error;
      expect(err).toBeInstanceOf(Error);
      expect(refused.events).toEqual([]);
    } finally {
      sim.setFault('sim-2', { mode: 'ok' });
    }
  });

  it('leaves open watches silent for good when the cluster stops answering (timeout fault)', async () => {
    const w = await openWatch(sim, 'sim-2', '/api/v1/namespaces', {
      resourceVersion: '0',
    });
    await until('the initial events', () => w.events.length >= 4);
    const before = w.events.length;
    sim.setFault('sim-2', { mode: 'timeout' });
    const label = (value: string) =>
      sim.drift('sim-2', {
        kind: 'Namespace',
        name: 'default',
        patch: { metadata: { labels: { probe: value } } },
      });
    try {
      label('during');
      sim.setFault('sim-2', { mode: 'ok' });
      label('after');
      // the same change reaches a new watch: the old one stays open but hears nothing
      const fresh = await openWatch(sim, 'sim-2', '/api/v1/namespaces', {
        resourceVersion: '0',
      });
      await until('the new watch', () =>
        fresh.events.find(e => e.object.metadata.labels?.probe === 'after'),
      );
      expect(w.events).toHaveLength(before);
      expect(sim.openWatches('sim-2')).toBe(2);
      fresh.stop();
      w.stop();
      await until(
        'both closed',
        () => sim.openWatches('sim-2') === 0 || undefined,
      );
    } finally {
      sim.setFault('sim-2', { mode: 'ok' });
    }
  });

  it('counts open watches, and drops them on demand', async () => {
    const a = await openWatch(sim, 'sim-3', '/api/v1/namespaces');
    const b = await openWatch(sim, 'sim-3', '/apis/apps/v1/deployments');
    await until(
      'two open watches',
      () => sim.openWatches('sim-3') === 2 || undefined,
    );
    a.stop();
    await until(
      'one open watch',
      () => sim.openWatches('sim-3') === 1 || undefined,
    );
    expect(sim.dropWatches('sim-3')).toBe(1);
    await b.done;
    expect(sim.openWatches('sim-3')).toBe(0);
  });

  it('denies listing and watching a resource across all namespaces on demand (403, as RBAC with only namespaced Roles), and serves it per namespace', async () => {
    const { apps, core } = clients(sim, 'sim-3');
    sim.denyClusterScope('sim-3', 'deployments.apps');
    try {
      await expect(apps.listDeploymentForAllNamespaces()).rejects.toMatchObject(
        { code: 403 },
      );
      const w = await openWatch(sim, 'sim-3', '/apis/apps/v1/deployments');
      expect(((await w.done) as { statusCode?: number }).statusCode).toBe(403);
      await expect(
        apps.listNamespacedDeployment({ namespace: 'default' }),
      ).resolves.toMatchObject({ items: expect.any(Array) });
      await expect(core.listServiceForAllNamespaces()).resolves.toMatchObject({
        items: expect.any(Array),
      });
      const control = JSON.parse(
        (await raw(sim, 'sim-3', '/_sim/cluster-scope-denied')).text,
      );
      expect(control).toEqual({ resources: ['deployments.apps'] });
    } finally {
      sim.denyClusterScope('sim-3', 'deployments.apps', false);
    }
    await expect(apps.listDeploymentForAllNamespaces()).resolves.toMatchObject({
      items: expect.any(Array),
    });
  });

  it('serves the same hooks on the control API', async () => {
    const w = await openWatch(sim, 'sim-3', '/api/v1/namespaces', {
      resourceVersion: '0',
    });
    await until('the initial events', () => w.events.length >= 4);
    const info = JSON.parse((await raw(sim, 'sim-3', '/_sim/watches')).text);
    expect(info).toMatchObject({ open: 1, historyLimit: 1000 });
    const expired = JSON.parse(
      (await raw(sim, 'sim-3', '/_sim/watches/expire', 'POST')).text,
    );
    expect(expired.oldestResourceVersion).toBe(info.resourceVersion);
    const dropped = await raw(sim, 'sim-3', '/_sim/watches/drop', 'POST');
    expect(JSON.parse(dropped.text)).toEqual({ dropped: 1 });
    await w.done;
    expect(
      JSON.parse((await raw(sim, 'sim-3', '/_sim/watches')).text).open,
    ).toBe(0);
  });
});

describe('HTTP/2', () => {
  /** A client-go-like HTTP/2 client: the kubeconfig's CA and token, streams on one connection. */
  function http2Client(s: KubeSimulator, cluster: string) {
    const kc = config(s, cluster);
    const server = new URL(kc.getCurrentCluster()!.server);
    const token = kc.getCurrentUser()!.token!;
    const session = connect(server.origin, {
      ca: s.caPem,
      servername: 'localhost',
    });
    session.on('error', () => undefined);
    const watch = (path: string, query: string) => {
      const events: Seen[] = [];
      const stream = session.request({
        [h2.HTTP2_HEADER_PATH]: `${server.pathname}${path}?watch=true&${query}`,
        authorization: `Bearer ${token}`,
      });
      stream.on('error', () => undefined);
      let buffered = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        buffered += chunk;
        const lines = buffered.split('\n');
        buffered = lines.pop()!;
        for (const line of lines) if (line) events.push(JSON.parse(line));
      });
      const status = new Promise<number>(resolve =>
        stream.on('response', headers =>
          resolve(Number(headers[h2.HTTP2_HEADER_STATUS])),
        ),
      );
      const closed = new Promise<number>(resolve =>
        stream.on('close', () => resolve(stream.rstCode ?? -1)),
      );
      return { events, status, closed, stream };
    };
    return { session, watch };
  }

  it('serves watches as streams on one HTTP/2 connection (ALPN h2), 1.1 clients a connection each', async () => {
    const { session, watch } = http2Client(sim, 'sim-1');
    try {
      const a = watch('/api/v1/namespaces', 'resourceVersion=0');
      const b = watch('/apis/apps/v1/deployments', '');
      const c = watch('/api/v1/services', '');
      expect(await Promise.all([a.status, b.status, c.status])).toEqual([
        200, 200, 200,
      ]);
      expect(session.alpnProtocol).toBe('h2');
      await until('the initial events', () => a.events.length >= 4);
      expect(a.events[0].type).toBe('ADDED');
      await until(
        'three open watches',
        () => sim.openWatches('sim-1') === 3 || undefined,
      );
      expect(sim.watchConnections('sim-1')).toBe(1);
      // client-node's Watch speaks HTTP/1.1: a connection of its own
      const one = await openWatch(sim, 'sim-1', '/api/v1/namespaces');
      await until(
        'four open watches',
        () => sim.openWatches('sim-1') === 4 || undefined,
      );
      expect(sim.watchConnections('sim-1')).toBe(2);
      // each connection by its client's port: the HTTP/2 session's among them
      const peers = sim.watchPeerPorts('sim-1');
      expect(peers).toHaveLength(2);
      expect(peers).toContain((session as any).socket.localPort);
      one.stop();
      // a change reaches the HTTP/2 watch as a MODIFIED event
      sim.drift('sim-1', {
        kind: 'Namespace',
        name: 'default',
        patch: { metadata: { labels: { h2: 'yes' } } },
      });
      await until('the change', () =>
        a.events.find(
          e => e.type === 'MODIFIED' && e.object.metadata.labels?.h2 === 'yes',
        ),
      );
    } finally {
      session.destroy();
    }
  });

  it('resets one stream when its watch is dropped, and the whole connection when the cluster goes down', async () => {
    const { session, watch } = http2Client(sim, 'sim-3');
    try {
      const a = watch('/api/v1/namespaces', '');
      const b = watch('/apis/apps/v1/deployments', '');
      await Promise.all([a.status, b.status]);
      await until(
        'two open watches',
        () => sim.openWatches('sim-3') === 2 || undefined,
      );
      // a reset is not a clean end: the stream closes with an error code
      expect(sim.dropWatches('sim-3')).toBe(2);
      expect(await a.closed).not.toBe(h2.NGHTTP2_NO_ERROR);
      expect(await b.closed).not.toBe(h2.NGHTTP2_NO_ERROR);
      expect(session.destroyed).toBe(false);
      // the connection carries on: a new watch opens on it
      const c = watch('/api/v1/namespaces', '');
      expect(await c.status).toBe(200);
      sim.setFault('sim-3', { mode: 'down' });
      try {
        const refused = watch('/api/v1/namespaces', '');
        await refused.closed;
        await c.closed;
        await until(
          'the connection dropped',
          () => session.destroyed || undefined,
        );
      } finally {
        sim.setFault('sim-3', { mode: 'ok' });
      }
    } finally {
      session.destroy();
    }
  });

  it('ends the stream cleanly after timeoutSeconds, as over HTTP/1.1', async () => {
    const { session, watch } = http2Client(fast, 'sim-1');
    try {
      const a = watch('/api/v1/namespaces', 'timeoutSeconds=1');
      expect(await a.status).toBe(200);
      expect(await a.closed).toBe(h2.NGHTTP2_NO_ERROR);
    } finally {
      session.destroy();
    }
  });
});
