import fs from 'node:fs';
import path from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { parse } from 'yaml';
import {
  ObjectHealth,
  ObjectHealthStatus,
  objectHealth,
  objectSetHealth,
} from './objectHealth';

const FIXTURES = path.join(__dirname, '__fixtures__', 'argoHealth');

/** One of Argo CD's fixtures; a repeated key keeps its last value, as Argo CD's YAML reader. */
function fixture(file: string): KubernetesObject {
  return parse(fs.readFileSync(path.join(FIXTURES, file), 'utf8'), {
    uniqueKeys: false,
  });
}

function expected(
  status: ObjectHealthStatus,
  message: string | undefined,
): ObjectHealth {
  return message === undefined ? { status } : { status, message };
}

type Case = [file: string, status: ObjectHealthStatus, message?: string];

/** `it.each` over fixtures, each with the status and message Argo CD gives it. */
function eachFixture(dir: string, cases: Case[]) {
  const rows = cases.map(([file, status, message]) => ({
    file,
    status,
    message,
  }));
  it.each(rows)(`${dir}/$file is $status`, ({ file, status, message }) => {
    expect(objectHealth(fixture(`${dir}/${file}`))).toEqual(
      expected(status, message),
    );
  });
}

/** A live object built from its parts, for the branches Argo CD has no fixture for. */
function live(
  apiVersion: string,
  kind: string,
  parts: { metadata?: object; spec?: object; status?: object } = {},
): KubernetesObject {
  return {
    apiVersion,
    kind,
    ...parts,
    metadata: { name: 'web', namespace: 'shop', ...parts.metadata },
  } as KubernetesObject;
}

describe('objectHealth', () => {
  it('is Missing without a live object', () => {
    expect(objectHealth(undefined)).toEqual({ status: 'Missing' });
  });

  it('is Progressing while the object is being deleted', () => {
    expect(objectHealth(fixture('gitops-engine/pod-deletion.yaml'))).toEqual({
      status: 'Progressing',
      message: 'Pending deletion',
    });
  });

  it('reads a deleted object held by an Argo CD hook finalizer by its kind', () => {
    const claim = live('v1', 'PersistentVolumeClaim', {
      metadata: {
        deletionTimestamp: '2026-12-06T10:00:00Z',
        finalizers: ['argocd.argoproj.io/hook-finalizer'],
      },
      status: { phase: 'Bound' },
    });
    expect(objectHealth(claim)).toEqual({ status: 'Healthy' });
  });

  it('is Healthy for a kind Argo CD has no check for, once it exists', () => {
    expect(objectHealth(fixture('gitops-engine/knative-service.yaml'))).toEqual(
      { status: 'Healthy' },
    );
    expect(objectHealth(live('v1', 'ConfigMap'))).toEqual({
      status: 'Healthy',
    });
  });

  it('tells kinds apart by API group, not by kind alone', () => {
    const foreign = live('example.com/v1', 'Deployment', {
      metadata: { generation: 2 },
      status: { observedGeneration: 1 },
    });
    expect(objectHealth(foreign)).toEqual({ status: 'Healthy' });
  });

  describe('Deployment', () => {
    eachFixture('gitops-engine', [
      ['nginx.yaml', 'Healthy'],
      [
        'deployment-progressing.yaml',
        'Progressing',
        'Waiting for rollout to finish: 1 old replicas are pending termination...',
      ],
      ['deployment-suspended.yaml', 'Suspended', 'Deployment is paused'],
      [
        'deployment-degraded.yaml',
        'Degraded',
        'Deployment "guestbook-ui" exceeded its progress deadline',
      ],
    ]);

    const deployment = (spec: object, status: object, generation = 3) =>
      live('apps/v1', 'Deployment', {
        metadata: { generation },
        spec,
        status: { observedGeneration: 3, ...status },
      });

    it('waits until the controller observes the generation', () => {
      expect(objectHealth(deployment({ replicas: 2 }, {}, 4))).toEqual({
        status: 'Progressing',
        message:
          'Waiting for rollout to finish: observed deployment generation less than desired generation',
      });
    });

    it('waits for replicas to be updated', () => {
      const d = deployment(
        { replicas: 2 },
        { replicas: 2, updatedReplicas: 1 },
      );
      expect(objectHealth(d)).toEqual({
        status: 'Progressing',
        message:
          'Waiting for rollout to finish: 1 out of 2 new replicas have been updated...',
      });
    });

    it('waits for updated replicas to be available', () => {
      const d = deployment(
        { replicas: 2 },
        { replicas: 2, updatedReplicas: 2, availableReplicas: 1 },
      );
      expect(objectHealth(d)).toEqual({
        status: 'Progressing',
        message:
          'Waiting for rollout to finish: 1 of 2 updated replicas are available...',
      });
    });

    it('is Healthy when every replica is updated and available', () => {
      const d = deployment(
        { replicas: 2 },
        { replicas: 2, updatedReplicas: 2, availableReplicas: 2 },
      );
      expect(objectHealth(d)).toEqual({ status: 'Healthy' });
    });
  });

  describe('StatefulSet', () => {
    eachFixture('gitops-engine', [
      ['statefulset.yaml', 'Healthy', 'statefulset has 1 ready pods'],
      ['statefulset-ondelete.yaml', 'Healthy', 'statefulset has 1 ready pods'],
    ]);

    const statefulSet = (spec: object, status: object, generation = 2) =>
      live('apps/v1', 'StatefulSet', {
        metadata: { name: 'inventory-db', generation },
        spec: { replicas: 3, ...spec },
        status: { observedGeneration: 2, readyReplicas: 3, ...status },
      });

    it.each([
      ['a newer generation', statefulSet({}, {}, 3)],
      [
        'no generation observed at all',
        statefulSet({}, { observedGeneration: 0 }, 0),
      ],
    ])('waits for the spec to be observed with %s', (_, sts) => {
      expect(objectHealth(sts)).toEqual({
        status: 'Progressing',
        message: 'Waiting for statefulset spec update to be observed...',
      });
    });

    it('waits for pods to be ready', () => {
      expect(objectHealth(statefulSet({}, { readyReplicas: 2 }))).toEqual({
        status: 'Progressing',
        message: 'Waiting for 1 pods to be ready...',
      });
    });

    const partitioned = {
      updateStrategy: {
        type: 'RollingUpdate',
        rollingUpdate: { partition: 1 },
      },
    };

    it('waits for a partitioned roll out', () => {
      expect(
        objectHealth(statefulSet(partitioned, { updatedReplicas: 1 })),
      ).toEqual({
        status: 'Progressing',
        message:
          'Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated...',
      });
    });

    it('is Healthy once the partitioned roll out is complete', () => {
      expect(
        objectHealth(statefulSet(partitioned, { updatedReplicas: 2 })),
      ).toEqual({
        status: 'Healthy',
        message:
          'partitioned roll out complete: 2 new pods have been updated...',
      });
    });

    it('waits for a rolling update to reach the update revision', () => {
      const sts = statefulSet(
        {},
        { updatedReplicas: 1, currentRevision: 'db-1', updateRevision: 'db-2' },
      );
      expect(objectHealth(sts)).toEqual({
        status: 'Progressing',
        message:
          'waiting for statefulset rolling update to complete 1 pods at revision db-2...',
      });
    });

    it('is Healthy once the rolling update is complete', () => {
      const sts = statefulSet(
        {},
        { currentReplicas: 3, currentRevision: 'db-2', updateRevision: 'db-2' },
      );
      expect(objectHealth(sts)).toEqual({
        status: 'Healthy',
        message:
          'statefulset rolling update complete 3 pods at revision db-2...',
      });
    });
  });

  describe('DaemonSet', () => {
    eachFixture('gitops-engine', [
      [
        'daemonset-ondelete.yaml',
        'Healthy',
        'daemon set 0 out of 1 new pods have been updated',
      ],
    ]);

    const daemonSet = (status: object, generation = 1) =>
      live('apps/v1', 'DaemonSet', {
        metadata: { name: 'agent', generation },
        status: { observedGeneration: 1, desiredNumberScheduled: 3, ...status },
      });

    it('waits until the controller observes the generation', () => {
      expect(objectHealth(daemonSet({}, 2))).toEqual({
        status: 'Progressing',
        message:
          'Waiting for rollout to finish: observed daemon set generation less than desired generation',
      });
    });

    it('waits for pods to be updated', () => {
      expect(objectHealth(daemonSet({ updatedNumberScheduled: 2 }))).toEqual({
        status: 'Progressing',
        message:
          'Waiting for daemon set "agent" rollout to finish: 2 out of 3 new pods have been updated...',
      });
    });

    it('waits for updated pods to be available', () => {
      const ds = daemonSet({ updatedNumberScheduled: 3, numberAvailable: 1 });
      expect(objectHealth(ds)).toEqual({
        status: 'Progressing',
        message:
          'Waiting for daemon set "agent" rollout to finish: 1 of 3 updated pods are available...',
      });
    });

    it('is Healthy when every pod is updated and available', () => {
      const ds = daemonSet({ updatedNumberScheduled: 3, numberAvailable: 3 });
      expect(objectHealth(ds)).toEqual({ status: 'Healthy' });
    });
  });

  describe('ReplicaSet', () => {
    const replicaSet = (status: object, generation = 1) =>
      live('apps/v1', 'ReplicaSet', {
        metadata: { generation },
        spec: { replicas: 2 },
        status: { observedGeneration: 1, ...status },
      });

    it('waits until the controller observes the generation', () => {
      expect(objectHealth(replicaSet({}, 2))).toEqual({
        status: 'Progressing',
        message:
          'Waiting for rollout to finish: observed replica set generation less than desired generation',
      });
    });

    it('is Degraded with a true ReplicaFailure condition', () => {
      const rs = replicaSet({
        conditions: [
          {
            type: 'ReplicaFailure',
            status: 'True',
            reason: 'FailedCreate',
            message: 'pods "web-1" is forbidden: exceeded quota',
          },
        ],
      });
      expect(objectHealth(rs)).toEqual({
        status: 'Degraded',
        message: 'pods "web-1" is forbidden: exceeded quota',
      });
    });

    it('waits for replicas to be available', () => {
      expect(objectHealth(replicaSet({ availableReplicas: 1 }))).toEqual({
        status: 'Progressing',
        message:
          'Waiting for rollout to finish: 1 out of 2 new replicas are available...',
      });
    });

    it('is Healthy when every replica is available', () => {
      expect(objectHealth(replicaSet({ availableReplicas: 2 }))).toEqual({
        status: 'Healthy',
      });
    });
  });

  describe('Job', () => {
    eachFixture('gitops-engine', [
      ['job-running.yaml', 'Progressing'],
      [
        'job-failed.yaml',
        'Degraded',
        'Job has reached the specified backoff limit',
      ],
      ['job-succeeded.yaml', 'Healthy'],
      ['job-suspended.yaml', 'Suspended', 'Job suspended'],
    ]);
  });

  describe('CronJob', () => {
    eachFixture('CronJob', [
      [
        'healthy.yaml',
        'Healthy',
        'CronJob has completed its last execution successfully',
      ],
      ['never-scheduled.yaml', 'Healthy', 'CronJob has not been scheduled yet'],
      [
        'degraded.yaml',
        'Degraded',
        'CronJob has not completed its last execution successfully',
      ],
      [
        'never-succeeded.yaml',
        'Healthy',
        'The CronJob never completed successfully. It may not be healthy',
      ],
      [
        'active.yaml',
        'Healthy',
        'The job is running. Its last execution may not have been successful',
      ],
      ['suspended.yaml', 'Healthy', 'CronJob is Suspended'],
    ]);

    it('waits for a status', () => {
      expect(objectHealth(live('batch/v1', 'CronJob', { spec: {} }))).toEqual({
        status: 'Progressing',
        message: 'Waiting for CronJob',
      });
    });
  });

  describe('Pod', () => {
    eachFixture('gitops-engine', [
      ['pod-pending.yaml', 'Progressing'],
      ['pod-running-not-ready.yaml', 'Progressing'],
      [
        'pod-crashloop.yaml',
        'Degraded',
        'Back-off 40s restarting failed container=main pod=my-pod_argocd(63674389-f613-11e8-a057-fe5f49266390)',
      ],
      [
        'pod-imagepullbackoff.yaml',
        'Degraded',
        'Back-off pulling image "gcr.io/heptio-images/ks-guestbook-demo:0.3"',
      ],
      ['pod-error.yaml', 'Degraded'],
      ['pod-running-restart-always.yaml', 'Healthy'],
      ['pod-running-restart-never.yaml', 'Progressing'],
      ['pod-running-restart-never-with-ignore-annotation.yaml', 'Healthy'],
      [
        'pod-running-restart-never-hook-with-ignore-annotation.yaml',
        'Progressing',
      ],
      [
        'pod-running-restart-never-with-ignore-annotation-backoff.yaml',
        'Degraded',
        'Back-off pulling image "alpine:3.21"',
      ],
      ['pod-running-restart-onfailure.yaml', 'Progressing'],
      [
        'pod-failed.yaml',
        'Degraded',
        'container "main" failed with exit code 1',
      ],
      ['pod-succeeded.yaml', 'Healthy'],
    ]);

    const failedPod = (status: object) =>
      live('v1', 'Pod', {
        spec: { restartPolicy: 'Never' },
        status: { phase: 'Failed', ...status },
      });

    it("uses a failed Pod's own message first", () => {
      const pod = failedPod({
        message: 'The node was low on resource: memory.',
        reason: 'Evicted',
      });
      expect(objectHealth(pod)).toEqual({
        status: 'Degraded',
        message: 'The node was low on resource: memory.',
      });
    });

    it('names an init container that was killed for memory', () => {
      const pod = failedPod({
        initContainerStatuses: [
          {
            name: 'migrate',
            state: { terminated: { reason: 'OOMKilled', exitCode: 137 } },
          },
        ],
        containerStatuses: [
          { name: 'main', state: { terminated: { exitCode: 1 } } },
        ],
      });
      expect(objectHealth(pod)).toEqual({
        status: 'Degraded',
        message: 'OOMKilled',
      });
    });

    it('waits on a Pod in no known phase, as Argo CD reports Unknown', () => {
      const pod = live('v1', 'Pod', {
        spec: { restartPolicy: 'Always' },
        status: { phase: 'Unknown', message: 'node lost' },
      });
      expect(objectHealth(pod)).toEqual({
        status: 'Progressing',
        message: 'node lost',
      });
    });
  });

  describe('PersistentVolumeClaim', () => {
    eachFixture('gitops-engine', [
      ['pvc-bound.yaml', 'Healthy'],
      ['pvc-pending.yaml', 'Progressing'],
    ]);

    it('is Degraded when its volume is lost', () => {
      const claim = live('v1', 'PersistentVolumeClaim', {
        status: { phase: 'Lost' },
      });
      expect(objectHealth(claim)).toEqual({ status: 'Degraded' });
    });

    it('waits on a claim in no known phase', () => {
      expect(objectHealth(live('v1', 'PersistentVolumeClaim'))).toEqual({
        status: 'Progressing',
      });
    });
  });

  describe('Service', () => {
    eachFixture('gitops-engine', [
      ['svc-clusterip.yaml', 'Healthy'],
      ['svc-loadbalancer.yaml', 'Healthy'],
      ['svc-loadbalancer-unassigned.yaml', 'Progressing'],
      ['svc-loadbalancer-nonemptylist.yaml', 'Healthy'],
    ]);
  });

  describe('Ingress', () => {
    eachFixture('gitops-engine', [
      ['ingress.yaml', 'Healthy'],
      ['ingress-unassigned.yaml', 'Progressing'],
      ['ingress-nonemptylist.yaml', 'Healthy'],
    ]);

    it('reads the networking.k8s.io Ingress too', () => {
      const ingress = (status: object) =>
        live('networking.k8s.io/v1', 'Ingress', { status });
      expect(objectHealth(ingress({ loadBalancer: {} }))).toEqual({
        status: 'Progressing',
      });
      expect(
        objectHealth(
          ingress({ loadBalancer: { ingress: [{ ip: '10.0.0.9' }] } }),
        ),
      ).toEqual({ status: 'Healthy' });
    });
  });

  describe('HorizontalPodAutoscaler', () => {
    eachFixture('gitops-engine', [
      [
        'hpa-v2-healthy.yaml',
        'Healthy',
        'recommended size matches current size',
      ],
      [
        'hpa-v2-degraded.yaml',
        'Degraded',
        'the HPA controller was unable to get the target\'s current scale: deployments/scale.apps "sandbox-test-app-8" not found',
      ],
      ['hpa-v2-progressing.yaml', 'Progressing', 'Waiting to Autoscale'],
      [
        'hpa-v1-degraded.yaml',
        'Degraded',
        "the HPA controller was unable to get the target's current scale",
      ],
      [
        'hpa-v1-degraded-failedgetobjectmetric.yaml',
        'Degraded',
        'the HPA was unable to compute the replica count: unable to get metric tomcat_sessions_active_current_sessions: Service on namespace sample-service/unable to fetch metrics from custom metrics API: the server could not find the metric tomcat_sessions_active_current_sessions for services',
      ],
      [
        'hpa-v1-healthy.yaml',
        'Healthy',
        'recent recommendations were higher than current one, applying the highest recent recommendation',
      ],
      [
        'hpa-v1-healthy-toofew.yaml',
        'Healthy',
        'recommended size matches current size',
      ],
      ['hpa-v1-progressing.yaml', 'Progressing', 'Waiting to Autoscale'],
      [
        'hpa-v1-progressing-with-no-annotations.yaml',
        'Progressing',
        'Waiting to Autoscale',
      ],
    ]);

    it('waits on autoscaling/v1 conditions that do not parse', () => {
      const hpa = live('autoscaling/v1', 'HorizontalPodAutoscaler', {
        metadata: {
          annotations: { 'autoscaling.alpha.kubernetes.io/conditions': '[{' },
        },
      });
      const health = objectHealth(hpa);
      expect(health.status).toBe('Progressing');
      expect(health.message).toMatch(
        /^failed to convert conditions annotation to typed: /,
      );
    });
  });

  describe('APIService', () => {
    const unavailable =
      'MissingEndpoints: endpoints for service/cert-manager-webhook in "external-dns" have no addresses';
    eachFixture('gitops-engine', [
      ['apiservice-v1-true.yaml', 'Healthy', 'Passed: all checks passed'],
      ['apiservice-v1-false.yaml', 'Progressing', unavailable],
      ['apiservice-v1beta1-true.yaml', 'Healthy', 'Passed: all checks passed'],
      ['apiservice-v1beta1-false.yaml', 'Progressing', unavailable],
    ]);

    it('waits for an Available condition', () => {
      const api = live('apiregistration.k8s.io/v1', 'APIService', {
        status: {},
      });
      expect(objectHealth(api)).toEqual({
        status: 'Progressing',
        message: 'Waiting to be processed',
      });
    });
  });

  describe('Argo Workflow', () => {
    const workflow = (status?: object) =>
      live('argoproj.io/v1alpha1', 'Workflow', { status });

    it.each<[object | undefined, ObjectHealth]>([
      [undefined, { status: 'Progressing' }],
      [
        { phase: 'Running', message: 'This node is running' },
        { status: 'Progressing', message: 'This node is running' },
      ],
      [{ phase: 'Succeeded' }, { status: 'Healthy' }],
      [
        { phase: 'Failed', message: 'child failed' },
        { status: 'Degraded', message: 'child failed' },
      ],
      [{ phase: 'Error' }, { status: 'Degraded' }],
    ])('with status %j is %j', (status, health) => {
      expect(objectHealth(workflow(status))).toEqual(health);
    });
  });

  describe('Argo Rollout', () => {
    eachFixture('Rollout', [
      [
        'newRolloutWithoutStatus.yaml',
        'Progressing',
        'Waiting for rollout spec update to be observed',
      ],
      [
        'progressing_newGeneration.yaml',
        'Progressing',
        'Waiting for rollout spec update to be observed',
      ],
      [
        'progressing_newWorkloadGeneration.yaml',
        'Progressing',
        'Waiting for rollout spec update to be observed',
      ],
      ['degraded_statusPhaseMessage.yaml', 'Degraded', 'InvalidSpec'],
      ['healthy_legacy_v0.9_observedGeneration.yaml', 'Healthy'],
      ['healthy_legacy_v0.9_observedGeneration_numeric.yaml', 'Healthy'],
      ['healthy_legacy_v1.0_newWorkloadGeneration.yaml', 'Healthy'],
      ['healthy_newWorkloadGeneration.yaml', 'Healthy'],
      [
        'degraded_invalidSpec.yaml',
        'Degraded',
        'The Rollout "basic" is invalid: spec.strategy.strategy: Required value: Rollout has missing field \'.spec.strategy.canary or .spec.strategy.blueGreen\'',
      ],
      [
        'degraded_rolloutTimeout.yaml',
        'Degraded',
        'ReplicaSet "guestbook-bluegreen-helm-guestbook-6b8cf6f7db" has timed out progressing.',
      ],
      ['degraded_abortedRollout.yaml', 'Degraded', 'Rollout is aborted'],
      ['bluegreen/healthy_servingActiveService.yaml', 'Healthy'],
      [
        'bluegreen/progressing_addingMoreReplicas.yaml',
        'Progressing',
        'Waiting for roll out to finish: More replicas need to be updated',
      ],
      [
        'bluegreen/progressing_waitingUntilAvailable.yaml',
        'Progressing',
        'Waiting for roll out to finish: updated replicas are still becoming available',
      ],
      [
        'canary/progressing_setWeightStep.yaml',
        'Progressing',
        'Waiting for roll out to finish: More replicas need to be updated',
      ],
      [
        'canary/progressing_killingOldReplicas.yaml',
        'Progressing',
        'Waiting for roll out to finish: old replicas are pending termination',
      ],
      ['suspended_controllerPause.yaml', 'Suspended', 'Rollout is paused'],
      ['suspended_userPause.yaml', 'Suspended', 'Rollout is paused'],
      ['suspended_v1.0_pausedRollout.yaml', 'Suspended', 'CanaryPauseStep'],
      ['canary/healthy_executedAllStepsPreV0.8.yaml', 'Healthy'],
      ['canary/healthy_executedAllSteps.yaml', 'Healthy'],
      [
        'canary/progressing_noSteps.yaml',
        'Progressing',
        'Waiting for roll out to finish: updated replicas are still becoming available',
      ],
      ['canary/healthy_noSteps.yaml', 'Healthy'],
      ['canary/healthy_emptyStepsList.yaml', 'Healthy'],
    ]);

    const rollout = (strategy: object, status: object) =>
      live('argoproj.io/v1alpha1', 'Rollout', {
        metadata: { generation: 1 },
        spec: { replicas: 1, strategy },
        status: {
          observedGeneration: '1',
          replicas: 1,
          updatedReplicas: 1,
          availableReplicas: 1,
          currentPodHash: 'new',
          ...status,
        },
      });

    it('waits until the controller reconciles a status', () => {
      const r = rollout({ canary: {} }, { currentPodHash: undefined });
      expect(objectHealth(r)).toEqual({
        status: 'Progressing',
        message:
          'Waiting for rollout to finish: status has not been reconciled.',
      });
    });

    it('reads the phase Argo Rollouts writes, Paused as Suspended', () => {
      const r = rollout(
        { canary: {} },
        { phase: 'Paused', message: 'BlueGreenPause' },
      );
      expect(objectHealth(r)).toEqual({
        status: 'Suspended',
        message: 'BlueGreenPause',
      });
    });

    it('waits for the active service to cut over to a blue-green revision', () => {
      const r = rollout(
        { blueGreen: {} },
        { blueGreen: { activeSelector: 'old' } },
      );
      expect(objectHealth(r)).toEqual({
        status: 'Progressing',
        message: 'active service cutover pending',
      });
    });

    it('waits for analysis before a blue-green revision is stable', () => {
      const r = rollout(
        { blueGreen: {} },
        { blueGreen: { activeSelector: 'new' }, stableRS: 'old' },
      );
      expect(objectHealth(r)).toEqual({
        status: 'Progressing',
        message: 'waiting for analysis to complete',
      });
    });

    it('waits for a canary to finish its steps', () => {
      const r = rollout({ canary: {} }, { stableRS: 'old' });
      expect(objectHealth(r)).toEqual({
        status: 'Progressing',
        message: 'Waiting for rollout to finish steps',
      });
    });

    it('reads a canary stable ReplicaSet from before v0.8 even when unset', () => {
      const r = rollout({ canary: {} }, { canary: {} });
      expect(objectHealth(r)).toEqual({
        status: 'Progressing',
        message: 'Waiting for rollout to finish steps',
      });
    });
  });

  describe('Argo AnalysisRun', () => {
    eachFixture('AnalysisRun', [
      ['pendingAnalysisRun.yaml', 'Progressing', 'Analysis run is running'],
      [
        'noStatusAnalysisRun.yaml',
        'Progressing',
        'Waiting for analysis run to finish: status has not been reconciled.',
      ],
      ['runningAnalysisRun.yaml', 'Progressing', 'Analysis run is running'],
      [
        'successfulAnalysisRun.yaml',
        'Healthy',
        'Analysis run completed successfully',
      ],
      ['failedAnalysisRun.yaml', 'Degraded', 'Analysis run failed'],
      [
        'failedAnalysisRunWithStatusMessage.yaml',
        'Degraded',
        'Status Message: Assessed as Failed',
      ],
      ['errorAnalysisRun.yaml', 'Degraded', 'Analysis run had an error'],
      [
        'errorAnalysisRunWithStatusMessage.yaml',
        'Degraded',
        'Status Message: Assessed as Error',
      ],
      // Argo CD says Unknown for an inconclusive run; Fleet waits on it.
      [
        'inconclusiveAnalysisRun.yaml',
        'Progressing',
        'Analysis run was inconclusive',
      ],
      [
        'inconclusiveAnalysisRunWithStatusMessage.yaml',
        'Progressing',
        'Status Message: Assessed as Inconclusive',
      ],
      ['terminatedAnalysisRun.yaml', 'Healthy', 'run terminated'],
    ]);
  });
});

describe('objectSetHealth', () => {
  const healthy = live('v1', 'ConfigMap');
  const progressing = live('apps/v1', 'StatefulSet', {
    metadata: { name: 'inventory-db', generation: 1 },
    spec: { replicas: 2 },
    status: { observedGeneration: 1, readyReplicas: 1 },
  });
  const suspended = live('apps/v1', 'Deployment', { spec: { paused: true } });
  const degraded = live('v1', 'PersistentVolumeClaim', {
    status: { phase: 'Lost' },
  });
  const unassigned = live('networking.k8s.io/v1', 'Ingress', { status: {} });

  it('is Healthy for no objects', () => {
    expect(objectSetHealth([])).toEqual({ status: 'Healthy' });
  });

  it('is Healthy, naming nothing, when every object is healthy', () => {
    expect(
      objectSetHealth([
        { kind: 'ConfigMap', name: 'a', live: healthy },
        { kind: 'ConfigMap', name: 'b', live: healthy },
      ]),
    ).toEqual({ status: 'Healthy' });
  });

  it('names the object that is not healthy, with its message', () => {
    expect(
      objectSetHealth([
        { kind: 'ConfigMap', name: 'settings', live: healthy },
        {
          kind: 'StatefulSet',
          name: 'inventory-db',
          namespace: 'shop',
          live: progressing,
        },
      ]),
    ).toEqual({
      status: 'Progressing',
      message: 'StatefulSet inventory-db: Waiting for 1 pods to be ready...',
      object: { kind: 'StatefulSet', name: 'inventory-db', namespace: 'shop' },
    });
  });

  it('names the status of an object that has no message', () => {
    expect(
      objectSetHealth([
        { kind: 'Ingress', name: 'web', live: unassigned },
        { kind: 'Service', name: 'web', namespace: 'shop', live: undefined },
      ]),
    ).toEqual({
      status: 'Missing',
      message: 'Service web is missing',
      object: { kind: 'Service', name: 'web', namespace: 'shop' },
    });
  });

  it.each<[ObjectHealthStatus, ObjectHealthStatus]>([
    ['Degraded', 'Missing'],
    ['Missing', 'Progressing'],
    ['Progressing', 'Suspended'],
    ['Suspended', 'Healthy'],
  ])('ranks %s worse than %s, in either order', (worse, better) => {
    const objects: Record<ObjectHealthStatus, KubernetesObject | undefined> = {
      Healthy: healthy,
      Suspended: suspended,
      Progressing: progressing,
      Missing: undefined,
      Degraded: degraded,
    };
    const entry = (status: ObjectHealthStatus) => ({
      kind: 'Thing',
      name: status,
      live: objects[status],
    });
    for (const order of [
      [better, worse],
      [worse, better],
    ]) {
      const set = objectSetHealth(order.map(entry));
      expect(set.status).toBe(worse);
      expect(set.object).toEqual({ kind: 'Thing', name: worse });
    }
  });

  it('names the first of several objects that are equally the worst', () => {
    const set = objectSetHealth([
      { kind: 'ConfigMap', name: 'settings', live: healthy },
      { kind: 'Deployment', name: 'api', live: undefined },
      { kind: 'Deployment', name: 'worker', live: undefined },
    ]);
    expect(set.object).toEqual({ kind: 'Deployment', name: 'api' });
    expect(set.message).toBe('Deployment api is missing');
  });
});
