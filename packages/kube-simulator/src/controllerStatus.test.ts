/*
 * The status the HPA controller and the load balancer controllers write, through the real
 * @kubernetes/client-node 1.4.0 and the kubeconfig files the simulator wrote: what Argo CD's
 * health checks (and Fleet's) read.
 */
import {
  AppsV1Api,
  AutoscalingV2Api,
  CoreV1Api,
  KubeConfig,
  NetworkingV1Api,
  PatchStrategy,
  setHeaderOptions,
  V1Deployment,
  V2HorizontalPodAutoscaler,
} from '@kubernetes/client-node';
import { KubeSimulator } from './KubeSimulator';

const READY_DELAY_MS = 200;
let sim: KubeSimulator;
/**
 * The simulator's clock: it stands still unless a test moves it on, so that an address "not
 * there yet" is read as such however slow the machine is.
 */
let clockMs = Date.now();
const passes = (ms: number) => {
  clockMs += ms;
};

beforeAll(async () => {
  sim = await KubeSimulator.start({
    clusters: ['one', 'two'],
    readyDelayMs: READY_DELAY_MS,
    now: () => clockMs,
  });
});

afterAll(async () => {
  await sim?.stop();
});

function clients(cluster = 'one') {
  const kc = new KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath(cluster));
  return {
    apps: kc.makeApiClient(AppsV1Api),
    autoscaling: kc.makeApiClient(AutoscalingV2Api),
    core: kc.makeApiClient(CoreV1Api),
    networking: kc.makeApiClient(NetworkingV1Api),
  };
}

function deployment(name: string, replicas: number): V1Deployment {
  const labels = { app: name };
  return {
    metadata: { name, labels },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] },
      },
    },
  };
}

function hpa(
  name: string,
  target: string,
  minReplicas: number,
  maxReplicas: number,
): V2HorizontalPodAutoscaler {
  return {
    metadata: { name },
    spec: {
      scaleTargetRef: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: target,
      },
      minReplicas,
      maxReplicas,
    },
  };
}

function conditionsOf(h: V2HorizontalPodAutoscaler) {
  return Object.fromEntries(
    (h.status?.conditions ?? []).map(c => [
      c.type,
      { status: c.status, reason: c.reason, message: c.message },
    ]),
  );
}

describe('HorizontalPodAutoscaler status', () => {
  it('clamps its target, then reports ScalingLimited for as long as the clamp holds', async () => {
    const { apps, autoscaling } = clients();
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('small', 1),
    });
    await autoscaling.createNamespacedHorizontalPodAutoscaler({
      namespace: 'default',
      body: hpa('small', 'small', 2, 5),
    });
    const first = await autoscaling.readNamespacedHorizontalPodAutoscaler({
      name: 'small',
      namespace: 'default',
    });
    expect(first.status).toMatchObject({
      currentReplicas: 1,
      desiredReplicas: 2,
      observedGeneration: 1,
    });
    expect(first.status?.lastScaleTime).toBeInstanceOf(Date);
    expect(conditionsOf(first)).toEqual({
      AbleToScale: {
        status: 'True',
        reason: 'SucceededRescale',
        message: 'the HPA controller was able to update the target scale to 2',
      },
      ScalingActive: {
        status: 'True',
        reason: 'ValidMetricFound',
        message:
          'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)',
      },
      ScalingLimited: {
        status: 'True',
        reason: 'TooFewReplicas',
        message:
          'the desired replica count is less than the minimum replica count',
      },
    });
    expect(
      (
        await apps.readNamespacedDeployment({
          name: 'small',
          namespace: 'default',
        })
      ).spec?.replicas,
    ).toBe(2);

    // The next pass: the target has what the HPA set; the metrics still ask for fewer.
    const next = await autoscaling.readNamespacedHorizontalPodAutoscaler({
      name: 'small',
      namespace: 'default',
    });
    expect(next.status).toMatchObject({
      currentReplicas: 2,
      desiredReplicas: 2,
    });
    expect(next.status?.lastScaleTime).toEqual(first.status?.lastScaleTime);
    expect(conditionsOf(next)).toMatchObject({
      AbleToScale: { status: 'True', reason: 'ReadyForNewScale' },
      ScalingActive: { status: 'True', reason: 'ValidMetricFound' },
      ScalingLimited: { status: 'True', reason: 'TooFewReplicas' },
    });
    for (const c of next.status?.conditions ?? [])
      expect(c.lastTransitionTime).toBeInstanceOf(Date);
  });

  it('says DesiredWithinRange when the target is in range, and TooManyReplicas above it', async () => {
    const { apps, autoscaling } = clients();
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('mid', 3),
    });
    await autoscaling.createNamespacedHorizontalPodAutoscaler({
      namespace: 'default',
      body: hpa('mid', 'mid', 2, 5),
    });
    const within = await autoscaling.readNamespacedHorizontalPodAutoscaler({
      name: 'mid',
      namespace: 'default',
    });
    expect(within.status).toMatchObject({
      currentReplicas: 3,
      desiredReplicas: 3,
    });
    expect(within.status?.lastScaleTime).toBeUndefined();
    expect(conditionsOf(within)).toMatchObject({
      AbleToScale: { status: 'True', reason: 'ReadyForNewScale' },
      ScalingActive: { status: 'True', reason: 'ValidMetricFound' },
      ScalingLimited: {
        status: 'False',
        reason: 'DesiredWithinRange',
        message: 'the desired count is within the acceptable range',
      },
    });

    // The owner asks for more than the maximum.
    await apps.patchNamespacedDeployment(
      { name: 'mid', namespace: 'default', body: { spec: { replicas: 9 } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const above = await autoscaling.readNamespacedHorizontalPodAutoscaler({
      name: 'mid',
      namespace: 'default',
    });
    expect(above.status).toMatchObject({
      currentReplicas: 9,
      desiredReplicas: 5,
    });
    expect(conditionsOf(above)).toMatchObject({
      AbleToScale: { status: 'True', reason: 'SucceededRescale' },
      ScalingLimited: { status: 'True', reason: 'TooManyReplicas' },
    });
  });

  it('cannot scale a missing target: AbleToScale False FailedGetScale', async () => {
    const { apps, autoscaling } = clients();
    await autoscaling.createNamespacedHorizontalPodAutoscaler({
      namespace: 'default',
      body: hpa('orphan', 'nowhere', 1, 3),
    });
    const missing = await autoscaling.readNamespacedHorizontalPodAutoscaler({
      name: 'orphan',
      namespace: 'default',
    });
    expect(missing.status?.desiredReplicas).toBe(0);
    expect(missing.status?.currentReplicas).toBeUndefined();
    // The controller stops at the failed read: it sets no other condition.
    expect(conditionsOf(missing)).toEqual({
      AbleToScale: {
        status: 'False',
        reason: 'FailedGetScale',
        message:
          'the HPA controller was unable to get the target\'s current scale: deployments.apps "nowhere" not found',
      },
    });

    // Once the target exists, the HPA scales it.
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('nowhere', 2),
    });
    const found = await autoscaling.readNamespacedHorizontalPodAutoscaler({
      name: 'orphan',
      namespace: 'default',
    });
    expect(found.status).toMatchObject({
      currentReplicas: 2,
      desiredReplicas: 2,
    });
    expect(conditionsOf(found)).toMatchObject({
      AbleToScale: { status: 'True', reason: 'ReadyForNewScale' },
      ScalingActive: { status: 'True', reason: 'ValidMetricFound' },
      ScalingLimited: { status: 'False', reason: 'DesiredWithinRange' },
    });
  });

  it('is disabled while its target has no replicas', async () => {
    const { apps, autoscaling } = clients();
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('idle', 0),
    });
    await autoscaling.createNamespacedHorizontalPodAutoscaler({
      namespace: 'default',
      body: hpa('idle', 'idle', 1, 3),
    });
    const idle = await autoscaling.readNamespacedHorizontalPodAutoscaler({
      name: 'idle',
      namespace: 'default',
    });
    expect(idle.status?.desiredReplicas).toBe(0);
    expect(conditionsOf(idle)).toEqual({
      AbleToScale: expect.objectContaining({
        status: 'True',
        reason: 'SucceededGetScale',
      }),
      ScalingActive: {
        status: 'False',
        reason: 'ScalingDisabled',
        message:
          'scaling is disabled since the replica count of the target is zero',
      },
    });
  });

  it('ignores status sent through the main resource', async () => {
    const { autoscaling } = clients();
    await autoscaling.createNamespacedHorizontalPodAutoscaler({
      namespace: 'default',
      body: {
        ...hpa('sent', 'absent', 1, 2),
        status: {
          desiredReplicas: 7,
          conditions: [
            { type: 'AbleToScale', status: 'True', reason: 'Forged' },
          ],
        },
      },
    });
    const read = await autoscaling.readNamespacedHorizontalPodAutoscaler({
      name: 'sent',
      namespace: 'default',
    });
    expect(read.status?.desiredReplicas).toBe(0);
    expect(conditionsOf(read).AbleToScale.reason).toBe('FailedGetScale');
  });
});

describe('load balancer status', () => {
  const service = (name: string, type?: string) => ({
    metadata: { name },
    spec: { ...(type ? { type } : {}), ports: [{ port: 80 }] },
  });

  it('gives a LoadBalancer Service an address after the ready delay, and a ClusterIP Service none', async () => {
    const { core } = clients();
    const lb = await core.createNamespacedService({
      namespace: 'default',
      body: service('public', 'LoadBalancer'),
    });
    await core.createNamespacedService({
      namespace: 'default',
      body: service('internal'),
    });
    await core.createNamespacedService({
      namespace: 'default',
      body: service('ports', 'NodePort'),
    });
    expect(lb.status).toEqual({ loadBalancer: {} });
    expect(
      (
        await core.readNamespacedService({
          name: 'public',
          namespace: 'default',
        })
      ).status,
    ).toEqual({ loadBalancer: {} });

    passes(READY_DELAY_MS + 50);
    const ready = await core.readNamespacedService({
      name: 'public',
      namespace: 'default',
    });
    const ingress = ready.status?.loadBalancer?.ingress ?? [];
    expect(ingress).toHaveLength(1);
    expect(ingress[0].ip).toMatch(/^172\.18\.\d+\.\d+$/);
    expect(ingress[0].ipMode).toBe('VIP');
    for (const name of ['internal', 'ports']) {
      const other = await core.readNamespacedService({
        name,
        namespace: 'default',
      });
      expect(other.status).toEqual({ loadBalancer: {} });
    }
    // Stable: read again, the same address.
    const again = await core.readNamespacedService({
      name: 'public',
      namespace: 'default',
    });
    expect(again.status?.loadBalancer?.ingress?.[0].ip).toBe(ingress[0].ip);
    expect(again.metadata?.resourceVersion).toBe(
      ready.metadata?.resourceVersion,
    );

    // No longer a LoadBalancer (a merge patch replaces the ports, nodePorts and all): the
    // address goes.
    await core.patchNamespacedService(
      {
        name: 'public',
        namespace: 'default',
        body: { spec: { type: 'ClusterIP', ports: [{ port: 80 }] } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(
      (
        await core.readNamespacedService({
          name: 'public',
          namespace: 'default',
        })
      ).status,
    ).toEqual({ loadBalancer: {} });

    // A LoadBalancer again: provisioned the ready delay after the change, not after creation.
    await core.patchNamespacedService(
      {
        name: 'public',
        namespace: 'default',
        body: { spec: { type: 'LoadBalancer' } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const read = () =>
      core.readNamespacedService({ name: 'public', namespace: 'default' });
    expect((await read()).status).toEqual({ loadBalancer: {} });
    passes(READY_DELAY_MS + 50);
    expect((await read()).status?.loadBalancer?.ingress).toEqual([
      { ip: ingress[0].ip, ipMode: 'VIP' },
    ]);
  });

  it("gives each Ingress its cluster's ingress controller address after the ready delay", async () => {
    const ingress = (name: string) => ({
      metadata: { name },
      spec: {
        rules: [
          {
            host: `${name}.example.com`,
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
    });
    const one = clients('one').networking;
    const two = clients('two').networking;
    const created = await one.createNamespacedIngress({
      namespace: 'default',
      body: ingress('web'),
    });
    await one.createNamespacedIngress({
      namespace: 'default',
      body: ingress('api'),
    });
    await two.createNamespacedIngress({
      namespace: 'default',
      body: ingress('web'),
    });
    expect(created.status).toEqual({ loadBalancer: {} });

    passes(READY_DELAY_MS + 50);
    const read = (api: NetworkingV1Api, name: string) =>
      api.readNamespacedIngress({ name, namespace: 'default' });
    const web = await read(one, 'web');
    const address = web.status?.loadBalancer?.ingress?.[0]?.ip;
    expect(web.status?.loadBalancer?.ingress).toEqual([{ ip: address }]);
    expect(address).toMatch(/^172\.19\.\d+\.\d+$/);
    expect((await read(one, 'api')).status?.loadBalancer?.ingress).toEqual([
      { ip: address },
    ]);
    const elsewhere = (await read(two, 'web')).status?.loadBalancer?.ingress;
    expect(elsewhere).toHaveLength(1);
    expect(elsewhere?.[0].ip).toMatch(/^172\.19\.\d+\.\d+$/);
  });
});
