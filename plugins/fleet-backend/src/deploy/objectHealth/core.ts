import type { Json, ObjectHealth } from './types';
import {
  conditionOf,
  health,
  int,
  isNil,
  list,
  quote,
  record,
  text,
  unknown,
  hasLoadBalancerIngress,
} from './fields';

/* gitops-engine's checks for the core group: Pod, PersistentVolumeClaim and Service. */

const IGNORE_RESTART_POLICY = 'argocd.argoproj.io/ignore-restart-policy';

/** Whether Argo CD or Helm runs the Pod as a hook, as gitops-engine's `hook.IsHook`. */
function isHook(annotations: Json): boolean {
  const argoHook = annotations['argocd.argoproj.io/hook'];
  if (typeof argoHook === 'string') {
    const types = argoHook
      .split(',')
      .map(t => t.trim())
      .filter(t =>
        [
          'PreSync',
          'Sync',
          'PostSync',
          'SyncFail',
          'PostDelete',
          'PreDelete',
          'Skip',
        ].includes(t),
      );
    return !(types.includes('Skip') && types.length === 1);
  }
  const helmHook = annotations['helm.sh/hook'];
  return typeof helmHook === 'string' && helmHook !== 'crd-install';
}

function podFailMessage(container: Json): string {
  if (isNil(record(container.state).terminated)) return '';
  const terminated = record(record(container.state).terminated);
  if (text(terminated.message)) return text(terminated.message);
  if (terminated.reason === 'OOMKilled') return 'OOMKilled';
  const exitCode = int(terminated.exitCode);
  if (exitCode !== 0) {
    return `container ${quote(
      text(container.name),
    )} failed with exit code ${exitCode}`;
  }
  return '';
}

export function podHealth(obj: Json): ObjectHealth {
  const annotations = record(record(obj.metadata).annotations);
  const spec = record(obj.spec);
  const status = record(obj.status);
  const message = text(status.message);
  const policy = spec.restartPolicy;
  // A Pod that restarts is long-running; one that does not is a task, usually a hook, that a
  // waiting image must not fail early. The annotation asks for the first reading, not on hooks.
  const longRunning =
    policy === 'Always' ||
    (annotations[IGNORE_RESTART_POLICY] === 'true' && !isHook(annotations));
  const containers = list(status.containerStatuses);

  if (longRunning) {
    const errors = containers
      .map(c => record(record(c.state).waiting))
      .filter(w => {
        const reason = text(w.reason);
        return (
          reason.startsWith('Err') ||
          reason.endsWith('Error') ||
          reason.endsWith('BackOff')
        );
      })
      .map(w => text(w.message));
    if (errors.length > 0) return health('Degraded', errors.join(', '));
  }

  switch (status.phase) {
    case 'Pending':
      return health('Progressing', message);
    case 'Succeeded':
      return health('Healthy', message);
    case 'Failed': {
      if (message) return health('Degraded', message);
      for (const container of [
        ...list(status.initContainerStatuses),
        ...containers,
      ]) {
        const failure = podFailMessage(container);
        if (failure) return health('Degraded', failure);
      }
      return health('Degraded');
    }
    case 'Running':
      if (longRunning) {
        if (conditionOf(status, 'Ready')?.status === 'True') {
          return health('Healthy', message);
        }
        const restarted = containers.some(
          c => !isNil(record(c.lastState).terminated),
        );
        return health(restarted ? 'Degraded' : 'Progressing', message);
      }
      if (policy === 'OnFailure' || policy === 'Never') {
        return health('Progressing', message);
      }
      return unknown(message);
    default:
      return unknown(message);
  }
}

export function pvcHealth(obj: Json): ObjectHealth {
  switch (record(obj.status).phase) {
    case 'Lost':
      return health('Degraded');
    case 'Pending':
      return health('Progressing');
    case 'Bound':
      return health('Healthy');
    default:
      return unknown();
  }
}

export function serviceHealth(obj: Json): ObjectHealth {
  if (
    record(obj.spec).type === 'LoadBalancer' &&
    !hasLoadBalancerIngress(obj)
  ) {
    return health('Progressing');
  }
  return health('Healthy');
}
