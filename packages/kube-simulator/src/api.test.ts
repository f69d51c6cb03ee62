import { handleApi, ApiRequest, watchTarget } from './api';
import { ClusterStore } from './store';

function call(
  store: ClusterStore,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
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
  };
  return handleApi(store, req) as { status: number; body: any; text?: string };
}

const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
const ROLLOUTS = '/apis/argoproj.io/v1alpha1/namespaces/default/rollouts';

const deploymentYaml = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: app
          image: nginx
`;

describe('handleApi', () => {
  it('serves discovery documents', () => {
    const store = new ClusterStore(0);
    expect(call(store, 'GET', '/version').body).toMatchObject({
      gitVersion: 'v1.30.0',
      major: '1',
      minor: '30',
    });
    expect(call(store, 'GET', '/api').body).toMatchObject({
      kind: 'APIVersions',
      versions: ['v1'],
    });
    const core = call(store, 'GET', '/api/v1').body;
    expect(core.resources.map((r: any) => r.name)).toEqual(
      expect.arrayContaining(['namespaces', 'services', 'services/status']),
    );
    expect(
      call(store, 'GET', '/apis/autoscaling/v2').body.resources[0],
    ).toMatchObject({
      name: 'horizontalpodautoscalers',
      kind: 'HorizontalPodAutoscaler',
      namespaced: true,
    });
    expect(call(store, 'GET', '/apis/policy').body).toMatchObject({
      kind: 'APIGroup',
      name: 'policy',
    });
    expect(call(store, 'GET', '/livez')).toMatchObject({
      status: 200,
      text: 'ok',
    });
    expect(call(store, 'GET', '/apis/storage.k8s.io/v1').status).toBe(404);
  });

  it('hides argoproj.io when the Rollouts CRD is not installed', () => {
    const store = new ClusterStore(0);
    store.setCrdInstalled('rollouts.argoproj.io', false);
    const groups = call(store, 'GET', '/apis').body.groups.map(
      (g: any) => g.name,
    );
    expect(groups).not.toContain('argoproj.io');
    expect(call(store, 'GET', ROLLOUTS).status).toBe(404);
  });

  it('creates from JSON or YAML with 201, and answers 415 to other media types', () => {
    const store = new ClusterStore(0);
    const created = call(
      store,
      'POST',
      DEPLOYMENTS,
      deploymentYaml,
      'application/yaml',
    );
    expect(created.status).toBe(201);
    expect(created.body.spec.template.spec.containers[0].imagePullPolicy).toBe(
      'Always',
    );
    expect(
      call(
        store,
        'POST',
        DEPLOYMENTS,
        'x=1',
        'application/x-www-form-urlencoded',
      ).status,
    ).toBe(415);
    expect(call(store, 'POST', DEPLOYMENTS, '{not json').status).toBe(400);
    expect(
      call(store, 'POST', '/apis/apps/v1/deployments', {
        metadata: { name: 'x' },
      }).status,
    ).toBe(405);
  });

  it('accepts the three patch types and apply for built-ins, not strategic merge for custom resources', () => {
    const store = new ClusterStore(0);
    call(store, 'POST', DEPLOYMENTS, deploymentYaml, 'application/yaml');
    const patch = (path: string, type: string, body: unknown) =>
      call(store, 'PATCH', path, body, type).status;
    expect(
      patch(`${DEPLOYMENTS}/web`, 'application/merge-patch+json', {
        spec: { replicas: 2 },
      }),
    ).toBe(200);
    expect(
      patch(`${DEPLOYMENTS}/web`, 'application/strategic-merge-patch+json', {
        spec: { replicas: 3 },
      }),
    ).toBe(200);
    expect(
      patch(`${DEPLOYMENTS}/web`, 'application/json-patch+json', [
        { op: 'replace', path: '/spec/replicas', value: 4 },
      ]),
    ).toBe(200);
    expect(
      patch(`${DEPLOYMENTS}/web`, 'application/json', {
        spec: { replicas: 5 },
      }),
    ).toBe(415);
    // Server-side apply needs a field manager (422 without one).
    expect(
      patch(`${DEPLOYMENTS}/web`, 'application/apply-patch+yaml', 'spec: {}'),
    ).toBe(422);
    call(store, 'POST', ROLLOUTS, {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Rollout',
      metadata: { name: 'r' },
      spec: {},
    });
    expect(
      patch(`${ROLLOUTS}/r`, 'application/strategic-merge-patch+json', {
        spec: { replicas: 2 },
      }),
    ).toBe(415);
    expect(
      patch(`${ROLLOUTS}/r`, 'application/merge-patch+json', {
        spec: { replicas: 2 },
      }),
    ).toBe(200);
    expect(
      patch(
        `${ROLLOUTS}/r?fieldManager=fleet`,
        'application/apply-patch+yaml',
        'apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nspec: {replicas: 2}',
      ),
    ).toBe(200);
  });

  it('serves the status subresource, and rejects bad query parameters', () => {
    const store = new ClusterStore(0);
    call(store, 'POST', DEPLOYMENTS, deploymentYaml, 'application/yaml');
    expect(
      call(store, 'GET', `${DEPLOYMENTS}/web/status`).body.status
        .observedGeneration,
    ).toBe(1);
    expect(call(store, 'GET', `${DEPLOYMENTS}/web/scale`).status).toBe(404);
    expect(call(store, 'GET', `${DEPLOYMENTS}?limit=abc`).status).toBe(400);
    expect(
      call(store, 'GET', `${DEPLOYMENTS}?labelSelector=a%20in%20(`).status,
    ).toBe(400);
    expect(
      call(store, 'GET', `${DEPLOYMENTS}?fieldSelector=spec.replicas%3D1`)
        .status,
    ).toBe(400);
    expect(
      call(
        store,
        'POST',
        `${DEPLOYMENTS}?dryRun=Yes`,
        deploymentYaml,
        'application/yaml',
      ).status,
    ).toBe(400);
    const dry = call(store, 'DELETE', `${DEPLOYMENTS}/web?dryRun=All`);
    expect(dry.status).toBe(200);
    expect(call(store, 'GET', `${DEPLOYMENTS}/web`).status).toBe(200);
  });

  it('serves namespaces as a cluster-scoped resource', () => {
    const store = new ClusterStore(0);
    expect(
      call(store, 'POST', '/api/v1/namespaces', {
        metadata: { name: 'team-a' },
      }).status,
    ).toBe(201);
    expect(
      call(store, 'GET', '/api/v1/namespaces/team-a').body.metadata.labels,
    ).toEqual({
      'kubernetes.io/metadata.name': 'team-a',
    });
    expect(
      call(store, 'GET', '/api/v1/namespaces/team-a/status').body.status.phase,
    ).toBe('Active');
    expect(
      call(store, 'POST', '/api/v1/namespaces', {
        metadata: { name: 'Team_A' },
      }).status,
    ).toBe(422);
    expect(
      call(store, 'DELETE', '/api/v1/namespaces/team-a').body.status.phase,
    ).toBe('Terminating');
    expect(call(store, 'GET', '/api/v1/namespaces/team-a').status).toBe(404);
  });

  it('tells watches from other requests', () => {
    const store = new ClusterStore(0);
    const target = (method: string, path: string, query = '') =>
      watchTarget(store, method, path, new URLSearchParams(query));
    expect(target('GET', DEPLOYMENTS, 'watch=true')).toMatchObject({
      def: { kind: 'Deployment' },
      namespace: 'default',
    });
    expect(target('GET', DEPLOYMENTS, 'watch=1')).toBeDefined();
    expect(
      target('GET', '/apis/apps/v1/deployments', 'watch=true'),
    ).toMatchObject({ def: { kind: 'Deployment' }, namespace: undefined });
    expect(target('GET', DEPLOYMENTS, 'watch=false')).toBeUndefined();
    expect(target('GET', DEPLOYMENTS)).toBeUndefined();
    expect(target('POST', DEPLOYMENTS, 'watch=true')).toBeUndefined();
    // a GET of one object ignores watch, as the API server's get handler does
    expect(target('GET', `${DEPLOYMENTS}/web`, 'watch=true')).toBeUndefined();
    // the legacy /watch/ paths, one object by name
    expect(
      target('GET', '/apis/apps/v1/watch/namespaces/default/deployments/web'),
    ).toMatchObject({
      namespace: 'default',
      nameSelector: 'metadata.name=web',
    });
    expect(() => target('GET', DEPLOYMENTS, 'watch=maybe')).toThrow(
      /strconv.ParseBool/,
    );
    expect(() =>
      target('GET', '/apis/apps/v1/namespaces/default/nothings', 'watch=true'),
    ).toThrow('the server could not find the requested resource');
  });
});
