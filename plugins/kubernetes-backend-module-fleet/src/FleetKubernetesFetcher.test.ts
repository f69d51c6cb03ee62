/*
 * The module's fetcher against simulated clusters over HTTPS: the lists the Kubernetes plugin's
 * own fetcher reads, the per-cluster deadline, and clusters Fleet saw failing. The module test
 * runs it inside the real Kubernetes backend.
 */
import { mockServices } from '@backstage/backend-test-utils';
import { ConfigReader } from '@backstage/config';
import type { JsonObject } from '@backstage/types';
import type {
  ClusterDetails,
  KubernetesFetcher,
} from '@backstage/plugin-kubernetes-node';
import { useSimulator } from '@cnp/kube-simulator';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { readRequestTimeoutMs } from './config';
import { FleetEnvRedactingFetcher } from './FleetEnvRedactingFetcher';
import {
  FleetKubernetesFetcher,
  metricsSelector,
  type ClusterHealthView,
} from './FleetKubernetesFetcher';

const sim = useSimulator({ clusters: ['a', 'b'] });

function details(name: string): ClusterDetails {
  return {
    name,
    url: sim.endpoint(name),
    caData: Buffer.from(sim.caPem).toString('base64'),
    authMetadata: { 'kubernetes.io/auth-provider': 'fleet' },
  };
}

function fetcher(
  requestTimeoutMs: number,
  health: ClusterHealthView = { probeFailure: () => undefined },
) {
  return new FleetKubernetesFetcher({
    logger: mockServices.logger.mock(),
    health,
    requestTimeoutMs,
  });
}

function params(name: string, token = sim.token(name)) {
  return {
    serviceId: 'shop',
    clusterDetails: details(name),
    credential: { type: 'bearer token' as const, token },
    objectTypesToFetch: new Set([
      {
        group: '',
        apiVersion: 'v1',
        plural: 'services',
        objectType: 'services' as const,
      },
      {
        group: '',
        apiVersion: 'v1',
        plural: 'secrets',
        objectType: 'secrets' as const,
      },
    ]),
    customResources: [
      {
        group: 'example.com',
        apiVersion: 'v1',
        plural: 'widgets',
        objectType: 'customresources' as const,
      },
    ],
    namespace: 'default',
  };
}

describe('FleetKubernetesFetcher', () => {
  it("reads the lists as the plugin's own fetcher does: Secrets' values starred, the cluster's refusals as status errors", async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(sim.kubeconfigPath('a'));
    const core = kc.makeApiClient(CoreV1Api);
    const shop = { 'backstage.io/kubernetes-id': 'shop' };
    await core.createNamespacedSecret({
      namespace: 'default',
      body: {
        metadata: { name: 'db', labels: shop },
        stringData: { password: 'hunter2' },
      },
    });
    await core.createNamespacedService({
      namespace: 'default',
      body: {
        metadata: { name: 'shop', labels: shop },
        spec: { ports: [{ port: 80 }], selector: shop },
      },
    });
    // Another team's Secret in the same namespace, not labelled as the component's.
    await core.createNamespacedSecret({
      namespace: 'default',
      body: { metadata: { name: 'ledger' }, stringData: { key: 'k' } },
    });
    const result = await fetcher(10_000).fetchObjectsForService(params('a'));
    const of = (type: string) =>
      result.responses.find(r => r.type === type)!.resources as any[];
    expect(of('services').map(s => s.metadata.name)).toEqual(['shop']);
    const [secret, ...others] = of('secrets');
    expect(secret.metadata.name).toBe('db');
    expect(others).toEqual([]);
    expect(secret.data).toEqual({ password: '***' });
    expect(JSON.stringify(result)).not.toContain('hunter2');
    // The component's label selector annotation narrows the lists, never widens them: one that
    // matches every object still lists the component's own only.
    const everything = await fetcher(10_000).fetchObjectsForService({
      ...params('a'),
      labelSelector: 'nothing!=x',
    });
    expect(
      everything.responses.flatMap(r =>
        (r.resources as any[]).map(o => o.metadata.name),
      ),
    ).toEqual(['shop', 'db']);
    const narrower = await fetcher(10_000).fetchObjectsForService({
      ...params('a'),
      labelSelector: 'tier=none',
    });
    expect(narrower.responses.flatMap(r => r.resources)).toEqual([]);
    // No such kind on the cluster: the plugin's status error, as its own fetcher gives it.
    expect(result.errors).toEqual([
      {
        errorType: 'NOT_FOUND',
        statusCode: 404,
        resourcePath: '/apis/example.com/v1/namespaces/default/widgets',
      },
    ]);

    const refused = await fetcher(10_000).fetchObjectsForService(
      params('a', 'not-the-token'),
    );
    expect(refused.responses).toEqual([]);
    expect(refused.errors.map(e => (e as any).statusCode)).toEqual([
      401, 401, 401,
    ]);
    expect(refused.errors[0]).toMatchObject({
      errorType: 'UNAUTHORIZED_ERROR',
    });

    // Pod metrics: this cluster has no metrics-server.
    const metrics = await fetcher(10_000).fetchPodMetricsByNamespaces(
      details('a'),
      { type: 'bearer token', token: sim.token('a') },
      new Set(['default']),
    );
    expect(metrics.responses).toEqual([]);
    expect(metrics.errors).toEqual([
      {
        errorType: 'NOT_FOUND',
        statusCode: 404,
        resourcePath: '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods',
      },
    ]);
  });

  it("hides every object's plain env values, not only those Fleet generated", async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(sim.kubeconfigPath('a'));
    // A pod as a component's own manifests make it: its template carries the component's
    // Kubernetes id but none of Fleet's marks.
    await kc.makeApiClient(CoreV1Api).createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: {
          name: 'shop-worker',
          labels: { 'backstage.io/kubernetes-id': 'shop' },
        },
        spec: {
          containers: [
            {
              name: 'worker',
              image: 'shop:1.0',
              env: [
                { name: 'TOKEN', value: 'plain-s3cret' },
                {
                  name: 'DB',
                  valueFrom: { secretKeyRef: { name: 'db', key: 'password' } },
                },
              ],
            },
          ],
        },
      },
    });
    const pods = {
      ...params('a'),
      objectTypesToFetch: new Set([
        {
          group: '',
          apiVersion: 'v1',
          plural: 'pods',
          objectType: 'pods' as const,
        },
      ]),
      customResources: [],
    };
    const redacting = new FleetEnvRedactingFetcher(fetcher(10_000));
    const result = await redacting.fetchObjectsForService(pods);
    expect(JSON.stringify(result)).not.toContain('plain-s3cret');
    const [pod] = result.responses[0].resources as any[];
    expect(pod.metadata.name).toBe('shop-worker');
    expect(pod.spec.containers[0].env).toEqual([
      { name: 'TOKEN' },
      {
        name: 'DB',
        valueFrom: { secretKeyRef: { name: 'db', key: 'password' } },
      },
    ]);
  });

  it("hides the env values of the pods pod metrics carry, and lists only components' pods for them", async () => {
    // The simulated clusters have no metrics-server: the metrics' answer is what the plugin's
    // own fetcher makes of metrics and pods (client-node's topPods), each pod whole.
    const pod = {
      metadata: { name: 'shop-1', namespace: 'default' },
      spec: {
        containers: [
          { name: 'shop', env: [{ name: 'TOKEN', value: 'plain-s3cret' }] },
        ],
      },
    };
    const withMetrics: KubernetesFetcher = {
      fetchObjectsForService: async () => ({ errors: [], responses: [] }),
      fetchPodMetricsByNamespaces: async () => ({
        errors: [],
        responses: [
          {
            type: 'podstatus',
            resources: [
              {
                Pod: pod,
                CPU: { CurrentUsage: 0.1, RequestTotal: 0.1, LimitTotal: 0.2 },
                Memory: { CurrentUsage: 1, RequestTotal: 2, LimitTotal: 3 },
                Containers: [],
              },
            ],
          } as any,
        ],
      }),
    };
    const metrics = await new FleetEnvRedactingFetcher(
      withMetrics,
    ).fetchPodMetricsByNamespaces(
      details('a'),
      { type: 'bearer token', token: sim.token('a') },
      new Set(['default']),
      'nothing!=x',
    );
    expect(JSON.stringify(metrics)).not.toContain('plain-s3cret');
    expect(
      (metrics.responses[0].resources[0] as any).Pod.spec.containers[0].env,
    ).toEqual([{ name: 'TOKEN' }]);
    expect((metrics.responses[0].resources[0] as any).CPU.CurrentUsage).toBe(
      0.1,
    );
    // The pods listed for metrics carry a component's Kubernetes id, whatever the annotation.
    expect(metricsSelector('nothing!=x')).toBe(
      'backstage.io/kubernetes-id,nothing!=x',
    );
    expect(metricsSelector(undefined)).toBe('backstage.io/kubernetes-id');
  });

  it('cancels what a cluster did not answer by the deadline and names the cluster; a cluster that drops connections is named too', async () => {
    sim.setFault('b', { mode: 'timeout' });
    const late = await fetcher(300).fetchObjectsForService(params('b'));
    expect(late).toEqual({
      responses: [],
      errors: [
        {
          errorType: 'FETCH_ERROR',
          message:
            "Cluster 'b' did not answer within 0.3 s (kubernetes.fleet.requestTimeout): /api/v1/namespaces/default/services, /api/v1/namespaces/default/secrets, /apis/example.com/v1/namespaces/default/widgets",
        },
      ],
    });
    // Cancelled: the cluster holds none of them open.
    for (let i = 0; i < 100 && sim.heldRequestCount('b') > 0; i++)
      await new Promise(r => setTimeout(r, 20));
    expect(sim.heldRequestCount('b')).toBe(0);

    sim.setFault('b', { mode: 'down' });
    const dropped = await fetcher(10_000).fetchObjectsForService(params('b'));
    expect(dropped.responses).toEqual([]);
    expect(dropped.errors).toEqual([
      {
        errorType: 'FETCH_ERROR',
        message: expect.stringMatching(
          /^Cluster 'b' could not be read: \/api\/v1\/namespaces\/default\/services: /,
        ),
      },
    ]);
  });

  it('does not ask a cluster whose latest Fleet probe failed, and says so', async () => {
    const health: ClusterHealthView = {
      probeFailure: name =>
        name === 'b'
          ? { consecutiveFailures: 2, lastProbeAt: '2026-12-01T10:00:00.000Z' }
          : undefined,
    };
    const before = sim.requestCount('b');
    const skipped = fetcher(10_000, health);
    const failure = {
      responses: [],
      errors: [
        {
          errorType: 'FETCH_ERROR',
          message:
            "Cluster 'b' was not asked: Fleet's latest health probe of it failed (2 in a row, last at 2026-12-01T10:00:00.000Z); it is asked again once a probe succeeds",
        },
      ],
    };
    expect(await skipped.fetchObjectsForService(params('b'))).toEqual(failure);
    expect(
      await skipped.fetchPodMetricsByNamespaces(
        details('b'),
        { type: 'bearer token', token: sim.token('b') },
        new Set(['default']),
      ),
    ).toEqual(failure);
    expect(sim.requestCount('b')).toBe(before);
    expect(
      (await skipped.fetchObjectsForService(params('a'))).responses,
    ).toHaveLength(2);
  });
});

describe('kubernetes.fleet.requestTimeout', () => {
  const read = (fleet: JsonObject) =>
    readRequestTimeoutMs(new ConfigReader({ kubernetes: { fleet } }));

  it('defaults to 10 s and reads a duration', () => {
    expect(readRequestTimeoutMs(new ConfigReader({}))).toBe(10_000);
    expect(read({})).toBe(10_000);
    expect(read({ requestTimeout: '2s' })).toBe(2_000);
    expect(read({ requestTimeout: { milliseconds: 1500 } })).toBe(1_500);
  });

  it('refuses a bad value at startup, naming the key', () => {
    for (const requestTimeout of [
      'soon',
      5,
      { seconds: 'x' },
      '0s',
      { seconds: -1 },
      { minutes: 11 },
    ]) {
      expect(() => read({ requestTimeout })).toThrow(
        /^Invalid config value kubernetes\.fleet\.requestTimeout: /,
      );
    }
  });
});
