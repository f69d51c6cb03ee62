/*
 * The object set applier against the simulator over HTTPS, through client-node's generic object
 * API: objects of any kind the cluster serves go in dependency order by server-side apply as
 * `fleet`, only over objects that are Fleet's for the entity; what the set drops is pruned when
 * Fleet's; a dry run previews it all without writing.
 */
import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { KubeconfigAccessPolicy } from '@cnp/plugin-fleet-node';
import { useSimulator } from '@cnp/kube-simulator';
import {
  ClusterClients,
  type ClusterAccess,
} from '../kubernetes/ClusterClients';
import { ENTITY_REF_ANNOTATION, MANAGED_BY_LABEL } from './manifests';
import {
  ObjectSetApplier,
  dependencyOrder,
  type ObjectRef,
} from './ObjectSetApplier';

jest.setTimeout(60_000);

const sim = useSimulator({
  clusters: ['east', 'bare'],
  crds: { bare: [] },
  readyDelayMs: 20,
});

const ENTITY = 'component:default/shop';
const OTHER_ENTITY = 'component:default/billing';

let clients: ClusterClients;
let applier: ObjectSetApplier;
beforeAll(() => {
  clients = ClusterClients.create({
    policy: KubeconfigAccessPolicy.create({
      kubeconfigDir: sim.kubeconfigDir,
    }),
  });
  applier = ObjectSetApplier.create({ clients, concurrency: 4 });
});
afterAll(() => clients.dispose());

const access = (name: string): ClusterAccess => ({
  name,
  endpoint: sim.endpoint(name),
  kubeconfigRef: sim.kubeconfigPath(name),
  source: 'discovered',
});

const marks = (entityRef = ENTITY) => ({
  labels: { [MANAGED_BY_LABEL]: 'fleet' },
  annotations: { [ENTITY_REF_ANNOTATION]: entityRef },
});

const labels = { app: 'shop' };

function deployment(namespace: string, name: string, replicas = 2) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, ...marks() },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
      },
    },
  };
}

function service(namespace: string, name: string, entityRef = ENTITY) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, ...marks(entityRef) },
    spec: { selector: labels, ports: [{ port: 80, targetPort: 8000 }] },
  };
}

function pdb(namespace: string, name: string, entityRef = ENTITY) {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace, ...marks(entityRef) },
    spec: { minAvailable: 1, selector: { matchLabels: labels } },
  };
}

function hpa(namespace: string, name: string, target: string) {
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name, namespace, ...marks() },
    spec: {
      scaleTargetRef: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: target,
      },
      minReplicas: 2,
      maxReplicas: 5,
    },
  };
}

function secret(namespace: string, name: string) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, ...marks() },
    type: 'Opaque',
    stringData: { token: 'not-a-real-one' },
  };
}

function ingress(namespace: string, name: string) {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace, ...marks() },
    spec: {
      rules: [
        {
          host: 'shop.example.com',
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name, port: { number: 80 } } },
              },
            ],
          },
        },
      ],
    },
  };
}

function analysisTemplate(namespace: string, name: string) {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'AnalysisTemplate',
    metadata: { name, namespace, ...marks() },
    spec: {
      metrics: [
        {
          name: 'errors',
          provider: {
            prometheus: { address: 'http://prometheus:9090', query: 'up' },
          },
        },
      ],
    },
  };
}

function namespaceObject(name: string) {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, ...marks() },
  };
}

function kubeConfig(cluster: string) {
  const kc = new KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath(cluster));
  return kc;
}
const core = (cluster = 'east') => kubeConfig(cluster).makeApiClient(CoreV1Api);
const apps = () => kubeConfig('east').makeApiClient(AppsV1Api);

/** A namespace made by someone else (the caller decides namespaces). */
async function givenNamespace(name: string, cluster = 'east') {
  await core(cluster).createNamespace({ body: { metadata: { name } } });
}

const stored = (kind: string, namespace: string | undefined, name: string) =>
  sim
    .objects('east')
    .find(
      o =>
        o.kind === kind &&
        o.metadata.name === name &&
        o.metadata.namespace === namespace,
    ) as any;

const ref = (o: KubernetesObject): ObjectRef => ({
  apiVersion: o.apiVersion!,
  kind: o.kind!,
  ...(o.metadata?.namespace ? { namespace: o.metadata.namespace } : {}),
  name: o.metadata!.name!,
});

/** The resourceVersion of each object, as stored. */
const versions = (objects: KubernetesObject[]) =>
  objects.map(
    o =>
      stored(o.kind!, o.metadata?.namespace, o.metadata!.name!)?.metadata
        .resourceVersion,
  );

describe('dependencyOrder', () => {
  it("sorts by Helm's install order, keeps the given order within a kind, and puts unknown kinds last", () => {
    const kinds = [
      'AnalysisTemplate',
      'Ingress',
      'Deployment',
      'Service',
      'Rollout',
      'ConfigMap',
      'Service',
      'Namespace',
      'HorizontalPodAutoscaler',
      'CustomResourceDefinition',
      'ServiceAccount',
      'Role',
      'ClusterRole',
    ];
    const objects = kinds.map((kind, i) => ({
      kind,
      metadata: { name: `o${i}` },
    }));
    expect(
      dependencyOrder(objects).map(o => `${o.kind}:${o.metadata.name}`),
    ).toEqual([
      'Namespace:o7',
      'ServiceAccount:o10',
      'ConfigMap:o5',
      'CustomResourceDefinition:o9',
      'ClusterRole:o12',
      'Role:o11',
      'Service:o3',
      'Service:o6',
      'Deployment:o2',
      'HorizontalPodAutoscaler:o8',
      'Ingress:o1',
      'AnalysisTemplate:o0',
      'Rollout:o4',
    ]);
  });
});

describe('ObjectSetApplier', () => {
  it('creates the set in dependency order as manager fleet; an unchanged apply writes nothing', async () => {
    const ns = 'objset-order';
    const objects: KubernetesObject[] = [
      analysisTemplate(ns, 'errors'),
      ingress(ns, 'web'),
      hpa(ns, 'web', 'web'),
      deployment(ns, 'web'),
      service(ns, 'web'),
      secret(ns, 'web-token'),
      pdb(ns, 'web'),
      namespaceObject(ns),
    ];
    const before = sim.history('east').length;
    const result = await applier.apply(access('east'), {
      entityRef: ENTITY,
      objects,
    });
    expect(result).toEqual({ kind: 'applied', pruned: [] });
    const ours = new Set(objects.map(o => o.kind));
    const creates = sim
      .history('east')
      .slice(before)
      .filter(e => e.verb === 'create' && ours.has(e.kind))
      .filter(e => e.kind === 'Namespace' || e.namespace === ns);
    expect(creates.map(e => e.kind)).toEqual([
      'Namespace',
      'PodDisruptionBudget',
      'Secret',
      'Service',
      'Deployment',
      'HorizontalPodAutoscaler',
      'Ingress',
      'AnalysisTemplate',
    ]);
    for (const entry of creates)
      expect(
        (entry.object.metadata.managedFields as { manager: string }[]).map(
          f => f.manager,
        ),
      ).toEqual(['fleet']);

    // The first apply over what Fleet created hands the create's fields over to its apply;
    // from then on an unchanged apply changes nothing.
    await applier.apply(access('east'), { entityRef: ENTITY, objects });
    // Controllers write the status of the Deployment and the HPA: the rest stays as it is.
    const steady = objects.filter(
      o => !['Deployment', 'HorizontalPodAutoscaler'].includes(o.kind!),
    );
    const rv = versions(steady);
    const mark = sim.history('east').length;
    const again = await applier.apply(access('east'), {
      entityRef: ENTITY,
      objects,
    });
    expect(again).toEqual({ kind: 'applied', pruned: [] });
    expect(sim.history('east').slice(mark)).toEqual([]);
    expect(versions(steady)).toEqual(rv);
  });

  it('applies a change over the live object and removes a field Fleet stops sending', async () => {
    const ns = 'objset-change';
    await givenNamespace(ns);
    const first = {
      ...service(ns, 'web'),
      metadata: {
        ...service(ns, 'web').metadata,
        annotations: {
          ...marks().annotations,
          'example.com/note': 'first',
        },
      },
    };
    await applier.apply(access('east'), {
      entityRef: ENTITY,
      objects: [first, deployment(ns, 'web', 2)],
    });
    expect(
      stored('Service', ns, 'web').metadata.annotations['example.com/note'],
    ).toBe('first');
    const result = await applier.apply(access('east'), {
      entityRef: ENTITY,
      objects: [service(ns, 'web'), deployment(ns, 'web', 3)],
    });
    expect(result).toEqual({ kind: 'applied', pruned: [] });
    expect(stored('Deployment', ns, 'web').spec.replicas).toBe(3);
    expect(
      stored('Service', ns, 'web').metadata.annotations,
    ).not.toHaveProperty('example.com/note');
  });

  it("prunes what the set drops, in reverse order, never a foreign object nor another entity's", async () => {
    const ns = 'objset-prune';
    await givenNamespace(ns);
    const previous = [
      deployment(ns, 'web'),
      service(ns, 'web'),
      pdb(ns, 'web'),
      ingress(ns, 'web'),
    ];
    await applier.apply(access('east'), {
      entityRef: ENTITY,
      objects: previous,
    });
    // Listed as the previous revision's too, but not Fleet's for this entity (any more).
    await core().createNamespacedService({
      namespace: ns,
      body: {
        metadata: { name: 'foreign' },
        spec: { ports: [{ port: 80 }] },
      },
    });
    await applier.apply(access('east'), {
      entityRef: OTHER_ENTITY,
      objects: [pdb(ns, 'billing', OTHER_ENTITY)],
    });
    const before = sim.history('east').length;
    const result = await applier.apply(access('east'), {
      entityRef: ENTITY,
      objects: [deployment(ns, 'web')],
      previous: [
        ...previous,
        service(ns, 'foreign'),
        pdb(ns, 'billing'),
        service(ns, 'gone-already'),
      ],
    });
    expect(result).toEqual({
      kind: 'applied',
      pruned: [
        ref(ingress(ns, 'web')),
        ref(service(ns, 'web')),
        ref(pdb(ns, 'web')),
      ],
    });
    const deletes = sim
      .history('east')
      .slice(before)
      .filter(e => e.verb === 'delete' && e.namespace === ns);
    expect(deletes.map(e => e.kind)).toEqual([
      'Ingress',
      'Service',
      'PodDisruptionBudget',
    ]);
    expect(stored('Deployment', ns, 'web')).toBeDefined();
    expect(stored('Service', ns, 'foreign')).toBeDefined();
    expect(stored('PodDisruptionBudget', ns, 'billing')).toBeDefined();
    expect(stored('Service', ns, 'web')).toBeUndefined();
  });

  it('applies nothing when a foreign object stands in the place of one of the set', async () => {
    const ns = 'objset-foreign';
    await givenNamespace(ns);
    await core().createNamespacedService({
      namespace: ns,
      body: {
        metadata: {
          name: 'web',
          labels: { [MANAGED_BY_LABEL]: 'helm' },
        },
        spec: { ports: [{ port: 80 }] },
      },
    });
    const before = sim.history('east').length;
    const result = await applier.apply(access('east'), {
      entityRef: ENTITY,
      objects: [pdb(ns, 'web'), deployment(ns, 'web'), service(ns, 'web')],
      previous: [ingress(ns, 'web')],
    });
    expect(result).toMatchObject({
      kind: 'failed',
      reason: 'OWNERSHIP_CONFLICT',
      object: { apiVersion: 'v1', kind: 'Service', namespace: ns, name: 'web' },
    });
    expect(result.kind === 'failed' && result.message).toMatch(
      /^OWNERSHIP_CONFLICT: Service objset-foreign\/web is not Fleet's to change .*managed by helm/,
    );
    expect(
      sim
        .history('east')
        .slice(before)
        .filter(e => e.namespace === ns),
    ).toEqual([]);
    expect(stored('Deployment', ns, 'web')).toBeUndefined();
    expect(stored('PodDisruptionBudget', ns, 'web')).toBeUndefined();
  });

  it('previews create, update with the changed paths, unchanged and prune, and writes nothing', async () => {
    const ns = 'objset-preview';
    await givenNamespace(ns);
    const previous = [
      deployment(ns, 'web', 2),
      service(ns, 'web'),
      ingress(ns, 'web'),
    ];
    await applier.apply(access('east'), {
      entityRef: ENTITY,
      objects: previous,
    });
    const next = [deployment(ns, 'web', 3), service(ns, 'web'), pdb(ns, 'web')];
    const rv = versions(previous);
    const before = sim.history('east').length;

    const preview = await applier.preview(access('east'), {
      entityRef: ENTITY,
      objects: next,
      previous,
    });

    expect(preview).toEqual({
      kind: 'previewed',
      objects: [
        { ...ref(pdb(ns, 'web')), action: 'create', paths: ['/'] },
        { ...ref(service(ns, 'web')), action: 'unchanged', paths: [] },
        {
          ...ref(deployment(ns, 'web')),
          action: 'update',
          paths: ['/spec/replicas'],
        },
        { ...ref(ingress(ns, 'web')), action: 'prune', paths: ['/'] },
      ],
    });
    // The controllers write the Deployment's status and the Ingress's address meanwhile; Fleet
    // writes nothing.
    expect(sim.history('east').slice(before)).toEqual([]);
    expect(versions([previous[1]])).toEqual([rv[1]]);
    expect(stored('Deployment', ns, 'web').spec.replicas).toBe(2);
    expect(stored('PodDisruptionBudget', ns, 'web')).toBeUndefined();
  });

  it('previews the objects of a namespace the set creates as creates, and refuses a foreign object', async () => {
    const ns = 'objset-preview-new';
    const fresh = await applier.preview(access('east'), {
      entityRef: ENTITY,
      objects: [deployment(ns, 'web'), namespaceObject(ns)],
    });
    expect(fresh).toEqual({
      kind: 'previewed',
      objects: [
        { ...ref(namespaceObject(ns)), action: 'create', paths: ['/'] },
        { ...ref(deployment(ns, 'web')), action: 'create', paths: ['/'] },
      ],
    });
    expect(stored('Namespace', undefined, ns)).toBeUndefined();

    await givenNamespace(ns);
    await applier.apply(access('east'), {
      entityRef: OTHER_ENTITY,
      objects: [service(ns, 'web', OTHER_ENTITY)],
    });
    const refused = await applier.preview(access('east'), {
      entityRef: ENTITY,
      objects: [service(ns, 'web')],
    });
    expect(refused).toMatchObject({
      kind: 'refused',
      message: expect.stringMatching(
        /^OWNERSHIP_CONFLICT: .*it belongs to component:default\/billing/,
      ),
    });
  });

  it('reads each live counterpart, undefined when absent or of a kind not served', async () => {
    const ns = 'objset-read';
    await givenNamespace(ns);
    await applier.apply(access('east'), {
      entityRef: ENTITY,
      objects: [service(ns, 'web')],
    });
    const widget = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w', namespace: ns },
    };
    const read = await applier.readLive(access('east'), [
      service(ns, 'web'),
      deployment(ns, 'web'),
      widget,
    ]);
    expect(read.kind).toBe('read');
    if (read.kind !== 'read') return;
    expect(read.live[0]).toMatchObject({
      kind: 'Service',
      metadata: { name: 'web', namespace: ns, uid: expect.any(String) },
      spec: { clusterIP: expect.any(String) },
    });
    // The server's JSON, not client-node's models: timestamps stay strings.
    expect(typeof read.live[0]!.metadata!.creationTimestamp).toBe('string');
    expect(read.live.slice(1)).toEqual([undefined, undefined]);
  });

  it("removes the entity's objects in reverse order and leaves foreign ones", async () => {
    const ns = 'objset-remove';
    await givenNamespace(ns);
    const objects = [deployment(ns, 'web'), service(ns, 'web'), pdb(ns, 'web')];
    await applier.apply(access('east'), { entityRef: ENTITY, objects });
    await applier.apply(access('east'), {
      entityRef: OTHER_ENTITY,
      objects: [service(ns, 'billing', OTHER_ENTITY)],
    });
    const before = sim.history('east').length;
    const result = await applier.remove(access('east'), ENTITY, [
      ...objects,
      service(ns, 'billing'),
      ingress(ns, 'never-made'),
    ]);
    expect(result).toEqual({
      kind: 'removed',
      removed: [
        ref(deployment(ns, 'web')),
        ref(service(ns, 'web')),
        ref(pdb(ns, 'web')),
      ],
      left: [ref(service(ns, 'billing'))],
    });
    expect(
      sim
        .history('east')
        .slice(before)
        .filter(e => e.verb === 'delete' && e.namespace === ns)
        .map(e => e.kind),
    ).toEqual(['Deployment', 'Service', 'PodDisruptionBudget']);
    expect(stored('Service', ns, 'billing')).toBeDefined();
  });

  it('fails naming a kind the cluster does not serve, before applying anything', async () => {
    const ns = 'objset-unserved';
    await givenNamespace(ns);
    await givenNamespace(ns, 'bare');
    const widget = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w', namespace: ns, ...marks() },
    };
    const result = await applier.apply(access('east'), {
      entityRef: ENTITY,
      objects: [service(ns, 'web'), widget],
    });
    expect(result).toEqual({
      kind: 'failed',
      message: expect.stringContaining(
        'Widget objset-unserved/w: the cluster does not serve Widget (example.com/v1)',
      ),
      object: ref(widget),
    });
    expect(stored('Service', ns, 'web')).toBeUndefined();

    // A custom resource whose CRD the cluster does not have.
    const noCrd = await applier.apply(access('bare'), {
      entityRef: ENTITY,
      objects: [analysisTemplate(ns, 'errors')],
    });
    expect(noCrd).toMatchObject({
      kind: 'failed',
      message: expect.stringContaining(
        'the cluster does not serve AnalysisTemplate (argoproj.io/v1alpha1)',
      ),
    });
  });

  it("fails with the server's message when the namespace is missing, and does not create it", async () => {
    const result = await applier.apply(access('east'), {
      entityRef: ENTITY,
      objects: [service('objset-ghost', 'web')],
    });
    expect(result).toEqual({
      kind: 'failed',
      message:
        'Service objset-ghost/web: HTTP 404: namespaces "objset-ghost" not found',
      object: ref(service('objset-ghost', 'web')),
    });
    expect(stored('Namespace', undefined, 'objset-ghost')).toBeUndefined();
  });

  it('fails on a field another manager holds, naming it, and does not force it', async () => {
    const ns = 'objset-conflict';
    await givenNamespace(ns);
    await applier.apply(access('east'), {
      entityRef: ENTITY,
      objects: [service(ns, 'web')],
    });
    await core().patchNamespacedService(
      {
        name: 'web',
        namespace: ns,
        fieldManager: 'kubectl',
        force: true,
        body: {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'web', namespace: ns },
          spec: { selector: { app: 'hotfix' } },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
    );
    const result = await applier.apply(access('east'), {
      entityRef: ENTITY,
      objects: [service(ns, 'web')],
    });
    expect(result).toMatchObject({
      kind: 'failed',
      message: expect.stringMatching(
        /^Service objset-conflict\/web: field conflict with another manager, not forced: .*managed by "kubectl"/,
      ),
    });
    expect(stored('Service', ns, 'web').spec.selector).toEqual({
      app: 'hotfix',
    });
  });

  it('leaves the replica count of a Deployment an HPA of the set scales to the HPA', async () => {
    const ns = 'objset-hpa';
    await givenNamespace(ns);
    const objects = [deployment(ns, 'web', 2), hpa(ns, 'web', 'web')];
    await applier.apply(access('east'), { entityRef: ENTITY, objects });
    // The autoscaler scales it, as its controller does (the count becomes its field).
    await apps().patchNamespacedDeployment(
      {
        name: 'web',
        namespace: ns,
        fieldManager: 'horizontal-pod-autoscaler',
        force: true,
        body: {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'web', namespace: ns },
          spec: { replicas: 4 },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
    );
    const result = await applier.apply(access('east'), {
      entityRef: ENTITY,
      objects,
    });
    expect(result).toEqual({ kind: 'applied', pruned: [] });
    expect(stored('Deployment', ns, 'web').spec.replicas).toBe(4);

    // Without the HPA in the set, the count is Fleet's to set: a conflict, not forced.
    const alone = await applier.apply(access('east'), {
      entityRef: ENTITY,
      objects: [deployment(ns, 'web', 2)],
    });
    expect(alone).toMatchObject({
      kind: 'failed',
      message: expect.stringContaining('.spec.replicas'),
    });
    // Named as ignored, it is left too.
    const named = await applier.apply(
      access('east'),
      { entityRef: ENTITY, objects: [deployment(ns, 'web', 2)] },
      { ignoreReplicasOf: [ref(deployment(ns, 'web'))] },
    );
    expect(named).toEqual({ kind: 'applied', pruned: [] });
    expect(stored('Deployment', ns, 'web').spec.replicas).toBe(4);
  });

  it('refuses an object without Fleet’s marks for the entity, or listed twice', async () => {
    const ns = 'objset-invalid';
    await givenNamespace(ns);
    const unmarked = {
      ...service(ns, 'web'),
      metadata: { name: 'web', namespace: ns },
    };
    expect(
      await applier.apply(access('east'), {
        entityRef: ENTITY,
        objects: [unmarked],
      }),
    ).toMatchObject({
      kind: 'failed',
      message: expect.stringContaining(
        "Service objset-invalid/web: does not carry Fleet's marks for component:default/shop",
      ),
    });
    expect(
      await applier.apply(access('east'), {
        entityRef: ENTITY,
        objects: [service(ns, 'web'), service(ns, 'web')],
      }),
    ).toMatchObject({
      kind: 'failed',
      message: 'Service objset-invalid/web: is in the set twice',
    });
    expect(stored('Service', ns, 'web')).toBeUndefined();
  });

  it('answers not-configured for a cluster whose kubeconfig cannot be used', async () => {
    const result = await applier.apply(
      { ...access('east'), endpoint: 'https://elsewhere.example.com' },
      { entityRef: ENTITY, objects: [] },
    );
    expect(result).toMatchObject({ kind: 'not-configured' });
  });
});
