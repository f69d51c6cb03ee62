import { ApiError } from './errors';
import { PATCH_TYPES } from './patch';
import { resourceForKind } from './resources';
import { ClusterStore } from './store';

const DEPLOY = resourceForKind('Deployment')!;
const SVC = resourceForKind('Service')!;
const NS = resourceForKind('Namespace')!;
const ROLLOUT = resourceForKind('Rollout')!;
const HPA = resourceForKind('HorizontalPodAutoscaler')!;

function deployment(name: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels: { app: name } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] },
      },
      ...extra,
    },
  };
}

function service(name: string) {
  return {
    metadata: { name },
    spec: { selector: { app: name }, ports: [{ port: 80, targetPort: 8000 }] },
  };
}

function rollout(name: string) {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Rollout',
    metadata: { name },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'a', image: 'x:1' }] },
      },
    },
  };
}

/** A store with a controllable clock. */
function setup(readyDelayMs = 1000) {
  const clock = { now: 1_700_000_000_000 };
  const store = new ClusterStore(readyDelayMs, () => clock.now);
  return { store, clock };
}

function apiErrorOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected an ApiError');
}

const meta = (o: any) => o.metadata;

describe('ClusterStore', () => {
  it('starts with the default namespaces and the kubernetes Service', () => {
    const { store } = setup();
    const names = store
      .objects()
      .map(o => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`);
    expect(names).toEqual(
      expect.arrayContaining([
        'Namespace//default',
        'Namespace//kube-system',
        'Namespace//kube-public',
        'Namespace//kube-node-lease',
        'Service/default/kubernetes',
      ]),
    );
    expect(store.get(SVC, 'default', 'kubernetes').spec).toMatchObject({
      clusterIP: '10.96.0.1',
    });
  });

  it('keeps one increasing resourceVersion per cluster and sets system metadata on create', () => {
    const { store } = setup();
    const a = store.create(DEPLOY, 'default', deployment('a'), {});
    // The controllers' writes (a's ReplicaSet, pods and events, made at the next request) take
    // resourceVersions of the same counter: once they are done, one write is one step.
    const settled = Number(
      store.list(DEPLOY, 'default', {}).metadata.resourceVersion,
    );
    expect(settled).toBeGreaterThan(Number(meta(a).resourceVersion));
    const x = store.create(SVC, 'default', service('x'), {});
    const y = store.create(SVC, 'default', service('y'), {});
    expect(Number(meta(x).resourceVersion)).toBe(settled + 1);
    expect(Number(meta(y).resourceVersion)).toBe(settled + 2);
    expect(meta(a)).toMatchObject({ namespace: 'default', generation: 1 });
    expect(meta(a).creationTimestamp).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
    );
    expect(store.list(SVC, 'default', {}).metadata).toEqual({
      resourceVersion: meta(y).resourceVersion,
    });
  });

  it('rejects a create that carries a resourceVersion, and generates names from generateName', () => {
    const { store } = setup();
    const body = deployment('x');
    (body.metadata as any).resourceVersion = '5';
    expect(
      apiErrorOf(() => store.create(DEPLOY, 'default', body, {})).code,
    ).toBe(400);
    const gen = deployment('web');
    gen.metadata = { generateName: 'web-', labels: { app: 'web' } } as any;
    const created = store.create(DEPLOY, 'default', gen, {});
    expect(meta(created).name).toMatch(/^web-[a-z0-9]{5}$/);
  });

  it('bumps generation only for spec changes, and treats a no-op update as no write', () => {
    const { store } = setup();
    store.create(DEPLOY, 'default', deployment('web'), {});
    // As read back once the deployment controller wrote its revision annotation, which a PUT
    // must carry to leave the object as it is.
    const created = store.get(DEPLOY, 'default', 'web');
    const unchanged = deployment('web');
    (unchanged.metadata as any).annotations = meta(created).annotations;
    const same = store.replace(DEPLOY, 'default', 'web', unchanged, {}).object;
    expect(meta(same).resourceVersion).toBe(meta(created).resourceVersion);

    const withLabel = deployment('web');
    (withLabel.metadata.labels as any).tier = 'front';
    const labelled = store.replace(
      DEPLOY,
      'default',
      'web',
      withLabel,
      {},
    ).object;
    expect(meta(labelled).generation).toBe(1);
    expect(Number(meta(labelled).resourceVersion)).toBeGreaterThan(
      Number(meta(created).resourceVersion),
    );

    const scaled = store.patch(
      DEPLOY,
      'default',
      'web',
      PATCH_TYPES.merge,
      { spec: { replicas: 4 } },
      {},
    );
    expect(meta(scaled).generation).toBe(2);
    expect(scaled.status).toMatchObject({ observedGeneration: 2 });
    const again = store.patch(
      DEPLOY,
      'default',
      'web',
      PATCH_TYPES.merge,
      { spec: { replicas: 4 } },
      {},
    );
    expect(meta(again).resourceVersion).toBe(meta(scaled).resourceVersion);
  });

  it('enforces optimistic concurrency on PUT and PATCH, and requires resourceVersion to PUT custom resources', () => {
    const { store } = setup();
    store.create(DEPLOY, 'default', deployment('web'), {});
    const stale = deployment('web');
    (stale.metadata as any).resourceVersion = '1';
    const conflict = apiErrorOf(() =>
      store.replace(DEPLOY, 'default', 'web', stale, {}),
    );
    expect(conflict.code).toBe(409);
    expect(conflict.message).toBe(
      'Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again',
    );
    const patchConflict = apiErrorOf(() =>
      store.patch(
        DEPLOY,
        'default',
        'web',
        PATCH_TYPES.merge,
        { metadata: { resourceVersion: '1' }, spec: { replicas: 1 } },
        {},
      ),
    );
    expect(patchConflict.code).toBe(409);

    const ro = store.create(ROLLOUT, 'default', rollout('r'), {});
    expect(
      apiErrorOf(() => store.replace(ROLLOUT, 'default', 'r', rollout('r'), {}))
        .code,
    ).toBe(422);
    const body = rollout('r');
    (body.metadata as any).resourceVersion = meta(ro).resourceVersion;
    body.spec.replicas = 3;
    const updated = store.replace(ROLLOUT, 'default', 'r', body, {}).object;
    expect(meta(updated).generation).toBe(2);
  });

  it('rejects a PUT whose name or namespace does not match the URL, and 404s a missing object', () => {
    const { store } = setup();
    store.create(DEPLOY, 'default', deployment('web'), {});
    expect(
      apiErrorOf(() =>
        store.replace(DEPLOY, 'default', 'web', deployment('other'), {}),
      ).code,
    ).toBe(400);
    const wrongNs = deployment('web');
    (wrongNs.metadata as any).namespace = 'kube-system';
    expect(
      apiErrorOf(() => store.replace(DEPLOY, 'default', 'web', wrongNs, {}))
        .code,
    ).toBe(400);
    expect(
      apiErrorOf(() =>
        store.replace(DEPLOY, 'default', 'nope', deployment('nope'), {}),
      ).code,
    ).toBe(404);
    expect(
      apiErrorOf(() =>
        store.patch(DEPLOY, 'default', 'nope', PATCH_TYPES.merge, {}, {}),
      ).code,
    ).toBe(404);
  });

  it('ignores status on the main resource and changes only status through /status', () => {
    const { store } = setup();
    store.create(
      SVC,
      'default',
      {
        metadata: { name: 'lb' },
        spec: { type: 'LoadBalancer', ports: [{ port: 80 }] },
      },
      {},
    );
    const ingress = { loadBalancer: { ingress: [{ ip: '203.0.113.7' }] } };
    const viaMain = store.patch(
      SVC,
      'default',
      'lb',
      PATCH_TYPES.merge,
      { status: ingress },
      {},
    );
    expect(viaMain.status).toEqual({ loadBalancer: {} });
    const viaStatus = store.patch(
      SVC,
      'default',
      'lb',
      PATCH_TYPES.merge,
      { spec: { sessionAffinity: 'ClientIP' }, status: ingress },
      { subresource: 'status' },
    );
    expect(viaStatus.spec.sessionAffinity).toBe('None');
    expect(viaStatus.status).toEqual(ingress);
  });

  it('validates like the API server: selector/labels, immutable selector, DNS-1035 Service names', () => {
    const { store } = setup();
    const mismatch = deployment('web');
    mismatch.spec.template.metadata.labels = { app: 'other' };
    const invalid = apiErrorOf(() =>
      store.create(DEPLOY, 'default', mismatch, {}),
    );
    expect(invalid.code).toBe(422);
    expect(invalid.message).toContain(
      '`selector` does not match template `labels`',
    );

    store.create(DEPLOY, 'default', deployment('web'), {});
    const moved = deployment('web');
    moved.spec.selector = { matchLabels: { app: 'web', extra: 'x' } } as any;
    (moved.spec.template.metadata.labels as any).extra = 'x';
    expect(
      apiErrorOf(() => store.replace(DEPLOY, 'default', 'web', moved, {}))
        .message,
    ).toContain('field is immutable');

    const badLabel = deployment('lbl');
    (badLabel.metadata.labels as any)['bad key!'] = 'v';
    expect(
      apiErrorOf(() => store.create(DEPLOY, 'default', badLabel, {})).code,
    ).toBe(422);

    const svc = { metadata: { name: '1abc' }, spec: { ports: [{ port: 80 }] } };
    const svcErr = apiErrorOf(() => store.create(SVC, 'default', svc, {}));
    expect(svcErr.code).toBe(422);
    expect(svcErr.message).toContain('DNS-1035');
    const noPortName = {
      metadata: { name: 'two' },
      spec: { ports: [{ port: 80 }, { port: 81 }] },
    };
    expect(
      apiErrorOf(() => store.create(SVC, 'default', noPortName, {})).message,
    ).toContain('spec.ports[0].name');
  });

  it('stores container requests and limits in canonical form; a patch back to the same values is no write', () => {
    const { store } = setup();
    const withResources = (resources: unknown) => {
      const body = deployment('sized');
      (body.spec.template.spec.containers[0] as any).resources = resources;
      (body.spec.template.spec as any).initContainers = [
        { name: 'init', image: 'busybox:1.36', resources },
      ];
      return body;
    };
    const sent = {
      requests: { cpu: '0.5', memory: '1024Mi' },
      limits: { cpu: 2, memory: '1.5Gi' },
    };
    const stored = {
      requests: { cpu: '500m', memory: '1Gi' },
      limits: { cpu: '2', memory: '1536Mi' },
    };
    store.create(DEPLOY, 'default', withResources(sent), {});
    const created = store.get(DEPLOY, 'default', 'sized');
    const podSpec = (o: any) => o.spec.template.spec;
    expect(podSpec(created).containers[0].resources).toEqual(stored);
    expect(podSpec(created).initContainers[0].resources).toEqual(stored);

    const again = store.patch(
      DEPLOY,
      'default',
      'sized',
      PATCH_TYPES.merge,
      {
        spec: {
          template: {
            spec: {
              containers: [
                { name: 'app', image: 'nginx:1.25', resources: sent },
              ],
            },
          },
        },
      },
      {},
    );
    expect(meta(again).resourceVersion).toBe(meta(created).resourceVersion);
    expect(meta(again).generation).toBe(1);

    const replaced = withResources({ requests: { cpu: '1000m' } });
    (replaced.metadata as any).resourceVersion = meta(created).resourceVersion;
    const put = store.replace(DEPLOY, 'default', 'sized', replaced, {});
    expect(podSpec(put.object).containers[0].resources).toEqual({
      requests: { cpu: '1' },
    });

    // a custom resource keeps what was sent
    const ro = rollout('r');
    (ro.spec.template.spec.containers[0] as any).resources = sent;
    const storedRollout = store.create(ROLLOUT, 'default', ro, {});
    expect(podSpec(storedRollout).containers[0].resources).toEqual(sent);
  });

  it('rejects a quantity that does not parse as the decoder does, and a negative or above-limit one as Invalid', () => {
    const { store } = setup();
    const sized = (name: string, resources: unknown) => {
      const body = deployment(name);
      (body.spec.template.spec.containers[0] as any).resources = resources;
      return body;
    };
    const regexp =
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
    const undecodable = apiErrorOf(() =>
      store.create(
        DEPLOY,
        'default',
        sized('bad', { requests: { cpu: 'half' } }),
        {},
      ),
    );
    expect(undecodable.toStatus()).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: `Deployment in version "v1" cannot be handled as a Deployment: ${regexp}`,
    });
    expect(
      apiErrorOf(() =>
        store.create(
          DEPLOY,
          'default',
          sized('bad', { limits: { memory: '512mi' } }),
          {},
        ),
      ).message,
    ).toContain("unable to parse quantity's suffix");

    store.create(DEPLOY, 'default', deployment('web'), {});
    const badPatch = apiErrorOf(() =>
      store.patch(
        DEPLOY,
        'default',
        'web',
        PATCH_TYPES.strategic,
        {
          spec: {
            template: {
              spec: {
                containers: [
                  { name: 'app', resources: { limits: { cpu: 'lots' } } },
                ],
              },
            },
          },
        },
        {},
      ),
    );
    expect(badPatch.code).toBe(422);
    expect(badPatch.reason).toBe('Invalid');
    expect(badPatch.message).toMatch(
      /^ "" is invalid: patch: Invalid value: "\{/,
    );
    expect(badPatch.message).toContain(`: ${regexp}`);

    const negative = apiErrorOf(() =>
      store.create(
        DEPLOY,
        'default',
        sized('neg', { requests: { cpu: '-0.5' } }),
        {},
      ),
    );
    expect(negative.code).toBe(422);
    expect(negative.message).toBe(
      'Deployment.apps "neg" is invalid: spec.template.spec.containers[0].resources.requests[cpu]: Invalid value: "-500m": must be greater than or equal to 0',
    );
    const aboveLimit = apiErrorOf(() =>
      store.create(
        DEPLOY,
        'default',
        sized('over', {
          requests: { memory: '2Gi' },
          limits: { memory: '1024Mi' },
        }),
        {},
      ),
    );
    expect(aboveLimit.message).toBe(
      'Deployment.apps "over" is invalid: spec.template.spec.containers[0].resources.requests: Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi',
    );
    expect(store.objects().some(o => o.metadata.name === 'over')).toBe(false);
  });

  it('allocates unique clusterIPs and nodePorts, keeps them across updates, frees them on delete', () => {
    const { store } = setup();
    const a = store.create(
      SVC,
      'default',
      { metadata: { name: 'a' }, spec: { ports: [{ port: 80 }] } },
      {},
    );
    const b = store.create(
      SVC,
      'default',
      {
        metadata: { name: 'b' },
        spec: { type: 'NodePort', ports: [{ port: 80 }] },
      },
      {},
    );
    expect(a.spec.clusterIP).not.toBe(b.spec.clusterIP);
    expect(a.spec.clusterIPs).toEqual([a.spec.clusterIP]);
    const nodePort = b.spec.ports[0].nodePort;
    expect(nodePort).toBeGreaterThanOrEqual(30000);
    const updated = store.replace(
      SVC,
      'default',
      'b',
      {
        metadata: { name: 'b' },
        spec: {
          type: 'NodePort',
          ports: [{ port: 80 }],
          selector: { app: 'b' },
        },
      },
      {},
    ).object;
    expect(updated.spec.ports[0].nodePort).toBe(nodePort);
    expect(updated.spec.clusterIP).toBe(b.spec.clusterIP);
    const taken = apiErrorOf(() =>
      store.create(
        SVC,
        'default',
        {
          metadata: { name: 'c' },
          spec: { clusterIP: a.spec.clusterIP, ports: [{ port: 80 }] },
        },
        {},
      ),
    );
    expect(taken.message).toContain('provided IP is already allocated');
    const headless = store.create(
      SVC,
      'default',
      {
        metadata: { name: 'h' },
        spec: { clusterIP: 'None', ports: [{ port: 80 }] },
      },
      {},
    );
    expect(headless.spec.clusterIPs).toEqual(['None']);
    const deleted = store.delete(SVC, 'default', 'a', undefined, {});
    expect(deleted.object?.kind).toBe('Service'); // Services answer DELETE with the object
    const reuse = store.create(
      SVC,
      'default',
      {
        metadata: { name: 'c' },
        spec: { clusterIP: a.spec.clusterIP, ports: [{ port: 80 }] },
      },
      {},
    );
    expect(reuse.spec.clusterIP).toBe(a.spec.clusterIP);
    expect(
      store.create(
        SVC,
        'default',
        { metadata: { name: 'put' }, spec: { ports: [{ port: 1 }] } },
        { dryRun: true },
      ).spec.clusterIP,
    ).toBeDefined();
  });

  it('deletes with a Success Status, honours finalizers and preconditions, and cascades namespaces', () => {
    const { store } = setup();
    const created = store.create(DEPLOY, 'default', deployment('web'), {});
    const wrongUid = apiErrorOf(() =>
      store.delete(
        DEPLOY,
        'default',
        'web',
        { preconditions: { uid: 'x' } },
        {},
      ),
    );
    expect(wrongUid.code).toBe(409);
    const res = store.delete(DEPLOY, 'default', 'web', undefined, {});
    expect(res.status).toMatchObject({
      kind: 'Status',
      status: 'Success',
      details: {
        name: 'web',
        group: 'apps',
        kind: 'deployments',
        uid: meta(created).uid,
      },
    });
    expect(apiErrorOf(() => store.get(DEPLOY, 'default', 'web')).code).toBe(
      404,
    );
    expect(
      apiErrorOf(() => store.delete(DEPLOY, 'default', 'web', undefined, {}))
        .code,
    ).toBe(404);

    const fin = deployment('fin');
    (fin.metadata as any).finalizers = ['example.com/hold'];
    store.create(DEPLOY, 'default', fin, {});
    const terminating = store.delete(DEPLOY, 'default', 'fin', undefined, {});
    expect(meta(terminating.object).deletionTimestamp).toBeDefined();
    expect(
      meta(store.get(DEPLOY, 'default', 'fin')).deletionTimestamp,
    ).toBeDefined();
    store.patch(
      DEPLOY,
      'default',
      'fin',
      PATCH_TYPES.merge,
      { metadata: { finalizers: null } },
      {},
    );
    expect(apiErrorOf(() => store.get(DEPLOY, 'default', 'fin')).code).toBe(
      404,
    );

    store.create(NS, undefined, { metadata: { name: 'team' } }, {});
    store.create(DEPLOY, 'team', deployment('inside'), {});
    const ns = store.delete(NS, undefined, 'team', undefined, {});
    expect(ns.object?.status).toEqual({ phase: 'Terminating' });
    expect(store.objects().some(o => o.metadata.namespace === 'team')).toBe(
      false,
    );
  });

  it('does not persist dry-run writes', () => {
    const { store } = setup();
    const rv = store.resourceVersion();
    store.create(DEPLOY, 'default', deployment('dry'), { dryRun: true });
    expect(store.resourceVersion()).toBe(rv);
    expect(apiErrorOf(() => store.get(DEPLOY, 'default', 'dry')).code).toBe(
      404,
    );
  });

  it('lists with label selectors, field selectors and limit/continue pages', () => {
    const { store } = setup();
    for (const [name, env] of [
      ['a', 'prod'],
      ['b', 'dev'],
      ['c', 'prod'],
      ['d', 'qa'],
    ]) {
      const d = deployment(name);
      (d.metadata.labels as any).env = env;
      store.create(DEPLOY, 'default', d, {});
    }
    const names = (q: object) =>
      store.list(DEPLOY, 'default', q).items.map((i: any) => i.metadata.name);
    expect(names({ labelSelector: 'env=prod' })).toEqual(['a', 'c']);
    expect(names({ labelSelector: 'env=prod,app=c' })).toEqual(['c']);
    expect(names({ labelSelector: 'env!=prod' })).toEqual(['b', 'd']);
    expect(names({ labelSelector: 'env in (dev,qa)' })).toEqual(['b', 'd']);
    expect(names({ labelSelector: '!env' })).toEqual([]);
    expect(names({ fieldSelector: 'metadata.name=b' })).toEqual(['b']);
    expect(() => names({ labelSelector: 'env in (' })).toThrow(ApiError);
    const first = store.list(DEPLOY, 'default', { limit: 3 });
    expect(first.items).toHaveLength(3);
    expect(first.metadata).toMatchObject({ remainingItemCount: 1 });
    const second = store.list(DEPLOY, 'default', {
      limit: 3,
      continueToken: first.metadata.continue,
    });
    expect(second.items.map((i: any) => i.metadata.name)).toEqual(['d']);
    expect(second.metadata.continue).toBeUndefined();
    expect(first.items[0].kind).toBeUndefined(); // built-in list items carry no kind
    store.create(ROLLOUT, 'default', rollout('r'), {});
    expect(store.list(ROLLOUT, 'default', {}).items[0].kind).toBe('Rollout');
    expect(store.list(DEPLOY, undefined, {}).items).toHaveLength(4);
  });

  it('simulates Deployment rollout status over time, with omitted zero counters', () => {
    const { store, clock } = setup(1000);
    store.create(DEPLOY, 'default', deployment('web'), {});
    let status = store.get(DEPLOY, 'default', 'web').status;
    expect(status).toMatchObject({
      observedGeneration: 1,
      replicas: 2,
      updatedReplicas: 2,
      unavailableReplicas: 2,
    });
    expect(status.availableReplicas).toBeUndefined();
    clock.now += 1000;
    status = store.get(DEPLOY, 'default', 'web').status;
    expect(status).toMatchObject({ readyReplicas: 2, availableReplicas: 2 });
    expect(
      status.conditions.map((c: any) => `${c.type}=${c.status}/${c.reason}`),
    ).toEqual([
      'Available=True/MinimumReplicasAvailable',
      'Progressing=True/NewReplicaSetAvailable',
    ]);
    // a new template: a surge pod is created, the old pods stay available until it is ready
    store.patch(
      DEPLOY,
      'default',
      'web',
      PATCH_TYPES.strategic,
      {
        spec: {
          template: {
            spec: { containers: [{ name: 'app', image: 'nginx:1.26' }] },
          },
        },
      },
      {},
    );
    status = store.get(DEPLOY, 'default', 'web').status;
    expect(status).toMatchObject({
      observedGeneration: 2,
      replicas: 3,
      updatedReplicas: 1,
      availableReplicas: 2,
    });
    expect(status.conditions[1].reason).toBe('ReplicaSetUpdated');
    clock.now += 1000;
    status = store.get(DEPLOY, 'default', 'web').status;
    expect(status).toMatchObject({
      replicas: 2,
      updatedReplicas: 2,
      availableReplicas: 2,
    });
    // scaling only: all pods are "updated", the new ones not yet available
    store.patch(
      DEPLOY,
      'default',
      'web',
      PATCH_TYPES.merge,
      { spec: { replicas: 4 } },
      {},
    );
    status = store.get(DEPLOY, 'default', 'web').status;
    expect(status).toMatchObject({
      replicas: 4,
      updatedReplicas: 4,
      availableReplicas: 2,
      unavailableReplicas: 2,
    });
    // crash-looping pods: nothing available, the completed rollout stays complete
    clock.now += 1000;
    store.setReadiness({ neverReady: true });
    status = store.get(DEPLOY, 'default', 'web').status;
    expect(status.availableReplicas).toBeUndefined();
    expect(status.conditions.map((c: any) => `${c.type}=${c.status}`)).toEqual([
      'Available=False',
      'Progressing=True',
    ]);
  });

  it('never makes replicas available with neverReady, and reports ProgressDeadlineExceeded', () => {
    const { store, clock } = setup(0);
    store.readiness.neverReady = true;
    store.create(
      DEPLOY,
      'default',
      deployment('stuck', { progressDeadlineSeconds: 5 }),
      {},
    );
    clock.now += 6000;
    const status = store.get(DEPLOY, 'default', 'stuck').status;
    expect(status.availableReplicas).toBeUndefined();
    expect(
      status.conditions.find((c: any) => c.type === 'Progressing'),
    ).toMatchObject({
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
    });
  });

  it('gives Rollouts an Argo-style status', () => {
    const { store, clock } = setup(100);
    store.create(ROLLOUT, 'default', rollout('r'), {});
    expect(store.get(ROLLOUT, 'default', 'r').status).toMatchObject({
      phase: 'Progressing',
      observedGeneration: '1',
    });
    clock.now += 100;
    expect(store.get(ROLLOUT, 'default', 'r').status).toMatchObject({
      phase: 'Healthy',
      availableReplicas: 1,
    });
  });

  it('lets an HPA clamp its target replicas into [min, max]', () => {
    const { store } = setup();
    store.create(DEPLOY, 'default', deployment('web', { replicas: 10 }), {});
    store.create(
      HPA,
      'default',
      {
        metadata: { name: 'web' },
        spec: {
          scaleTargetRef: {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            name: 'web',
          },
          maxReplicas: 5,
        },
      },
      {},
    );
    const d = store.get(DEPLOY, 'default', 'web');
    expect(d.spec.replicas).toBe(5);
    expect(meta(d).generation).toBe(2);
    expect(store.get(HPA, 'default', 'web').status).toMatchObject({
      desiredReplicas: 5,
    });
  });

  it('computes PDB status from the workloads its selector matches', () => {
    const PDB = resourceForKind('PodDisruptionBudget')!;
    const { store, clock } = setup(100);
    store.create(DEPLOY, 'default', deployment('web', { replicas: 3 }), {});
    store.create(
      PDB,
      'default',
      {
        metadata: { name: 'web' },
        spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
      },
      {},
    );
    expect(store.get(PDB, 'default', 'web').status).toMatchObject({
      observedGeneration: 1,
      expectedPods: 3,
      currentHealthy: 0,
      desiredHealthy: 2,
      disruptionsAllowed: 0,
    });
    clock.now += 100;
    expect(store.get(PDB, 'default', 'web').status).toMatchObject({
      currentHealthy: 3,
      disruptionsAllowed: 1,
    });
  });

  it('removes Rollouts with their CRD', () => {
    const { store } = setup();
    store.create(ROLLOUT, 'default', rollout('r'), {});
    store.setCrdInstalled('rollouts.argoproj.io', false);
    expect(store.objects().some(o => o.kind === 'Rollout')).toBe(false);
  });
});
