/*
 * The kinds Fleet deploys from a component's manifests besides Deployments and Services, through
 * the real @kubernetes/client-node over HTTPS: each one created, read, listed, applied
 * (server-side), previewed (dryRun) and deleted through the generic KubernetesObjectApi, which
 * finds a kind's plural and scope in the discovery documents; and the API server's refusals.
 */
import {
  ApiException,
  KubeConfig,
  KubernetesObject,
  KubernetesObjectApi,
  PatchStrategy,
  Watch,
} from '@kubernetes/client-node';
import { request } from 'node:https';
import { useSimulator } from './useSimulator';

const sim = useSimulator({ clusters: ['hub'], readyDelayMs: 150 });

function objectApi(): KubernetesObjectApi {
  const kc = new KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath('hub'));
  return KubernetesObjectApi.makeApiClient(kc);
}

async function code(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
    return 200;
  } catch (error) {
    if (error instanceof ApiException) return error.code;
    throw error;
  }
}

function send(
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; json: any }> {
  return new Promise((done, fail) => {
    const req = request(
      `${sim.endpoint('hub')}${path}`,
      {
        method,
        ca: sim.caPem,
        headers: {
          authorization: `Bearer ${sim.token('hub')}`,
          'content-type': contentType,
        },
      },
      res => {
        const chunks: Buffer[] = [];
        res.on('data', c => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          done({ status: res.statusCode ?? 0, json: JSON.parse(text) });
        });
      },
    );
    req.on('error', fail);
    if (typeof body === 'string') req.end(body);
    else req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const podTemplate = (app: string, restartPolicy?: string) => ({
  metadata: { labels: { app } },
  spec: {
    containers: [{ name: 'main', image: 'busybox:1.36' }],
    ...(restartPolicy ? { restartPolicy } : {}),
  },
});

/** A manifest as a component's repository holds it: any kind, its own fields. */
type Manifest = KubernetesObject & Record<string, any>;

/** One manifest of each kind, named `name` (namespaced ones in `default`). */
const MANIFESTS: Record<string, (name: string) => Manifest> = {
  ConfigMap: name => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'default' },
    data: { 'app.properties': 'a=1' },
  }),
  ServiceAccount: name => ({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name, namespace: 'default' },
  }),
  PersistentVolumeClaim: name => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'default' },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
    },
  }),
  StatefulSet: name => ({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace: 'default' },
    spec: {
      serviceName: name,
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: podTemplate(name),
    },
  }),
  DaemonSet: name => ({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: 'default' },
    spec: {
      selector: { matchLabels: { app: name } },
      template: podTemplate(name),
    },
  }),
  Job: name => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: 'default' },
    spec: { template: podTemplate(name, 'Never') },
  }),
  CronJob: name => ({
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, namespace: 'default' },
    spec: {
      schedule: '*/5 * * * *',
      jobTemplate: { spec: { template: podTemplate(name, 'OnFailure') } },
    },
  }),
  Role: name => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name, namespace: 'default' },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }],
  }),
  RoleBinding: name => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name, namespace: 'default' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: [{ kind: 'ServiceAccount', name: 'default' }],
  }),
  ClusterRole: name => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name },
    rules: [{ nonResourceURLs: ['/healthz'], verbs: ['get'] }],
  }),
  ClusterRoleBinding: name => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'view',
    },
    subjects: [{ kind: 'Group', name: 'fleet:readers' }],
  }),
  NetworkPolicy: name => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name, namespace: 'default' },
    spec: {
      podSelector: { matchLabels: { app: name } },
      ingress: [{ ports: [{ port: 8080 }] }],
    },
  }),
};

describe.each(Object.keys(MANIFESTS))('%s', kind => {
  const manifest = MANIFESTS[kind];
  const name = `${kind.toLowerCase()}-crud`;

  it('is created, read, listed, applied, previewed and deleted', async () => {
    const api = objectApi();
    const created = await api.create(manifest(name));
    expect(created.kind).toBe(kind);
    expect(created.metadata?.uid).toBeTruthy();
    const header = {
      apiVersion: created.apiVersion!,
      kind,
      metadata: { name, namespace: created.metadata?.namespace },
    };
    const read = await api.read(header);
    expect(read.metadata?.uid).toBe(created.metadata?.uid);
    const list = await api.list(
      created.apiVersion!,
      kind,
      created.metadata?.namespace,
    );
    expect(list.items.map(i => i.metadata?.name)).toContain(name);

    // Server-side apply: a label added, its field owned by the manager.
    const applied = manifest(name);
    applied.metadata!.labels = { team: 'fleet' };
    const patched = await api.patch(
      applied,
      undefined,
      undefined,
      'fleet',
      true,
      PatchStrategy.ServerSideApply,
    );
    // A Job's own labels default to its template's.
    expect(patched.metadata?.labels).toMatchObject({ team: 'fleet' });
    const entry = patched.metadata?.managedFields?.find(
      f => f.manager === 'fleet',
    );
    expect(entry?.operation).toBe('Apply');
    expect(JSON.stringify(entry?.fieldsV1)).toContain('"f:team"');

    // A dry run creates nothing; nor does a dry-run apply of an absent object.
    const preview = manifest(`${name}-preview`);
    const previewed = await api.create(preview, undefined, 'All');
    expect(previewed.metadata?.name).toBe(`${name}-preview`);
    expect(
      await code(
        api.patch(
          manifest(`${name}-preview`),
          undefined,
          'All',
          'fleet',
          true,
          PatchStrategy.ServerSideApply,
        ),
      ),
    ).toBe(200);
    const previewHeader = {
      ...header,
      metadata: { ...header.metadata, name: `${name}-preview` },
    };
    expect(await code(api.read(previewHeader))).toBe(404);

    await api.delete(header);
    expect(await code(api.read(header))).toBe(404);
  });

  it('is created by a server-side apply when absent', async () => {
    const api = objectApi();
    const created = await api.patch(
      manifest(`${name}-applied`),
      undefined,
      undefined,
      'fleet',
      true,
      PatchStrategy.ServerSideApply,
    );
    expect(created.metadata?.uid).toBeTruthy();
    expect(
      sim.history('hub', { kind, name: `${name}-applied` }).map(h => h.verb),
    ).toEqual(['create']);
    await api.delete(created);
  });
});

describe('discovery', () => {
  it('lists the kinds with their scope, verbs and short names', async () => {
    const core = await send('GET', '/api/v1');
    const byName = (doc: any, plural: string) =>
      doc.resources.find((r: any) => r.name === plural);
    expect(byName(core.json, 'configmaps')).toMatchObject({
      kind: 'ConfigMap',
      namespaced: true,
      shortNames: ['cm'],
      verbs: expect.arrayContaining(['create', 'get', 'list', 'patch']),
    });
    expect(byName(core.json, 'serviceaccounts').shortNames).toEqual(['sa']);
    expect(byName(core.json, 'persistentvolumeclaims').shortNames).toEqual([
      'pvc',
    ]);
    expect(byName(core.json, 'persistentvolumeclaims/status')).toBeDefined();
    expect(byName(core.json, 'configmaps/status')).toBeUndefined();

    const groups = await send('GET', '/apis');
    expect(groups.json.groups.map((g: any) => g.name)).toEqual(
      expect.arrayContaining(['apps', 'batch', 'rbac.authorization.k8s.io']),
    );
    const rbac = await send('GET', '/apis/rbac.authorization.k8s.io/v1');
    expect(rbac.json.resources.map((r: any) => [r.name, r.namespaced])).toEqual(
      [
        ['roles', true],
        ['rolebindings', true],
        ['clusterroles', false],
        ['clusterrolebindings', false],
      ],
    );
    const batch = await send('GET', '/apis/batch/v1');
    expect(byName(batch.json, 'cronjobs').shortNames).toEqual(['cj']);
    expect(byName(batch.json, 'jobs/status')).toBeDefined();
    const apps = await send('GET', '/apis/apps/v1');
    expect(byName(apps.json, 'statefulsets').shortNames).toEqual(['sts']);
    expect(byName(apps.json, 'daemonsets').shortNames).toEqual(['ds']);
    const networking = await send('GET', '/apis/networking.k8s.io/v1');
    expect(byName(networking.json, 'networkpolicies').shortNames).toEqual([
      'netpol',
    ]);
  });

  it('serves cluster-scoped RBAC kinds outside namespaces, and namespaced ones inside', async () => {
    const api = objectApi();
    await api.create(MANIFESTS.ClusterRole('reader'));
    const got = await send(
      'GET',
      '/apis/rbac.authorization.k8s.io/v1/clusterroles/reader',
    );
    expect(got.status).toBe(200);
    expect(got.json.metadata.namespace).toBeUndefined();
    const wrong = await send(
      'GET',
      '/apis/rbac.authorization.k8s.io/v1/namespaces/default/clusterroles/reader',
    );
    expect(wrong.status).toBe(404);
    await api.create(MANIFESTS.Role('pod-reader'));
    const role = await send(
      'GET',
      '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/pod-reader',
    );
    expect(role.json.rules).toEqual(MANIFESTS.Role('x').rules);
    expect(
      (
        await send(
          'GET',
          '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/pod-reader/status',
        )
      ).status,
    ).toBe(404);
  });
});

describe('KubernetesObjectApi server-side apply', () => {
  it('reads and applies a ConfigMap, then finds a conflict with another manager', async () => {
    const api = objectApi();
    const cm = MANIFESTS.ConfigMap('settings');
    await api.patch(
      cm,
      undefined,
      undefined,
      'fleet',
      undefined,
      PatchStrategy.ServerSideApply,
    );
    const read = (await api.read({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: 'default' },
    })) as KubernetesObject & { data?: Record<string, string> };
    expect(read.data).toEqual({ 'app.properties': 'a=1' });
    const other = {
      ...cm,
      data: { 'app.properties': 'a=2' },
    } as KubernetesObject;
    expect(
      await code(
        api.patch(
          other,
          undefined,
          undefined,
          'someone-else',
          false,
          PatchStrategy.ServerSideApply,
        ),
      ),
    ).toBe(409);
  });

  it('applies a ClusterRoleBinding, defaults the subject apiGroup, and refuses a roleRef change', async () => {
    const api = objectApi();
    const binding = MANIFESTS.ClusterRoleBinding('fleet-view');
    const applied = (await api.patch(
      binding,
      undefined,
      undefined,
      'fleet',
      true,
      PatchStrategy.ServerSideApply,
    )) as any;
    expect(applied.subjects).toEqual([
      {
        kind: 'Group',
        name: 'fleet:readers',
        apiGroup: 'rbac.authorization.k8s.io',
      },
    ]);
    const read = (await api.read({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'fleet-view' },
    })) as any;
    expect(read.roleRef.name).toBe('view');
    const changed = {
      ...binding,
      roleRef: { ...(binding as any).roleRef, name: 'edit' },
    } as KubernetesObject;
    let error: ApiException<string> | undefined;
    try {
      await api.patch(
        changed,
        undefined,
        undefined,
        'fleet',
        true,
        PatchStrategy.ServerSideApply,
      );
    } catch (e) {
      error = e as ApiException<string>;
    }
    expect(error?.code).toBe(422);
    expect(String(error?.body)).toContain('cannot change roleRef');
  });
});

describe('KubernetesObjectApi and an immutable Job', () => {
  it("refuses an applied change of a Job's pod template (422, field is immutable)", async () => {
    const api = objectApi();
    const job = MANIFESTS.Job('applied-once');
    await api.patch(
      job,
      undefined,
      undefined,
      'fleet',
      true,
      PatchStrategy.ServerSideApply,
    );
    const same = await api.patch(
      MANIFESTS.Job('applied-once'),
      undefined,
      undefined,
      'fleet',
      true,
      PatchStrategy.ServerSideApply,
    );
    expect(same.metadata?.generation).toBe(1);
    job.spec.template.spec.containers[0].image = 'busybox:1.37';
    let error: ApiException<string> | undefined;
    try {
      await api.patch(
        job,
        undefined,
        undefined,
        'fleet',
        true,
        PatchStrategy.ServerSideApply,
      );
    } catch (e) {
      error = e as ApiException<string>;
    }
    expect(error?.code).toBe(422);
    const causes = JSON.parse(String(error?.body)).details.causes;
    expect(causes.map((c: any) => c.field)).toEqual(['spec.template']);
  });
});

describe('refusals', () => {
  const CONFIG_MAPS = '/api/v1/namespaces/default/configmaps';

  it('refuses a ConfigMap data value that is not a string (400, as decoding it fails)', async () => {
    const answer = await send('POST', CONFIG_MAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'typed' },
      data: { replicas: 3 },
    });
    expect(answer.status).toBe(400);
    expect(answer.json.message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string',
    );
  });

  it('refuses a bad ConfigMap key and a key in both data and binaryData (422)', async () => {
    const answer = await send('POST', CONFIG_MAPS, {
      metadata: { name: 'keys' },
      data: { 'bad key': 'x', both: 'y' },
      binaryData: { both: Buffer.from('z').toString('base64') },
    });
    expect(answer.status).toBe(422);
    expect(answer.json.details.causes.map((c: any) => c.field)).toEqual([
      'data',
      'data[both]',
    ]);
  });

  it('refuses an unknown field under fieldValidation=Strict, drops it with a warning otherwise', async () => {
    const body = {
      metadata: { name: 'strict' },
      data: { a: 'b' },
      extra: true,
    };
    const strict = await send(
      'POST',
      `${CONFIG_MAPS}?fieldValidation=Strict`,
      body,
    );
    expect(strict.status).toBe(400);
    expect(strict.json.message).toContain(
      'strict decoding error: unknown field "extra"',
    );
    const warned = await send('POST', CONFIG_MAPS, body);
    expect(warned.status).toBe(201);
    expect(warned.json.extra).toBeUndefined();
  });

  it('keeps an immutable ConfigMap as it is', async () => {
    await send('POST', CONFIG_MAPS, {
      metadata: { name: 'frozen' },
      data: { a: '1' },
      immutable: true,
    });
    const answer = await send(
      'PATCH',
      `${CONFIG_MAPS}/frozen`,
      { data: { a: '2' } },
      'application/merge-patch+json',
    );
    expect(answer.status).toBe(422);
    expect(answer.json.details.causes[0].message).toBe(
      'Forbidden: field is immutable when `immutable` is set',
    );
  });

  it('refuses a rule without verbs, and non-resource URLs in a Role', async () => {
    const answer = await send(
      'POST',
      '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles',
      {
        metadata: { name: 'bad-role' },
        rules: [
          { apiGroups: [''], resources: ['pods'] },
          { nonResourceURLs: ['/x'], verbs: ['get'] },
        ],
      },
    );
    expect(answer.status).toBe(422);
    expect(answer.json.details.causes.map((c: any) => c.field)).toEqual([
      'rules[0].verbs',
      'rules[1].nonResourceURLs',
    ]);
  });

  it('names RBAC objects as path segments: colons allowed, slashes not', async () => {
    const roles = '/apis/rbac.authorization.k8s.io/v1/clusterroles';
    const rule = [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }];
    expect(
      (
        await send('POST', roles, {
          metadata: { name: 'fleet:viewer' },
          rules: rule,
        })
      ).status,
    ).toBe(201);
    expect(
      (await send('POST', roles, { metadata: { name: 'a%b' }, rules: rule }))
        .status,
    ).toBe(422);
  });

  it('refuses a ServiceAccount subject without a namespace in a ClusterRoleBinding', async () => {
    const answer = await send(
      'POST',
      '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
      {
        metadata: { name: 'no-ns' },
        roleRef: { kind: 'ClusterRole', name: 'view' },
        subjects: [{ kind: 'ServiceAccount', name: 'fleet' }],
      },
    );
    expect(answer.status).toBe(422);
    expect(answer.json.details.causes).toEqual([
      {
        reason: 'FieldValueRequired',
        field: 'subjects[0].namespace',
        message: 'Required value',
      },
    ]);
  });

  it('refuses a claim without access modes or storage, and a change of its spec', async () => {
    const claims = '/api/v1/namespaces/default/persistentvolumeclaims';
    const bad = await send('POST', claims, {
      metadata: { name: 'bad-claim' },
      spec: {},
    });
    expect(bad.status).toBe(422);
    expect(bad.json.details.causes.map((c: any) => c.field)).toEqual([
      'spec.accessModes',
      'spec.resources[storage]',
    ]);
    await objectApi().create(MANIFESTS.PersistentVolumeClaim('fixed'));
    const changed = await send(
      'PATCH',
      `${claims}/fixed`,
      { spec: { accessModes: ['ReadWriteMany'] } },
      'application/merge-patch+json',
    );
    expect(changed.status).toBe(422);
    const grown = await send(
      'PATCH',
      `${claims}/fixed`,
      { spec: { resources: { requests: { storage: '2Gi' } } } },
      'application/merge-patch+json',
    );
    expect(grown.status).toBe(200);
  });
});

describe('status', () => {
  it('binds a claim after the ready delay, with the capacity it requested', async () => {
    const api = objectApi();
    const created = (await api.create(
      MANIFESTS.PersistentVolumeClaim('data'),
    )) as any;
    expect(created.status).toEqual({ phase: 'Pending' });
    expect(created.spec.volumeMode).toBe('Filesystem');
    await new Promise(r => setTimeout(r, 200));
    const read = (await api.read(created)) as any;
    expect(read.status).toEqual({
      phase: 'Bound',
      accessModes: ['ReadWriteOnce'],
      capacity: { storage: '1Gi' },
    });
  });

  it('stores ConfigMaps, ServiceAccounts, RBAC and NetworkPolicies without status', async () => {
    const api = objectApi();
    for (const kind of ['ServiceAccount', 'NetworkPolicy']) {
      const created = (await api.create(
        MANIFESTS[kind](`plain-${kind.toLowerCase()}`),
      )) as any;
      expect(created.status).toBeUndefined();
    }
    const policy = sim
      .objects('hub')
      .find(o => o.metadata.name === 'plain-networkpolicy');
    expect(policy?.spec).toEqual({
      podSelector: { matchLabels: { app: 'plain-networkpolicy' } },
      ingress: [{ ports: [{ port: 8080, protocol: 'TCP' }] }],
      policyTypes: ['Ingress'],
    });
    expect(policy?.metadata.generation).toBe(1);
  });
});

describe('watch', () => {
  it('streams cluster-scoped ClusterRoles', async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(sim.kubeconfigPath('hub'));
    const events: string[] = [];
    const api = objectApi();
    const start = await api.list('rbac.authorization.k8s.io/v1', 'ClusterRole');
    const req = await new Watch(kc).watch(
      '/apis/rbac.authorization.k8s.io/v1/clusterroles',
      { resourceVersion: start.metadata?.resourceVersion },
      (type, obj) => events.push(`${type} ${obj.metadata.name}`),
      () => {},
    );
    const role = MANIFESTS.ClusterRole('watched-role');
    await api.create(role);
    await api.delete(role);
    for (let i = 0; i < 500 && events.length < 2; i++)
      await new Promise(r => setTimeout(r, 20));
    req.abort();
    expect(events).toEqual(['ADDED watched-role', 'DELETED watched-role']);
  });

  it('streams a ConfigMap being added, modified and deleted', async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(sim.kubeconfigPath('hub'));
    const events: string[] = [];
    const api = objectApi();
    const start = await api.list('v1', 'ConfigMap', 'default');
    const req = await new Watch(kc).watch(
      '/api/v1/namespaces/default/configmaps',
      { resourceVersion: start.metadata?.resourceVersion },
      (type, obj) => events.push(`${type} ${obj.metadata.name}`),
      () => {},
    );
    const cm = MANIFESTS.ConfigMap('watched');
    await api.create(cm);
    await api.patch(
      { ...cm, data: { x: 'y' } } as KubernetesObject,
      undefined,
      undefined,
      'fleet',
      true,
      PatchStrategy.ServerSideApply,
    );
    await api.delete(cm);
    for (let i = 0; i < 500 && events.length < 3; i++)
      await new Promise(r => setTimeout(r, 20));
    req.abort();
    expect(events).toEqual([
      'ADDED watched',
      'MODIFIED watched',
      'DELETED watched',
    ]);
  });
});
