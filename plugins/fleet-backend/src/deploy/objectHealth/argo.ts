import type { Json, ObjectHealth, ObjectHealthStatus } from './types';
import {
  health,
  int,
  isNil,
  list,
  optionalInt,
  record,
  text,
  toNumber,
  unknown,
} from './fields';

/*
 * Argo's own kinds: gitops-engine's Workflow check and Argo CD's health scripts for Rollout and
 * AnalysisRun (`resource_customizations/argoproj.io`).
 */

export function workflowHealth(obj: Json): ObjectHealth {
  const status = record(obj.status);
  const message = text(status.message);
  switch (text(status.phase)) {
    case '':
    case 'Pending':
    case 'Running':
      return health('Progressing', message);
    case 'Succeeded':
      return health('Healthy', message);
    case 'Failed':
    case 'Error':
      return health('Degraded', message);
    default:
      return unknown(message);
  }
}

/** The phases Argo Rollouts v1.0 on writes that Argo CD reports as they are. */
const ROLLOUT_PHASES: ObjectHealthStatus[] = [
  'Healthy',
  'Progressing',
  'Degraded',
  'Suspended',
];

/**
 * Whether the Rollout controller has observed the spec. A numeric observedGeneration (v0.10 on)
 * must equal the generation; older Rollouts wrote a hash, or a number above it, and count as
 * observed. From v1.1, a Rollout that references a workload must also have observed its
 * generation.
 */
function rolloutObserved(
  meta: Json,
  spec: Json,
  status: Json | undefined,
): boolean {
  if (!status) return false;
  const generation = int(meta.generation);
  const observedGeneration = toNumber(status.observedGeneration);
  const generationObserved =
    observedGeneration === undefined ||
    observedGeneration > generation ||
    observedGeneration === generation;
  const workloadObserved =
    isNil(spec.workloadRef) ||
    isNil(meta.annotations) ||
    toNumber(
      record(meta.annotations)['rollout.argoproj.io/workload-generation'],
    ) === toNumber(status.workloadObservedGeneration);
  return generationObserved && workloadObserved;
}

/** The Rollout's progress once its status is reconciled: replicas, then its strategy's steps. */
function rolloutProgress(spec: Json, status: Json): ObjectHealth {
  const desired = optionalInt(spec.replicas) ?? 1;
  const replicas = int(status.replicas);
  const updated = int(status.updatedReplicas);
  const available = int(status.availableReplicas);
  if (updated < desired) {
    return health(
      'Progressing',
      'Waiting for roll out to finish: More replicas need to be updated',
    );
  }
  if (available < updated) {
    return health(
      'Progressing',
      'Waiting for roll out to finish: updated replicas are still becoming available',
    );
  }

  // v0.8 moved the stable ReplicaSet from status.canary.stableRS to status.stableRS.
  let stableRS: unknown = '';
  if (!isNil(status.stableRS)) stableRS = status.stableRS;
  else if (!isNil(status.canary)) stableRS = record(status.canary).stableRS;
  const strategy = record(spec.strategy);
  if (!isNil(strategy.blueGreen)) {
    if (
      isNil(status.blueGreen) ||
      record(status.blueGreen).activeSelector !== status.currentPodHash
    ) {
      return health('Progressing', 'active service cutover pending');
    }
    if (stableRS !== '' && stableRS !== status.currentPodHash) {
      return health('Progressing', 'waiting for analysis to complete');
    }
  } else if (!isNil(strategy.canary)) {
    if (replicas > updated) {
      return health(
        'Progressing',
        'Waiting for roll out to finish: old replicas are pending termination',
      );
    }
    if (stableRS === '' || stableRS !== status.currentPodHash) {
      return health('Progressing', 'Waiting for rollout to finish steps');
    }
  }
  return health('Healthy');
}

/** Argo CD's `argoproj.io/Rollout` health script. */
export function rolloutHealth(obj: Json): ObjectHealth {
  const spec = record(obj.spec);
  const status = record(obj.status);
  if (
    !rolloutObserved(
      record(obj.metadata),
      spec,
      isNil(obj.status) ? undefined : status,
    )
  ) {
    return health(
      'Progressing',
      'Waiting for rollout spec update to be observed',
    );
  }

  // v1.0 on: the controller writes its own phase and message.
  if (!isNil(status.phase)) {
    const message = typeof status.message === 'string' ? status.message : '';
    if (status.phase === 'Paused') return health('Suspended', message);
    const phase = ROLLOUT_PHASES.find(p => p === status.phase);
    return phase ? health(phase, message) : unknown(message);
  }

  for (const condition of list(status.conditions)) {
    if (
      condition.type === 'InvalidSpec' ||
      (condition.type === 'Progressing' &&
        (condition.reason === 'RolloutAborted' ||
          condition.reason === 'ProgressDeadlineExceeded'))
    ) {
      return health('Degraded', text(condition.message));
    }
  }

  if (list(status.pauseConditions).length > 0 || spec.paused === true) {
    return health('Suspended', 'Rollout is paused');
  }

  if (isNil(status.currentPodHash)) {
    return health(
      'Progressing',
      'Waiting for rollout to finish: status has not been reconciled.',
    );
  }
  return rolloutProgress(spec, status);
}

/** Argo CD's `argoproj.io/AnalysisRun` health script. */
export function analysisRunHealth(obj: Json): ObjectHealth {
  const waiting = health(
    'Progressing',
    'Waiting for analysis run to finish: status has not been reconciled.',
  );
  if (isNil(obj.status)) return waiting;
  const status = record(obj.status);
  const message = (fallback: string) =>
    typeof status.message === 'string' ? status.message : fallback;
  switch (status.phase) {
    case 'Pending':
    case 'Running':
      return health('Progressing', 'Analysis run is running');
    case 'Successful':
      return health('Healthy', message('Analysis run completed successfully'));
    case 'Failed':
      return health('Degraded', message('Analysis run failed'));
    case 'Error':
      return health('Degraded', message('Analysis run had an error'));
    case 'Inconclusive':
      return unknown(message('Analysis run was inconclusive'));
    default:
      return waiting;
  }
}
