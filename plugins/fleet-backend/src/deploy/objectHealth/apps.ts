import type { Json, ObjectHealth } from './types';
import {
  conditionOf,
  health,
  int,
  isNil,
  optionalInt,
  quote,
  record,
  text,
} from './fields';

/* gitops-engine's checks for the `apps` group (`health_deployment.go` and its siblings). */

export function deploymentHealth(obj: Json): ObjectHealth {
  const meta = record(obj.metadata);
  const spec = record(obj.spec);
  const status = record(obj.status);
  if (spec.paused === true) return health('Suspended', 'Deployment is paused');
  if (int(meta.generation) > int(status.observedGeneration)) {
    return health(
      'Progressing',
      'Waiting for rollout to finish: observed deployment generation less than desired generation',
    );
  }
  const replicas = optionalInt(spec.replicas);
  const updated = int(status.updatedReplicas);
  const current = int(status.replicas);
  const available = int(status.availableReplicas);
  if (
    conditionOf(status, 'Progressing')?.reason === 'ProgressDeadlineExceeded'
  ) {
    return health(
      'Degraded',
      `Deployment ${quote(text(meta.name))} exceeded its progress deadline`,
    );
  }
  if (replicas !== undefined && updated < replicas) {
    return health(
      'Progressing',
      `Waiting for rollout to finish: ${updated} out of ${replicas} new replicas have been updated...`,
    );
  }
  if (current > updated) {
    return health(
      'Progressing',
      `Waiting for rollout to finish: ${
        current - updated
      } old replicas are pending termination...`,
    );
  }
  if (available < updated) {
    return health(
      'Progressing',
      `Waiting for rollout to finish: ${available} of ${updated} updated replicas are available...`,
    );
  }
  return health('Healthy');
}

export function statefulSetHealth(obj: Json): ObjectHealth {
  const meta = record(obj.metadata);
  const spec = record(obj.spec);
  const status = record(obj.status);
  const observed = int(status.observedGeneration);
  if (observed === 0 || int(meta.generation) > observed) {
    return health(
      'Progressing',
      'Waiting for statefulset spec update to be observed...',
    );
  }
  const replicas = optionalInt(spec.replicas);
  const ready = int(status.readyReplicas);
  const updated = int(status.updatedReplicas);
  if (replicas !== undefined && ready < replicas) {
    return health(
      'Progressing',
      `Waiting for ${replicas - ready} pods to be ready...`,
    );
  }
  const strategy = record(spec.updateStrategy);
  if (strategy.type === 'RollingUpdate' && !isNil(strategy.rollingUpdate)) {
    const partition = optionalInt(record(strategy.rollingUpdate).partition);
    if (replicas !== undefined && partition !== undefined) {
      if (updated < replicas - partition) {
        return health(
          'Progressing',
          `Waiting for partitioned roll out to finish: ${updated} out of ${
            replicas - partition
          } new pods have been updated...`,
        );
      }
    }
    return health(
      'Healthy',
      `partitioned roll out complete: ${updated} new pods have been updated...`,
    );
  }
  if (strategy.type === 'OnDelete') {
    return health('Healthy', `statefulset has ${ready} ready pods`);
  }
  const updateRevision = text(status.updateRevision);
  const currentRevision = text(status.currentRevision);
  if (updateRevision !== currentRevision) {
    return health(
      'Progressing',
      `waiting for statefulset rolling update to complete ${updated} pods at revision ${updateRevision}...`,
    );
  }
  return health(
    'Healthy',
    `statefulset rolling update complete ${int(
      status.currentReplicas,
    )} pods at revision ${currentRevision}...`,
  );
}

export function daemonSetHealth(obj: Json): ObjectHealth {
  const meta = record(obj.metadata);
  const spec = record(obj.spec);
  const status = record(obj.status);
  if (int(meta.generation) > int(status.observedGeneration)) {
    return health(
      'Progressing',
      'Waiting for rollout to finish: observed daemon set generation less than desired generation',
    );
  }
  const updated = int(status.updatedNumberScheduled);
  const desired = int(status.desiredNumberScheduled);
  const available = int(status.numberAvailable);
  if (record(spec.updateStrategy).type === 'OnDelete') {
    return health(
      'Healthy',
      `daemon set ${updated} out of ${desired} new pods have been updated`,
    );
  }
  const name = quote(text(meta.name));
  if (updated < desired) {
    return health(
      'Progressing',
      `Waiting for daemon set ${name} rollout to finish: ${updated} out of ${desired} new pods have been updated...`,
    );
  }
  if (available < desired) {
    return health(
      'Progressing',
      `Waiting for daemon set ${name} rollout to finish: ${available} of ${desired} updated pods are available...`,
    );
  }
  return health('Healthy');
}

export function replicaSetHealth(obj: Json): ObjectHealth {
  const meta = record(obj.metadata);
  const spec = record(obj.spec);
  const status = record(obj.status);
  if (int(meta.generation) > int(status.observedGeneration)) {
    return health(
      'Progressing',
      'Waiting for rollout to finish: observed replica set generation less than desired generation',
    );
  }
  const failure = conditionOf(status, 'ReplicaFailure');
  if (failure && failure.status === 'True') {
    return health('Degraded', text(failure.message));
  }
  const replicas = optionalInt(spec.replicas);
  const available = int(status.availableReplicas);
  if (replicas !== undefined && available < replicas) {
    return health(
      'Progressing',
      `Waiting for rollout to finish: ${available} out of ${replicas} new replicas are available...`,
    );
  }
  return health('Healthy');
}
