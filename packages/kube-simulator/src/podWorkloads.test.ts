/*
 * StatefulSets, DaemonSets, Jobs and CronJobs through the real @kubernetes/client-node over
 * HTTPS: the status their controllers write as time passes, their pods, the images that never
 * become ready (a tag ending in `broken`: running, unready; in `crashloop`: crash-looping), and
 * the API server's refusals.
 */
import {
  ApiException,
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  V1DaemonSet,
  V1Deployment,
  V1Job,
  V1StatefulSet,
} from '@kubernetes/client-node';
import { useSimulator } from './useSimulator';

const READY_DELAY_MS = 100;
const sim = useSimulator({
  clusters: ['current', 'newer'],
  readyDelayMs: READY_DELAY_MS,
  serverVersions: { newer: 'v1.31.2' },
});

function clients(cluster = 'current') {
  const kc = new KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath(cluster));
  return {
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    batch: kc.makeApiClient(BatchV1Api),
  };
}

/** Polls `read` until `done` holds of its answer (or the time is up), and returns the answer. */
async function until<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await new Promise(r => setTimeout(r, 25));
    value = await read();
  }
  return value;
}

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

function template(app: string, image: string, restartPolicy?: string) {
  return {
    metadata: { labels: { app } },
    spec: {
      containers: [{ name: 'main', image }],
      ...(restartPolicy ? { restartPolicy } : {}),
    },
  };
}

function statefulSet(name: string, image: string, replicas = 3): V1StatefulSet {
  return {
    metadata: { name },
    spec: {
      serviceName: name,
      replicas,
      selector: { matchLabels: { app: name } },
      template: template(name, image),
    },
  };
}

function job(name: string, image: string, spec: Partial<V1Job['spec']> = {}) {
  return {
    metadata: { name },
    spec: { template: template(name, image, 'Never'), ...spec },
  } as V1Job;
}

async function podsOf(app: string, cluster = 'current') {
  const pods = await clients(cluster).core.listNamespacedPod({
    namespace: 'default',
    labelSelector: `app=${app}`,
  });
  return pods.items;
}

async function errorOf(promise: Promise<unknown>): Promise<ApiException<any>> {
  try {
    await promise;
  } catch (e) {
    if (e instanceof ApiException) return e;
    throw e;
  }
  throw new Error('expected the request to fail');
}

describe('StatefulSets', () => {
  it('start their pods <name>-0..n-1 in order, each once the previous one is ready', async () => {
    const { apps } = clients();
    // Long enough for db-0 to be read alone, before it is ready, even on a busy machine.
    sim.setReadiness('current', { readyDelayMs: 3000 });
    const created = await apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: statefulSet('db', 'postgres:16'),
    });
    expect(created.spec?.podManagementPolicy).toBe('OrderedReady');
    expect(created.spec?.updateStrategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { partition: 0 },
    });
    expect(created.status).toMatchObject({
      observedGeneration: 1,
      replicas: 1,
      availableReplicas: 0,
    });
    expect(created.status?.readyReplicas).toBeUndefined();
    expect((await podsOf('db')).map(p => p.metadata?.name)).toEqual(['db-0']);
    sim.setReadiness('current', { readyDelayMs: READY_DELAY_MS });

    const ready = await until(
      () =>
        apps.readNamespacedStatefulSet({ name: 'db', namespace: 'default' }),
      s => s.status?.readyReplicas === 3,
    );
    expect(ready.status).toMatchObject({
      observedGeneration: 1,
      replicas: 3,
      readyReplicas: 3,
      currentReplicas: 3,
      updatedReplicas: 3,
      availableReplicas: 3,
    });
    expect(ready.status?.currentRevision).toBe(ready.status?.updateRevision);
    const pods = await podsOf('db');
    expect(pods.map(p => p.metadata?.name).sort()).toEqual([
      'db-0',
      'db-1',
      'db-2',
    ]);
    for (const pod of pods) {
      expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({
        kind: 'StatefulSet',
        name: 'db',
        controller: true,
      });
      expect(pod.metadata?.labels?.['controller-revision-hash']).toBe(
        ready.status?.updateRevision,
      );
      expect(pod.spec?.hostname).toBe(pod.metadata?.name);
      expect(pod.spec?.subdomain).toBe('db');
      expect(
        pod.status?.conditions?.find(c => c.type === 'Ready')?.status,
      ).toBe('True');
    }
  });

  it('roll a template change out from the highest ordinal down', async () => {
    // Slow enough that the pods are read before the next one is replaced, even on a busy machine.
    sim.setReadiness('current', { readyDelayMs: 3000 });
    const { apps } = clients();
    const body = statefulSet('cache', 'redis:7', 2);
    await apps.createNamespacedStatefulSet({ namespace: 'default', body });
    const first = await until(
      () =>
        apps.readNamespacedStatefulSet({ name: 'cache', namespace: 'default' }),
      s => s.status?.readyReplicas === 2,
    );
    const oldRevision = first.status?.updateRevision;
    body.spec!.template.spec!.containers[0].image = 'redis:7.2';
    const updated = await apps.replaceNamespacedStatefulSet({
      name: 'cache',
      namespace: 'default',
      body,
    });
    expect(updated.status?.observedGeneration).toBe(2);
    expect(updated.status?.currentRevision).toBe(oldRevision);
    expect(updated.status?.updateRevision).not.toBe(oldRevision);
    expect(updated.status?.updatedReplicas).toBe(1);
    const pods = await podsOf('cache');
    const revisionOf = (name: string) =>
      pods.find(p => p.metadata?.name === name)?.metadata?.labels?.[
        'controller-revision-hash'
      ];
    expect(revisionOf('cache-1')).toBe(updated.status?.updateRevision);
    expect(revisionOf('cache-0')).toBe(oldRevision);

    const done = await until(
      () =>
        apps.readNamespacedStatefulSet({ name: 'cache', namespace: 'default' }),
      s => s.status?.currentRevision === s.status?.updateRevision,
    );
    expect(done.status).toMatchObject({
      replicas: 2,
      readyReplicas: 2,
      currentReplicas: 2,
      updatedReplicas: 2,
    });
  });

  it("never get ready with a broken image, while the cluster's other workloads do", async () => {
    const { apps } = clients();
    await apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: statefulSet('broken-db', 'postgres:broken'),
    });
    await apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: statefulSet('fine-db', 'postgres:16', 1),
    });
    await sleep(4 * READY_DELAY_MS);
    const broken = await apps.readNamespacedStatefulSet({
      name: 'broken-db',
      namespace: 'default',
    });
    expect(broken.status).toMatchObject({ replicas: 1, availableReplicas: 0 });
    expect(broken.status?.readyReplicas).toBeUndefined();
    const [pod] = await podsOf('broken-db');
    expect(pod.metadata?.name).toBe('broken-db-0');
    expect(pod.status?.containerStatuses?.[0]).toMatchObject({
      ready: false,
      restartCount: 0,
      state: { running: expect.anything() },
    });
    const fine = await apps.readNamespacedStatefulSet({
      name: 'fine-db',
      namespace: 'default',
    });
    expect(fine.status?.readyReplicas).toBe(1);
  });

  it('refuse a change of a field other than replicas, template and update strategy', async () => {
    const { apps } = clients();
    await apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: statefulSet('fixed', 'nginx:1', 1),
    });
    const error = await errorOf(
      apps.patchNamespacedStatefulSet(
        {
          name: 'fixed',
          namespace: 'default',
          body: { spec: { serviceName: 'other' } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
    expect(error.code).toBe(422);
    expect(JSON.parse(error.body).details.causes[0]).toMatchObject({
      field: 'spec',
      reason: 'FieldValueForbidden',
    });
  });

  it('delete their pods with them', async () => {
    const { apps } = clients();
    await apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: statefulSet('gone', 'nginx:1', 1),
    });
    expect(await podsOf('gone')).toHaveLength(1);
    await apps.deleteNamespacedStatefulSet({
      name: 'gone',
      namespace: 'default',
    });
    expect(await podsOf('gone')).toHaveLength(0);
  });
});

describe('Deployments with a broken or crash-looping image', () => {
  const deployment = (
    name: string,
    image: string,
    progressDeadlineSeconds?: number,
  ): V1Deployment => ({
    metadata: { name },
    spec: {
      replicas: 2,
      ...(progressDeadlineSeconds !== undefined && { progressDeadlineSeconds }),
      selector: { matchLabels: { app: name } },
      template: template(name, image),
    },
  });

  it('never become available while another Deployment does', async () => {
    const { apps } = clients();
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('api-broken', 'example/api:v2-broken'),
    });
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('api-fine', 'example/api:v2'),
    });
    await sleep(2 * READY_DELAY_MS);
    const broken = await apps.readNamespacedDeployment({
      name: 'api-broken',
      namespace: 'default',
    });
    expect(broken.status?.availableReplicas).toBeUndefined();
    expect(broken.status?.unavailableReplicas).toBe(2);
    expect(
      broken.status?.conditions?.find(c => c.type === 'Progressing')?.reason,
    ).toBe('ReplicaSetUpdated');
    const fine = await apps.readNamespacedDeployment({
      name: 'api-fine',
      namespace: 'default',
    });
    expect(fine.status?.availableReplicas).toBe(2);
  });

  it('`broken`: pods run, never ready and never restarted, their readiness probe failing', async () => {
    const { apps, core } = clients();
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('web-unready', 'example/web:broken'),
    });
    await sleep(3 * READY_DELAY_MS);
    const pods = await podsOf('web-unready');
    expect(pods).toHaveLength(2);
    for (const pod of pods) {
      expect(pod.status?.phase).toBe('Running');
      expect(pod.status?.conditions).toContainEqual(
        expect.objectContaining({
          type: 'Ready',
          status: 'False',
          reason: 'ContainersNotReady',
        }),
      );
      expect(pod.status?.containerStatuses?.[0]).toMatchObject({
        ready: false,
        started: true,
        restartCount: 0,
        state: { running: expect.anything() },
      });
    }
    const events = await core.listNamespacedEvent({ namespace: 'default' });
    const unhealthy = events.items.filter(
      e =>
        e.reason === 'Unhealthy' &&
        e.involvedObject.name?.startsWith('web-unready-'),
    );
    expect(unhealthy).toHaveLength(2);
    expect(unhealthy[0]).toMatchObject({
      type: 'Warning',
      message: 'Readiness probe failed: the container never became ready',
    });
  });

  it('`crashloop`: pods crash-loop, restarted, waiting in CrashLoopBackOff', async () => {
    const { apps } = clients();
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('api-crash', 'example/api:v2-crashloop'),
    });
    await sleep(2 * READY_DELAY_MS);
    const read = await apps.readNamespacedDeployment({
      name: 'api-crash',
      namespace: 'default',
    });
    expect(read.status?.availableReplicas).toBeUndefined();
    const pods = await podsOf('api-crash');
    expect(pods).toHaveLength(2);
    for (const pod of pods) {
      const [container] = pod.status?.containerStatuses ?? [];
      expect(container.ready).toBe(false);
      expect(container.restartCount).toBeGreaterThanOrEqual(1);
      expect(container.state?.waiting?.reason).toBe('CrashLoopBackOff');
      expect(container.lastState?.terminated?.exitCode).toBe(1);
    }
  });

  it.each(['example/api:broken', 'example/api:crashloop'])(
    '%s: the rollout stalls until its progress deadline passes',
    async image => {
      const { apps } = clients();
      const name = image.endsWith('broken') ? 'stall-broken' : 'stall-crash';
      await apps.createNamespacedDeployment({
        namespace: 'default',
        body: deployment(name, image, 1),
      });
      const stalled = await until(
        () => apps.readNamespacedDeployment({ name, namespace: 'default' }),
        d =>
          d.status?.conditions?.find(c => c.type === 'Progressing')?.reason ===
          'ProgressDeadlineExceeded',
      );
      expect(
        stalled.status?.conditions?.find(c => c.type === 'Progressing'),
      ).toMatchObject({ status: 'False', reason: 'ProgressDeadlineExceeded' });
      expect(stalled.status?.availableReplicas).toBeUndefined();
    },
  );
});

describe('DaemonSets', () => {
  it('run one pod on each of the three nodes, ready after the delay', async () => {
    const { apps } = clients();
    const body: V1DaemonSet = {
      metadata: { name: 'agent' },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: template('agent', 'fluent-bit:3'),
      },
    };
    const created = await apps.createNamespacedDaemonSet({
      namespace: 'default',
      body,
    });
    expect(created.spec?.updateStrategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 1, maxSurge: 0 },
    });
    expect(created.status).toEqual({
      currentNumberScheduled: 3,
      numberMisscheduled: 0,
      desiredNumberScheduled: 3,
      numberReady: 0,
      observedGeneration: 1,
      updatedNumberScheduled: 3,
      numberUnavailable: 3,
    });
    const ready = await until(
      () =>
        apps.readNamespacedDaemonSet({ name: 'agent', namespace: 'default' }),
      d => d.status?.numberReady === 3,
    );
    expect(ready.status).toEqual({
      currentNumberScheduled: 3,
      numberMisscheduled: 0,
      desiredNumberScheduled: 3,
      numberReady: 3,
      observedGeneration: 1,
      updatedNumberScheduled: 3,
      numberAvailable: 3,
    });
    const pods = await podsOf('agent');
    expect(pods.map(p => p.spec?.nodeName).sort()).toEqual([
      'sim-node-1',
      'sim-node-2',
      'sim-node-3',
    ]);
  });

  it("replace one node's pod at a time on a template change", async () => {
    const { apps } = clients();
    const body: V1DaemonSet = {
      metadata: { name: 'shipper' },
      spec: {
        selector: { matchLabels: { app: 'shipper' } },
        template: template('shipper', 'vector:0.40'),
      },
    };
    await apps.createNamespacedDaemonSet({ namespace: 'default', body });
    await until(
      () =>
        apps.readNamespacedDaemonSet({ name: 'shipper', namespace: 'default' }),
      d => d.status?.numberReady === 3,
    );
    const before = (await podsOf('shipper')).map(p => p.metadata?.name);
    body.spec!.template.spec!.containers[0].image = 'vector:0.41';
    const updated = await apps.replaceNamespacedDaemonSet({
      name: 'shipper',
      namespace: 'default',
      body,
    });
    expect(updated.status).toMatchObject({
      observedGeneration: 2,
      numberReady: 2,
      updatedNumberScheduled: 1,
      numberUnavailable: 1,
    });
    const done = await until(
      () =>
        apps.readNamespacedDaemonSet({ name: 'shipper', namespace: 'default' }),
      d => d.status?.updatedNumberScheduled === 3 && d.status.numberReady === 3,
    );
    expect(done.status?.numberAvailable).toBe(3);
    const after = (await podsOf('shipper')).map(p => p.metadata?.name);
    expect(after).toHaveLength(3);
    expect(after.filter(name => before.includes(name))).toEqual([]);
  });

  it('never get ready with a broken image', async () => {
    const { apps } = clients();
    await apps.createNamespacedDaemonSet({
      namespace: 'default',
      body: {
        metadata: { name: 'bad-agent' },
        spec: {
          selector: { matchLabels: { app: 'bad-agent' } },
          template: template('bad-agent', 'fluent-bit:broken'),
        },
      },
    });
    await sleep(2 * READY_DELAY_MS);
    const read = await apps.readNamespacedDaemonSet({
      name: 'bad-agent',
      namespace: 'default',
    });
    expect(read.status?.numberReady).toBe(0);
    expect(read.status?.numberUnavailable).toBe(3);
  });
});

describe('Jobs', () => {
  it('start, then complete after the delay (Kubernetes 1.30: Complete alone)', async () => {
    // Slow enough that the Job is read running before it completes, even on a busy machine (at
    // 500 ms a loaded run read it complete).
    sim.setReadiness('current', { readyDelayMs: 3000 });
    const { batch } = clients();
    const created = await batch.createNamespacedJob({
      namespace: 'default',
      body: job('migrate', 'busybox:1.36'),
    });
    expect(created.spec).toMatchObject({
      completions: 1,
      parallelism: 1,
      backoffLimit: 6,
      completionMode: 'NonIndexed',
      suspend: false,
      selector: {
        matchLabels: {
          'batch.kubernetes.io/controller-uid': created.metadata?.uid,
        },
      },
    });
    expect(created.spec?.template.metadata?.labels).toEqual({
      app: 'migrate',
      'batch.kubernetes.io/controller-uid': created.metadata?.uid,
      'batch.kubernetes.io/job-name': 'migrate',
      'controller-uid': created.metadata?.uid,
      'job-name': 'migrate',
    });
    const running = await batch.readNamespacedJob({
      name: 'migrate',
      namespace: 'default',
    });
    expect(running.status?.startTime).toBeDefined();
    expect(running.status?.active).toBe(1);
    const [runningPod] = await podsOf('migrate');
    expect(runningPod.status?.phase).toBe('Running');
    expect(runningPod.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'Job',
      name: 'migrate',
    });
    expect(runningPod.metadata?.labels?.['batch.kubernetes.io/job-name']).toBe(
      'migrate',
    );
    const done = await until(
      () => batch.readNamespacedJob({ name: 'migrate', namespace: 'default' }),
      j => j.status?.succeeded === 1,
    );
    expect(done.status?.completionTime).toBeDefined();
    expect(done.status?.active).toBeUndefined();
    expect(
      done.status?.conditions?.map(c => [c.type, c.status, c.reason]),
    ).toEqual([['Complete', 'True', undefined]]);
    const pods = await podsOf('migrate');
    expect(pods.map(p => p.metadata?.name)).toEqual([
      runningPod.metadata?.name,
    ]);
    expect(pods[0].status?.phase).toBe('Succeeded');
    expect(
      pods[0].status?.containerStatuses?.[0].state?.terminated,
    ).toMatchObject({ exitCode: 0, reason: 'Completed' });
  });

  it('write SuccessCriteriaMet before Complete from Kubernetes 1.31', async () => {
    const { batch } = clients('newer');
    await batch.createNamespacedJob({
      namespace: 'default',
      body: job('migrate', 'busybox:1.36', { completions: 2, parallelism: 2 }),
    });
    const done = await until(
      () => batch.readNamespacedJob({ name: 'migrate', namespace: 'default' }),
      j => j.status?.succeeded === 2,
    );
    expect(
      done.status?.conditions?.map(c => [c.type, c.status, c.reason]),
    ).toEqual([
      ['SuccessCriteriaMet', 'True', 'CompletionsReached'],
      ['Complete', 'True', 'CompletionsReached'],
    ]);
  });

  it('fail with BackoffLimitExceeded when their image is broken', async () => {
    const { batch } = clients();
    await batch.createNamespacedJob({
      namespace: 'default',
      body: job('doomed', 'busybox:broken', { backoffLimit: 1 }),
    });
    const failed = await until(
      () => batch.readNamespacedJob({ name: 'doomed', namespace: 'default' }),
      j => (j.status?.conditions ?? []).length > 0,
    );
    expect(failed.status?.failed).toBe(2);
    const pods = await podsOf('doomed');
    expect(pods.map(p => p.status?.phase)).toEqual(['Failed', 'Failed']);
    expect(failed.status?.succeeded).toBeUndefined();
    expect(failed.status?.completionTime).toBeUndefined();
    expect(failed.status?.conditions).toEqual([
      expect.objectContaining({
        type: 'Failed',
        status: 'True',
        reason: 'BackoffLimitExceeded',
        message: 'Job has reached the specified backoff limit',
      }),
    ]);
    await sleep(2 * READY_DELAY_MS);
    const later = await batch.readNamespacedJob({
      name: 'doomed',
      namespace: 'default',
    });
    expect(later.status).toEqual(failed.status);
  });

  it('refuse a change of their pod template (field is immutable)', async () => {
    const { batch } = clients();
    await batch.createNamespacedJob({
      namespace: 'default',
      body: job('once', 'busybox:1.36'),
    });
    // Read again, and again on a 409: the Job controller writes its status (a new
    // resourceVersion) while its pods run, which a loaded machine can make land in between.
    let error!: ApiException<any>;
    for (let attempt = 0; attempt < 10; attempt++) {
      const current = await batch.readNamespacedJob({
        name: 'once',
        namespace: 'default',
      });
      current.spec!.template.spec!.containers[0].image = 'busybox:1.37';
      error = await errorOf(
        batch.replaceNamespacedJob({
          name: 'once',
          namespace: 'default',
          body: current,
        }),
      );
      if (error.code !== 409) break;
    }
    expect(error.code).toBe(422);
    const status = JSON.parse(error.body);
    expect(status.message).toContain('Job.batch "once" is invalid');
    expect(status.details.causes).toEqual([
      expect.objectContaining({
        field: 'spec.template',
        reason: 'FieldValueInvalid',
        message: expect.stringContaining('field is immutable'),
      }),
    ]);
  });

  it('refuse a pod template whose restartPolicy is not OnFailure or Never', async () => {
    const { batch } = clients();
    const error = await errorOf(
      batch.createNamespacedJob({
        namespace: 'default',
        body: {
          metadata: { name: 'restarts' },
          spec: { template: template('restarts', 'busybox:1.36') },
        },
      }),
    );
    expect(error.code).toBe(422);
    expect(JSON.parse(error.body).details.causes).toEqual([
      {
        reason: 'FieldValueNotSupported',
        field: 'spec.template.spec.restartPolicy',
        message:
          'Unsupported value: "Always": supported values: "OnFailure", "Never"',
      },
    ]);
  });
});

describe('CronJobs', () => {
  it('are stored with their defaults and an empty status', async () => {
    const { batch } = clients();
    const created = await batch.createNamespacedCronJob({
      namespace: 'default',
      body: {
        metadata: { name: 'nightly' },
        spec: {
          schedule: '0 3 * * *',
          jobTemplate: {
            spec: {
              template: template('nightly', 'busybox:1.36', 'OnFailure'),
            },
          },
        },
      },
    });
    expect(created.spec).toMatchObject({
      concurrencyPolicy: 'Allow',
      suspend: false,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 1,
    });
    await sleep(2 * READY_DELAY_MS);
    const read = await batch.readNamespacedCronJob({
      name: 'nightly',
      namespace: 'default',
    });
    expect(read.status).toEqual({});
    expect(read.metadata?.resourceVersion).toBe(
      created.metadata?.resourceVersion,
    );
  });

  it('refuse a schedule that is not five fields', async () => {
    const { batch } = clients();
    const error = await errorOf(
      batch.createNamespacedCronJob({
        namespace: 'default',
        body: {
          metadata: { name: 'bad-schedule' },
          spec: {
            schedule: 'every day',
            jobTemplate: {
              spec: { template: template('x', 'busybox:1.36', 'Never') },
            },
          },
        },
      }),
    );
    expect(error.code).toBe(422);
    expect(JSON.parse(error.body).details.causes[0].message).toBe(
      'Invalid value: "every day": expected exactly 5 fields, found 2: every day',
    );
  });
});
