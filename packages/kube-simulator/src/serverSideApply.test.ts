import { handleApi, ApiRequest } from './api';
import { ClusterStore } from './store';

const APPLY = 'application/apply-patch+yaml';
const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
const WEB = `${DEPLOYMENTS}/web`;

function call(
  store: ClusterStore,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
  userAgent?: string,
) {
  const [pathname, search] = path.split('?');
  let text = '';
  if (typeof body === 'string') text = body;
  else if (body !== undefined) text = JSON.stringify(body);
  const req: ApiRequest = {
    method,
    path: pathname,
    query: new URLSearchParams(search ?? ''),
    contentType: body === undefined ? '' : contentType,
    body: Buffer.from(text),
    serverAddress: '127.0.0.1:1',
    userAgent,
  };
  return handleApi(store, req) as { status: number; body: any };
}

function deployment(spec: Record<string, unknown> = {}, podSpec = {}) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: { app: 'web' } },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            { name: 'app', image: 'nginx:1', ports: [{ containerPort: 80 }] },
          ],
          ...podSpec,
        },
      },
      ...spec,
    },
  };
}

const apply = (
  store: ClusterStore,
  body: unknown,
  query = 'fieldManager=fleet',
) => call(store, 'PATCH', `${WEB}?${query}`, body, APPLY);

const TOLERATION = { key: 'gpu', operator: 'Exists', effect: 'NoSchedule' };

describe('server-side apply', () => {
  it('creates an absent object (YAML body) with an Apply entry in the real FieldsV1 shape', () => {
    const store = new ClusterStore(0);
    const yaml = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: app
          image: nginx:1
          ports: [{containerPort: 80}]
`;
    const created = apply(store, yaml);
    expect(created.status).toBe(201);
    const entries = created.body.metadata.managedFields;
    expect(entries).toEqual([
      {
        manager: 'fleet',
        operation: 'Apply',
        apiVersion: 'apps/v1',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { 'f:app': {} } },
          'f:spec': {
            'f:selector': {},
            'f:template': {
              'f:metadata': { 'f:labels': { 'f:app': {} } },
              'f:spec': {
                'f:containers': {
                  'k:{"name":"app"}': {
                    '.': {},
                    'f:image': {},
                    'f:name': {},
                    'f:ports': {
                      'k:{"containerPort":80,"protocol":"TCP"}': {
                        '.': {},
                        'f:containerPort': {},
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    ]);
    // Defaults are on the object, owned by nobody.
    expect(created.body.spec.replicas).toBe(1);
  });

  it('requires a field manager and refuses force on other patches (422 as the API server)', () => {
    const store = new ClusterStore(0);
    const missing = apply(store, deployment(), '');
    expect(missing.status).toBe(422);
    expect(missing.body.message).toContain('fieldManager: Required value');
    const forced = call(
      store,
      'PATCH',
      `${WEB}?force=true`,
      {},
      'application/merge-patch+json',
    );
    expect(forced.status).toBe(422);
    expect(forced.body.message).toContain('force');
  });

  it('removes a toleration, a spread constraint and replicas the manager stops applying', () => {
    const store = new ClusterStore(0);
    const spread = {
      maxSkew: 1,
      topologyKey: 'topology.kubernetes.io/zone',
      whenUnsatisfiable: 'ScheduleAnyway',
      labelSelector: { matchLabels: { app: 'web' } },
    };
    expect(
      apply(
        store,
        deployment(
          {},
          {
            tolerations: [TOLERATION],
            topologySpreadConstraints: [spread],
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: {
                  nodeSelectorTerms: [
                    {
                      matchExpressions: [
                        { key: 'zone', operator: 'In', values: ['a'] },
                      ],
                    },
                  ],
                },
              },
            },
          },
        ),
      ).status,
    ).toBe(201);
    const updated = apply(store, deployment({ replicas: 1 }));
    expect(updated.status).toBe(200);
    const pod = updated.body.spec.template.spec;
    expect(pod.tolerations).toBeUndefined();
    expect(pod.topologySpreadConstraints).toBeUndefined();
    expect(pod.affinity).toBeUndefined();
    expect(updated.body.spec.replicas).toBe(1);
    expect(updated.body.metadata.generation).toBe(2);
  });

  it('leaves fields another manager owns, and keeps shared ones when one stops applying', () => {
    const store = new ClusterStore(0);
    apply(store, deployment());
    // An HPA-like controller sets replicas; a mesh injects a sidecar.
    const scaled = call(
      store,
      'PATCH',
      `${WEB}?fieldManager=hpa`,
      { spec: { replicas: 5 } },
      'application/merge-patch+json',
    );
    expect(scaled.status).toBe(200);
    const sidecar = call(
      store,
      'PATCH',
      WEB,
      {
        spec: {
          template: {
            spec: { containers: [{ name: 'istio-proxy', image: 'proxy' }] },
          },
        },
      },
      'application/strategic-merge-patch+json',
      'istio-sidecar-injector/1.0',
    );
    const managers = sidecar.body.metadata.managedFields.map((e: any) => [
      e.manager,
      e.operation,
    ]);
    expect(managers).toEqual([
      ['fleet', 'Apply'],
      ['hpa', 'Update'],
      ['istio-sidecar-injector', 'Update'],
    ]);
    // The replicas moved to the HPA's manager: Fleet's entry lost them.
    expect(
      sidecar.body.metadata.managedFields[0].fieldsV1['f:spec']['f:replicas'],
    ).toBeUndefined();
    const { replicas: _, ...withoutReplicas } = deployment().spec;
    const again = apply(store, { ...deployment(), spec: withoutReplicas });
    expect(again.status).toBe(200);
    expect(again.body.spec.replicas).toBe(5);
    expect(
      again.body.spec.template.spec.containers.map((c: any) => c.name),
    ).toEqual(['app', 'istio-proxy']);
  });

  it('answers a conflict with another manager as 409 with one cause per field, unless forced', () => {
    const store = new ClusterStore(0);
    apply(store, deployment());
    call(
      store,
      'PATCH',
      `${WEB}?fieldManager=kubectl-edit`,
      {
        spec: {
          template: {
            spec: { containers: [{ name: 'app', image: 'nginx:2' }] },
          },
        },
      },
      'application/strategic-merge-patch+json',
    );
    const conflict = apply(
      store,
      deployment({}, { containers: [{ name: 'app', image: 'nginx:3' }] }),
    );
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({
      kind: 'Status',
      reason: 'Conflict',
      message:
        'Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1: .spec.template.spec.containers[name="app"].image',
      details: {
        name: 'web',
        group: 'apps',
        kind: 'deployments',
        causes: [
          {
            reason: 'FieldManagerConflict',
            message: 'conflict with "kubectl-edit" using apps/v1',
            field: '.spec.template.spec.containers[name="app"].image',
          },
        ],
      },
    });
    expect(
      call(store, 'GET', WEB).body.spec.template.spec.containers[0].image,
    ).toBe('nginx:2');
    // The same value is no conflict (shared ownership).
    expect(
      apply(
        store,
        deployment({}, { containers: [{ name: 'app', image: 'nginx:2' }] }),
      ).status,
    ).toBe(200);
    const forced = apply(
      store,
      deployment({}, { containers: [{ name: 'app', image: 'nginx:3' }] }),
      'fieldManager=fleet&force=true',
    );
    expect(forced.status).toBe(200);
    expect(forced.body.spec.template.spec.containers[0].image).toBe('nginx:3');
    const editor = forced.body.metadata.managedFields.find(
      (e: any) => e.manager === 'kubectl-edit',
    );
    expect(JSON.stringify(editor?.fieldsV1 ?? {})).not.toContain('f:image');
  });

  it('records an Update entry for creates and patches, named by fieldManager or the User-Agent', () => {
    const store = new ClusterStore(0);
    const created = call(
      store,
      'POST',
      DEPLOYMENTS,
      deployment(),
      'application/json',
      'node-fetch/1.0 (+https://github.com/bitinn/node-fetch)',
    );
    expect(created.status).toBe(201);
    const [entry] = created.body.metadata.managedFields;
    expect(entry).toMatchObject({
      manager: 'node-fetch',
      operation: 'Update',
      apiVersion: 'apps/v1',
      fieldsType: 'FieldsV1',
    });
    // A create's fields include the defaults, and added nodes are members ('.').
    expect(entry.fieldsV1['f:spec']['f:progressDeadlineSeconds']).toEqual({});
    expect(entry.fieldsV1['f:metadata']['f:labels']).toEqual({
      '.': {},
      'f:app': {},
    });
    // A no-op write changes nothing, not even the entry's time.
    const current = call(store, 'GET', WEB).body;
    const same = call(
      store,
      'PATCH',
      WEB,
      { spec: { replicas: 3 } },
      'application/merge-patch+json',
      'node-fetch/1.0',
    );
    expect(same.body).toEqual(current);
    // A field removed by an update leaves every manager's set.
    const removed = call(
      store,
      'PATCH',
      `${WEB}?fieldManager=other`,
      { metadata: { labels: { app: null } } },
      'application/merge-patch+json',
    );
    // (the emptied labels stay as {}, as a merge patch leaves them, and changed nothing else:
    // the other manager gets no entry)
    expect(removed.body.metadata.managedFields).toHaveLength(1);
    expect(
      removed.body.metadata.managedFields[0].fieldsV1['f:metadata'],
    ).toEqual({ '.': {}, 'f:labels': {} });
  });

  it('takes managedFields an update sends: a handover lets the next apply remove the fields', () => {
    const store = new ClusterStore(0);
    const withToleration = deployment({}, { tolerations: [TOLERATION] });
    call(
      store,
      'POST',
      DEPLOYMENTS,
      withToleration,
      'application/json',
      'node-fetch/1.0',
    );
    // Without a handover the fields stay node-fetch's: an apply without them leaves them.
    expect(
      apply(store, deployment()).body.spec.template.spec.tolerations,
    ).toEqual([TOLERATION]);
    const entries = call(store, 'GET', WEB).body.metadata.managedFields;
    const old = entries.find((e: any) => e.manager === 'node-fetch');
    const handover = [{ ...old, manager: 'fleet', operation: 'Apply' }];
    const patched = call(
      store,
      'PATCH',
      `${WEB}?fieldManager=fleet`,
      [{ op: 'replace', path: '/metadata/managedFields', value: handover }],
      'application/json-patch+json',
    );
    expect(
      patched.body.metadata.managedFields.map((e: any) => e.manager),
    ).toEqual(['fleet']);
    const applied = apply(store, deployment());
    expect(applied.status).toBe(200);
    expect(applied.body.spec.template.spec.tolerations).toBeUndefined();
    expect(applied.body.spec.template.spec.containers[0].image).toBe('nginx:1');
  });

  it('stores nothing on dryRun=All, for apply and other writes', () => {
    const store = new ClusterStore(0);
    const dry = apply(store, deployment(), 'fieldManager=fleet&dryRun=All');
    expect(dry.status).toBe(201);
    expect(dry.body.metadata.managedFields[0].manager).toBe('fleet');
    expect(call(store, 'GET', WEB).status).toBe(404);
    apply(store, deployment());
    const before = call(store, 'GET', WEB).body;
    const dryUpdate = apply(
      store,
      deployment({ replicas: 1 }),
      'fieldManager=fleet&dryRun=All',
    );
    expect(dryUpdate.body.spec.replicas).toBe(1);
    const dryPatch = call(
      store,
      'PATCH',
      `${WEB}?dryRun=All`,
      { spec: { replicas: 7 } },
      'application/merge-patch+json',
    );
    expect(dryPatch.body.spec.replicas).toBe(7);
    expect(call(store, 'GET', WEB).body).toEqual(before);
  });

  it('merges Service ports by port and protocol, and keeps the allocated clusterIP', () => {
    const store = new ClusterStore(0);
    const service = (ports: unknown[]) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports },
    });
    const path = '/api/v1/namespaces/default/services/web?fieldManager=fleet';
    const first = call(
      store,
      'PATCH',
      path,
      service([
        { name: 'http', port: 80 },
        { name: 'metrics', port: 9090 },
      ]),
      APPLY,
    );
    expect(first.status).toBe(201);
    const second = call(
      store,
      'PATCH',
      path,
      service([{ name: 'http', port: 80 }]),
      APPLY,
    );
    expect(second.body.spec.ports.map((p: any) => p.port)).toEqual([80]);
    expect(second.body.spec.clusterIP).toBe(first.body.spec.clusterIP);
    expect(
      second.body.metadata.managedFields[0].fieldsV1['f:spec']['f:ports'],
    ).toHaveProperty(['k:{"port":80,"protocol":"TCP"}']);
  });

  it('refuses an applied configuration without kind, or with another name', () => {
    const store = new ClusterStore(0);
    const { kind: _, ...noKind } = deployment();
    expect(apply(store, noKind).status).toBe(400);
    const other = deployment();
    other.metadata.name = 'other';
    expect(apply(store, other).status).toBe(400);
  });

  it('takes a uid in the applied configuration as a precondition, as a real server does', () => {
    const store = new ClusterStore(0);
    const created = apply(store, deployment());
    expect(created.status).toBe(201);
    const uid = created.body.metadata.uid;
    const withUid = (value: string) => {
      const body: any = deployment({ replicas: 2 });
      body.metadata.uid = value;
      return body;
    };
    // The object's own uid: applied, and the uid is nobody's field.
    const same = apply(store, withUid(uid));
    expect(same.status).toBe(200);
    expect(same.body.spec.replicas).toBe(2);
    expect(JSON.stringify(same.body.metadata.managedFields)).not.toContain(
      'f:uid',
    );
    // Another object's uid: an immutable field changed, 422, nothing written.
    const other = apply(store, withUid('00000000-0000-0000-0000-000000000000'));
    expect(other.status).toBe(422);
    expect(JSON.stringify(other.body)).toContain('metadata.uid');
    // No object any more: 409, nothing created.
    expect(call(store, 'DELETE', WEB).status).toBe(200);
    const gone = apply(store, withUid(uid));
    expect(gone.status).toBe(409);
    expect(call(store, 'GET', WEB).status).toBe(404);
  });
});
