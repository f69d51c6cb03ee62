/*
 * ReplicaSets, Pods, Events and pod logs, through the real @kubernetes/client-node 1.4.0 and the
 * kubeconfig files the simulator wrote: what Backstage's Kubernetes plugin reads.
 */
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  V1Deployment,
  V1Pod,
  V1ReplicaSet,
} from '@kubernetes/client-node';
import { KubeSimulator } from './KubeSimulator';

const READY_DELAY_MS = 300;
let sim: KubeSimulator;
/** Set, the simulator's clock stands at that time: a rollout is read mid-way however slow the machine. */
let heldAt: number | undefined;

beforeAll(async () => {
  sim = await KubeSimulator.start({
    clusters: 2,
    readyDelayMs: READY_DELAY_MS,
    now: () => heldAt ?? Date.now(),
  });
});

afterEach(() => {
  heldAt = undefined;
});

afterAll(async () => {
  await sim?.stop();
});

function clients(cluster: string) {
  const kc = new KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath(cluster));
  return {
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
  };
}

function deployment(
  name: string,
  image: string,
  replicas: number,
): V1Deployment {
  const labels = {
    'app.kubernetes.io/name': name,
    'backstage.io/kubernetes-id': name,
  };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels },
    spec: {
      replicas,
      selector: { matchLabels: { 'app.kubernetes.io/name': name } },
      template: {
        metadata: { labels },
        spec: {
          containers: [
            {
              name: 'app',
              image,
              ports: [{ containerPort: 8000 }],
            },
          ],
        },
      },
    },
  };
}

async function eventually<T>(
  read: () => Promise<T>,
  check: (value: T) => boolean,
): Promise<T> {
  const deadline = Date.now() + 30_000; // a loaded machine
  let value = await read();
  while (!check(value) && Date.now() < deadline) {
    await new Promise(resolve => setTimeout(resolve, 50));
    value = await read();
  }
  expect(check(value)).toBe(true);
  return value;
}

function isReady(pod: V1Pod): boolean {
  return !!pod.status?.conditions?.some(
    c => c.type === 'Ready' && c.status === 'True',
  );
}

async function errorOf(
  promise: Promise<unknown>,
): Promise<ApiException<string>> {
  try {
    await promise;
  } catch (e) {
    return e as ApiException<string>;
  }
  throw new Error('expected the call to fail');
}

describe('pods of Deployments', () => {
  it('a Deployment gets a ReplicaSet owned by it and Pods owned by the ReplicaSet, ready after the delay', async () => {
    const { core, apps } = clients('sim-1');
    // Long enough for the reads below to come before the pods are ready, even on a busy machine.
    sim.setReadiness('sim-1', { readyDelayMs: 3000 });
    const created = await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('web', 'nginx:1.27', 3),
    });

    const { items: sets } = await apps.listNamespacedReplicaSet({
      namespace: 'default',
      labelSelector: 'app.kubernetes.io/name=web',
    });
    expect(sets).toHaveLength(1);
    const rs = sets[0] as V1ReplicaSet;
    const hash = rs.metadata!.labels!['pod-template-hash'];
    expect(hash).toMatch(/^[a-z0-9]+$/);
    expect(rs.metadata!.name).toBe(`web-${hash}`);
    expect(rs.metadata!.annotations).toMatchObject({
      'deployment.kubernetes.io/revision': '1',
      'deployment.kubernetes.io/desired-replicas': '3',
    });
    expect(rs.metadata!.ownerReferences).toEqual([
      expect.objectContaining({
        kind: 'Deployment',
        name: 'web',
        uid: created.metadata!.uid,
        controller: true,
      }),
    ]);
    expect(rs.spec!.selector.matchLabels).toEqual({
      'app.kubernetes.io/name': 'web',
      'pod-template-hash': hash,
    });
    expect(rs.spec!.replicas).toBe(3);

    // The Kubernetes plugin's query: every namespace, by backstage.io/kubernetes-id.
    const { items: pods } = await core.listPodForAllNamespaces({
      labelSelector: 'backstage.io/kubernetes-id=web',
    });
    expect(pods).toHaveLength(3);
    for (const pod of pods) {
      expect(pod.metadata!.name).toMatch(
        new RegExp(`^web-${hash}-[a-z0-9]{5}$`),
      );
      expect(pod.metadata!.labels).toMatchObject({
        'backstage.io/kubernetes-id': 'web',
        'pod-template-hash': hash,
      });
      expect(pod.metadata!.ownerReferences).toEqual([
        expect.objectContaining({
          kind: 'ReplicaSet',
          name: rs.metadata!.name,
          uid: rs.metadata!.uid,
          controller: true,
        }),
      ]);
      expect(pod.status!.phase).toBe('Running');
      expect(pod.spec!.nodeName).toMatch(/^sim-node-\d$/);
      expect(pod.status!.containerStatuses![0]).toMatchObject({
        name: 'app',
        image: 'nginx:1.27',
        restartCount: 0,
      });
    }
    // Spread over the nodes, as the topology spread and the scheduler would.
    expect(new Set(pods.map(p => p.spec!.nodeName)).size).toBe(3);

    // Not ready before the delay (the Deployment says 0 available), all ready after it.
    const early = await apps.readNamespacedDeployment({
      name: 'web',
      namespace: 'default',
    });
    expect(pods.filter(isReady)).toEqual([]);
    expect(early.status?.availableReplicas).toBeUndefined();
    const ready = await eventually(
      () =>
        core.listNamespacedPod({
          namespace: 'default',
          labelSelector: 'backstage.io/kubernetes-id=web',
        }),
      list => list.items.filter(isReady).length === 3,
    );
    sim.setReadiness('sim-1', { readyDelayMs: READY_DELAY_MS });
    expect(ready.items.map(p => p.metadata!.name).sort()).toEqual(
      pods.map(p => p.metadata!.name).sort(),
    );
    const later = await apps.readNamespacedDeployment({
      name: 'web',
      namespace: 'default',
    });
    expect(later.status?.availableReplicas).toBe(3);
    expect(later.metadata!.annotations).toMatchObject({
      'deployment.kubernetes.io/revision': '1',
    });
    const settled = await apps.readNamespacedReplicaSet({
      name: rs.metadata!.name!,
      namespace: 'default',
    });
    expect(settled.status).toMatchObject({
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
    });
  });

  it('a new image makes a second ReplicaSet (revision 2); the old one keeps its pods until the rollout ends, then goes to 0', async () => {
    const { core, apps } = clients('sim-2');
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('api', 'api:1', 2),
    });
    await eventually(
      () =>
        apps.readNamespacedDeployment({ name: 'api', namespace: 'default' }),
      d => d.status?.availableReplicas === 2,
    );
    // Time stands still from the new image until the mid-rollout reads are done.
    heldAt = Date.now();
    await apps.patchNamespacedDeployment(
      {
        name: 'api',
        namespace: 'default',
        body: {
          spec: {
            template: {
              spec: { containers: [{ name: 'app', image: 'api:2' }] },
            },
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    const during = await apps.listNamespacedReplicaSet({
      namespace: 'default',
      labelSelector: 'app.kubernetes.io/name=api',
    });
    expect(during.items).toHaveLength(2);
    const byRevision = (n: string) =>
      during.items.find(
        r =>
          r.metadata!.annotations!['deployment.kubernetes.io/revision'] === n,
      )!;
    const [first, second] = [byRevision('1'), byRevision('2')];
    expect(second.spec!.template!.spec!.containers[0].image).toBe('api:2');
    expect(first.spec!.replicas).toBeGreaterThan(0); // old pods serve during the update
    const duringPods = await core.listNamespacedPod({
      namespace: 'default',
      labelSelector: `pod-template-hash=${
        first.metadata!.labels!['pod-template-hash']
      }`,
    });
    expect(duringPods.items.length).toBe(first.spec!.replicas);
    expect(duringPods.items.every(isReady)).toBe(true);
    heldAt = undefined;

    const done = await eventually(
      () =>
        apps.listNamespacedReplicaSet({
          namespace: 'default',
          labelSelector: 'app.kubernetes.io/name=api',
        }),
      list =>
        list.items.find(r => r.metadata!.name === first.metadata!.name)?.spec
          ?.replicas === 0,
    );
    expect(
      done.items.find(r => r.metadata!.name === second.metadata!.name)!.spec!
        .replicas,
    ).toBe(2);
    const pods = await eventually(
      () =>
        core.listNamespacedPod({
          namespace: 'default',
          labelSelector: 'app.kubernetes.io/name=api',
        }),
      list => list.items.length === 2 && list.items.every(isReady),
    );
    for (const pod of pods.items) {
      expect(pod.spec!.containers[0].image).toBe('api:2');
    }
    const deploymentNow = await apps.readNamespacedDeployment({
      name: 'api',
      namespace: 'default',
    });
    expect(
      deploymentNow.metadata!.annotations!['deployment.kubernetes.io/revision'],
    ).toBe('2');

    // Scaling changes the pods, not the ReplicaSets; a deleted pod is replaced under a new name.
    await apps.patchNamespacedDeployment(
      { name: 'api', namespace: 'default', body: { spec: { replicas: 4 } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const scaled = await core.listNamespacedPod({
      namespace: 'default',
      labelSelector: 'app.kubernetes.io/name=api',
    });
    expect(scaled.items).toHaveLength(4);
    const victim = scaled.items[0].metadata!.name!;
    await core.deleteNamespacedPod({ name: victim, namespace: 'default' });
    const replaced = await core.listNamespacedPod({
      namespace: 'default',
      labelSelector: 'app.kubernetes.io/name=api',
    });
    expect(replaced.items).toHaveLength(4);
    expect(replaced.items.map(p => p.metadata!.name)).not.toContain(victim);

    // Deleting the Deployment takes its ReplicaSets and pods (garbage collection by owner).
    await apps.deleteNamespacedDeployment({
      name: 'api',
      namespace: 'default',
    });
    expect(
      (
        await apps.listNamespacedReplicaSet({
          namespace: 'default',
          labelSelector: 'app.kubernetes.io/name=api',
        })
      ).items,
    ).toEqual([]);
    expect(
      (
        await core.listNamespacedPod({
          namespace: 'default',
          labelSelector: 'app.kubernetes.io/name=api',
        })
      ).items,
    ).toEqual([]);
  });

  it('records Events a field selector finds by involved object, as the Kubernetes plugin asks', async () => {
    const { core, apps } = clients('sim-1');
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('events', 'nginx:1.27', 1),
    });
    const [pod] = (
      await core.listNamespacedPod({
        namespace: 'default',
        labelSelector: 'app.kubernetes.io/name=events',
      })
    ).items;
    const podEvents = await core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: `involvedObject.name=${pod.metadata!.name}`,
    });
    expect(podEvents.items.map(e => e.reason)).toEqual(
      expect.arrayContaining(['Scheduled', 'Pulled', 'Created', 'Started']),
    );
    for (const event of podEvents.items) {
      expect(event.involvedObject).toMatchObject({
        kind: 'Pod',
        name: pod.metadata!.name,
        uid: pod.metadata!.uid,
      });
      expect(event.type).toBe('Normal');
      expect(event.count).toBe(1);
    }
    const deploymentEvents = await core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector:
        'involvedObject.kind=Deployment,involvedObject.name=events',
    });
    expect(deploymentEvents.items.map(e => e.message)).toEqual([
      expect.stringMatching(
        /^Scaled up replica set events-[a-z0-9]+ to 1 from 0$/,
      ),
    ]);
    const rsEvents = await core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: 'involvedObject.kind=ReplicaSet,reason=SuccessfulCreate',
    });
    expect(rsEvents.items.map(e => e.message)).toContain(
      `Created pod: ${pod.metadata!.name}`,
    );
    // A field the API server does not index for events is a 400.
    const bad = await errorOf(
      core.listNamespacedEvent({
        namespace: 'default',
        fieldSelector: 'message=hello',
      }),
    );
    expect(bad.code).toBe(400);
    expect(JSON.parse(bad.body).message).toContain(
      'field label not supported: message',
    );
  });

  it('serves pods/log as plain text, with the API server parameters and errors', async () => {
    const { core, apps } = clients('sim-2');
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('logs', 'nginx:1.27', 1),
    });
    const pod = (
      await eventually(
        () =>
          core.listNamespacedPod({
            namespace: 'default',
            labelSelector: 'app.kubernetes.io/name=logs',
          }),
        list => list.items.length === 1 && isReady(list.items[0]),
      )
    ).items[0];
    const name = pod.metadata!.name!;
    const log = await core.readNamespacedPodLog({ name, namespace: 'default' });
    const lines = log.trimEnd().split('\n');
    expect(lines[0]).toBe(
      `Starting nginx:1.27 as container app of pod default/${name}`,
    );
    expect(lines[1]).toBe('Listening on 0.0.0.0:8000');

    const stamped = await core.readNamespacedPodLog({
      name,
      namespace: 'default',
      container: 'app',
      timestamps: true,
      tailLines: 1,
    });
    expect(stamped).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z Listening on 0\.0\.0\.0:8000\n$/,
    );

    const wrong = await errorOf(
      core.readNamespacedPodLog({
        name,
        namespace: 'default',
        container: 'db',
      }),
    );
    expect(wrong.code).toBe(400);
    expect(JSON.parse(wrong.body).message).toContain(
      `container db is not valid for pod ${name}`,
    );
    const noPrevious = await errorOf(
      core.readNamespacedPodLog({ name, namespace: 'default', previous: true }),
    );
    expect(noPrevious.code).toBe(400);
    expect(JSON.parse(noPrevious.body).message).toContain(
      `previous terminated container "app" in pod "${name}" not found`,
    );
    const missing = await errorOf(
      core.readNamespacedPodLog({ name: 'nope', namespace: 'default' }),
    );
    expect(missing.code).toBe(404);
  });

  it('crash-looping pods (neverReady) show CrashLoopBackOff, restarts, a BackOff event and the failed run in their logs', async () => {
    const { core, apps } = clients('sim-1');
    sim.setReadiness('sim-1', { neverReady: true });
    try {
      await apps.createNamespacedDeployment({
        namespace: 'default',
        body: deployment('crashy', 'crashy:1', 1),
      });
      const [pod] = (
        await core.listNamespacedPod({
          namespace: 'default',
          labelSelector: 'app.kubernetes.io/name=crashy',
        })
      ).items;
      expect(isReady(pod)).toBe(false);
      const status = pod.status!.containerStatuses![0];
      expect(status.state?.waiting?.reason).toBe('CrashLoopBackOff');
      expect(status.restartCount).toBeGreaterThan(0);
      expect(status.lastState?.terminated?.exitCode).toBe(1);
      const events = await core.listNamespacedEvent({
        namespace: 'default',
        fieldSelector: `involvedObject.name=${pod.metadata!.name},type=Warning`,
      });
      expect(events.items.map(e => e.reason)).toEqual(['BackOff']);
      const previous = await core.readNamespacedPodLog({
        name: pod.metadata!.name!,
        namespace: 'default',
        previous: true,
      });
      expect(previous.trimEnd().split('\n').pop()).toBe(
        'exiting with status 1',
      );
    } finally {
      sim.setReadiness('sim-1', { neverReady: false });
    }
  });
});
