/*
 * The simulated Argo Rollouts controller on a controlled clock: canary steps,
 * pauses, promote and abort as `kubectl argo rollouts` does them.
 */
import { PATCH_TYPES } from './patch';
import { resourceForKind } from './resources';
import { pauseDurationSeconds } from './rolloutSpec';
import { ClusterStore } from './store';
import { rfc3339 } from './util';

const ROLLOUT = resourceForKind('Rollout')!;

function setup(readyDelayMs = 1000) {
  const clock = { now: 1_700_000_000_000 };
  const store = new ClusterStore(readyDelayMs, () => clock.now);
  return { store, clock };
}

function rollout(image: string, steps: unknown[] = []) {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Rollout',
    metadata: { name: 'pay' },
    spec: {
      replicas: 5,
      selector: { matchLabels: { app: 'pay' } },
      template: {
        metadata: { labels: { app: 'pay' } },
        spec: { containers: [{ name: 'app', image }] },
      },
      strategy: { canary: { steps } },
    },
  };
}

const STEPS = [
  { setWeight: 20 },
  { pause: {} },
  { setWeight: 60 },
  { pause: { duration: '30s' } },
  { setWeight: 100 },
];

function statusPatch(store: ClusterStore, patch: unknown) {
  return store.patch(ROLLOUT, 'default', 'pay', PATCH_TYPES.merge, patch, {
    subresource: 'status',
  });
}

function setImage(store: ClusterStore, image: string) {
  return store.patch(
    ROLLOUT,
    'default',
    'pay',
    PATCH_TYPES.json,
    [
      {
        op: 'replace',
        path: '/spec/template/spec/containers/0/image',
        value: image,
      },
    ],
    {},
  );
}

const get = (store: ClusterStore) =>
  store.get(ROLLOUT, 'default', 'pay').status;

describe('Argo Rollouts controller', () => {
  it('promotes the first revision at once, then runs canary steps: 20 → pause{} → promote → 60 → timed pause → 100', () => {
    const { store, clock } = setup();
    store.create(ROLLOUT, 'default', rollout('pay:1', STEPS), {});
    const first = get(store);
    expect(first).toMatchObject({
      phase: 'Progressing',
      message: 'updated replicas are still becoming available',
      currentStepIndex: 5,
      replicas: 5,
      updatedReplicas: 5,
      observedGeneration: '1',
      canary: {},
    });
    expect(first.stableRS).toBe(first.currentPodHash); // "Initial deploy"
    expect(first.availableReplicas).toBeUndefined();
    clock.now += 1000;
    expect(get(store)).toMatchObject({
      phase: 'Healthy',
      availableReplicas: 5,
      readyReplicas: 5,
      currentStepIndex: 5,
    });
    const stable = first.stableRS;

    // A new pod template: a canary at step 0 (setWeight 20: 1 canary of 5).
    setImage(store, 'pay:2');
    let s = get(store);
    expect(s).toMatchObject({
      phase: 'Progressing',
      message: 'more replicas need to be updated',
      currentStepIndex: 0,
      stableRS: stable,
      observedGeneration: '2',
      replicas: 6, // maxSurge 25% (2): the canary pod is added before a stable one goes
      updatedReplicas: 1,
      availableReplicas: 5,
    });
    const canary = s.currentPodHash;
    expect(canary).not.toBe(stable);
    expect(s.pauseConditions).toBeUndefined();

    // The canary pod is ready: one stable pod goes, the step completes, pause{} starts.
    clock.now += 1000;
    s = get(store);
    expect(s).toMatchObject({
      phase: 'Paused',
      message: 'CanaryPauseStep',
      currentStepIndex: 1,
      controllerPause: true,
      replicas: 5,
      updatedReplicas: 1,
      availableReplicas: 5,
      pauseConditions: [
        { reason: 'CanaryPauseStep', startTime: rfc3339(clock.now) },
      ],
    });
    expect(s.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'Paused',
          status: 'True',
          reason: 'RolloutPaused',
        }),
        expect.objectContaining({
          type: 'Progressing',
          status: 'Unknown',
          reason: 'RolloutPaused',
        }),
      ]),
    );
    // An untimed pause waits for ever.
    clock.now += 3_600_000;
    expect(get(store)).toMatchObject({ phase: 'Paused', currentStepIndex: 1 });

    // Status written through the main resource is ignored (status subresource).
    store.patch(
      ROLLOUT,
      'default',
      'pay',
      PATCH_TYPES.merge,
      { status: { pauseConditions: null } },
      {},
    );
    expect(get(store)).toMatchObject({ phase: 'Paused', currentStepIndex: 1 });

    // kubectl argo rollouts promote: {"status":{"pauseConditions":null}} on /status.
    statusPatch(store, { status: { pauseConditions: null } });
    s = get(store);
    expect(s).toMatchObject({
      phase: 'Progressing',
      currentStepIndex: 2,
      updatedReplicas: 3,
      replicas: 7,
      availableReplicas: 5,
    });
    expect(s.pauseConditions).toBeUndefined();
    expect(s.controllerPause).toBeUndefined();

    // 60%: 3 canary, 2 stable once ready; then the 30 s pause.
    clock.now += 1000;
    const pausedAt = clock.now;
    s = get(store);
    expect(s).toMatchObject({
      phase: 'Paused',
      message: 'CanaryPauseStep',
      currentStepIndex: 3,
      replicas: 5,
      updatedReplicas: 3,
      availableReplicas: 5,
      controllerPause: true,
      pauseConditions: [
        { reason: 'CanaryPauseStep', startTime: rfc3339(pausedAt) },
      ],
    });
    clock.now += 29_999;
    expect(get(store)).toMatchObject({ phase: 'Paused', currentStepIndex: 3 });
    clock.now += 1;
    s = get(store);
    expect(s).toMatchObject({
      phase: 'Progressing',
      currentStepIndex: 4,
      updatedReplicas: 5,
      stableRS: stable,
    });

    // 100%: the canary pods are ready, the stable ones go, the canary becomes stable.
    clock.now += 1000;
    s = get(store);
    expect(s).toMatchObject({
      phase: 'Healthy',
      currentStepIndex: 5,
      stableRS: canary,
      currentPodHash: canary,
      replicas: 5,
      updatedReplicas: 5,
      availableReplicas: 5,
    });
    expect(s.message).toBeUndefined();
    expect(s.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Healthy', status: 'True' }),
        expect.objectContaining({ type: 'Paused', status: 'False' }),
        expect.objectContaining({
          type: 'Progressing',
          status: 'True',
          reason: 'NewReplicaSetAvailable',
        }),
      ]),
    );
  });

  it('aborts as kubectl argo rollouts abort does, and recovers on a change back to the stable template', () => {
    const { store, clock } = setup();
    store.create(ROLLOUT, 'default', rollout('pay:1', STEPS), {});
    clock.now += 1000;
    const stable = get(store).stableRS;
    setImage(store, 'pay:2');
    clock.now += 1000;
    expect(get(store)).toMatchObject({ phase: 'Paused', currentStepIndex: 1 });

    const abortedAt = clock.now;
    statusPatch(store, { status: { abort: true } });
    let s = get(store);
    expect(s).toMatchObject({
      phase: 'Degraded',
      message: 'RolloutAborted: Rollout aborted update to revision 2',
      abort: true,
      abortedAt: rfc3339(abortedAt),
      currentStepIndex: 0,
      stableRS: stable,
    });
    expect(s.pauseConditions).toBeUndefined();
    expect(s.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'Progressing',
          status: 'False',
          reason: 'RolloutAborted',
          message: 'Rollout aborted update to revision 2',
        }),
      ]),
    );
    clock.now += 1000;
    s = get(store);
    expect(s).toMatchObject({
      phase: 'Degraded',
      replicas: 5,
      availableReplicas: 5,
      currentStepIndex: 0,
    });
    expect(s.updatedReplicas).toBeUndefined(); // the canary is scaled to 0

    // Going back to the stable template skips the steps: Healthy again.
    setImage(store, 'pay:1');
    s = get(store);
    expect(s).toMatchObject({
      phase: 'Healthy',
      currentStepIndex: 5,
      stableRS: stable,
      currentPodHash: stable,
    });
    expect(s.abort).toBeUndefined();
    expect(s.abortedAt).toBeUndefined();
  });

  it('honours spec.paused, promoteFull and a JSON patch on /status', () => {
    const { store, clock } = setup();
    store.create(ROLLOUT, 'default', rollout('pay:1', STEPS), {});
    clock.now += 1000;
    store.patch(
      ROLLOUT,
      'default',
      'pay',
      PATCH_TYPES.merge,
      { spec: { paused: true } },
      {},
    );
    setImage(store, 'pay:2');
    clock.now += 5000;
    expect(get(store)).toMatchObject({
      phase: 'Paused',
      message: 'manually paused',
      currentStepIndex: 0,
    });
    store.patch(
      ROLLOUT,
      'default',
      'pay',
      PATCH_TYPES.merge,
      { spec: { paused: false } },
      {},
    );
    expect(get(store)).toMatchObject({ phase: 'Paused', currentStepIndex: 1 });
    store.patch(
      ROLLOUT,
      'default',
      'pay',
      PATCH_TYPES.json,
      [{ op: 'add', path: '/status/promoteFull', value: true }],
      { subresource: 'status' },
    );
    expect(get(store)).toMatchObject({
      currentStepIndex: 5,
      phase: 'Progressing',
    });
    clock.now += 2000;
    const s = get(store);
    expect(s).toMatchObject({ phase: 'Healthy', updatedReplicas: 5 });
    expect(s.stableRS).toBe(s.currentPodHash);
  });

  it('keeps the plain behaviour of a Rollout without steps', () => {
    const { store, clock } = setup();
    store.create(ROLLOUT, 'default', rollout('pay:1'), {});
    clock.now += 1000;
    setImage(store, 'pay:2');
    expect(get(store)).toMatchObject({ phase: 'Progressing' });
    expect(get(store).currentStepIndex).toBeUndefined();
    clock.now += 5000;
    const s = get(store);
    expect(s).toMatchObject({
      phase: 'Healthy',
      replicas: 5,
      availableReplicas: 5,
    });
    expect(s.stableRS).toBe(s.currentPodHash);
  });

  it('reads pause durations as Argo does', () => {
    expect(pauseDurationSeconds(30)).toBe(30);
    expect(pauseDurationSeconds('30')).toBe(30);
    expect(pauseDurationSeconds('30s')).toBe(30);
    expect(pauseDurationSeconds('1h2m3s')).toBe(3723);
    expect(pauseDurationSeconds('1500ms')).toBe(1);
    expect(pauseDurationSeconds('500ms')).toBe(0);
    expect(pauseDurationSeconds('soon')).toBe(-1);
  });
});
