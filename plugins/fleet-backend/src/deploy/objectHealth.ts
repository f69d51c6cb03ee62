import type { KubernetesObject } from '@kubernetes/client-node';
import {
  daemonSetHealth,
  deploymentHealth,
  replicaSetHealth,
  statefulSetHealth,
} from './objectHealth/apps';
import {
  analysisRunHealth,
  rolloutHealth,
  workflowHealth,
} from './objectHealth/argo';
import { cronJobHealth, jobHealth } from './objectHealth/batch';
import {
  apiServiceHealth,
  hpaHealth,
  ingressHealth,
} from './objectHealth/cluster';
import { podHealth, pvcHealth, serviceHealth } from './objectHealth/core';
import { health, record, text } from './objectHealth/fields';
import type {
  Json,
  ObjectHealth,
  ObjectHealthStatus,
  ObjectRef,
} from './objectHealth/types';

export type {
  ObjectHealth,
  ObjectHealthStatus,
  ObjectRef,
} from './objectHealth/types';

/*
 * The health of live Kubernetes objects, as Argo CD assesses it: the built-in checks of
 * gitops-engine's `pkg/health` (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, Pod,
 * PersistentVolumeClaim, Service, Ingress, HorizontalPodAutoscaler, APIService, Argo Workflow)
 * and the health scripts Argo CD ships in `resource_customizations` for CronJob, Argo Rollout
 * and Argo AnalysisRun. Statuses and messages keep Argo CD's wording so that an operator who
 * knows Argo CD reads the same reason here.
 */

/** From the most healthy to the least, as gitops-engine's `healthOrder`. */
const ORDER: ObjectHealthStatus[] = [
  'Healthy',
  'Suspended',
  'Progressing',
  'Missing',
  'Degraded',
];

const HOOK_FINALIZER = 'argocd.argoproj.io/hook-finalizer';

/** Argo CD's check for a kind, by its API group; none for a kind it has none for. */
function check(
  group: string,
  version: string,
  kind: string,
): ((obj: Json) => ObjectHealth) | undefined {
  switch (`${kind}.${group}`) {
    case 'Deployment.apps':
      return deploymentHealth;
    case 'StatefulSet.apps':
      return statefulSetHealth;
    case 'DaemonSet.apps':
      return daemonSetHealth;
    case 'ReplicaSet.apps':
      return replicaSetHealth;
    case 'Job.batch':
      return jobHealth;
    case 'CronJob.batch':
      return cronJobHealth;
    case 'Pod.':
      return podHealth;
    case 'PersistentVolumeClaim.':
      return pvcHealth;
    case 'Service.':
      return serviceHealth;
    case 'Ingress.networking.k8s.io':
    case 'Ingress.extensions':
      return ingressHealth;
    case 'HorizontalPodAutoscaler.autoscaling':
      return obj => hpaHealth(obj, version);
    case 'APIService.apiregistration.k8s.io':
      return apiServiceHealth;
    case 'Workflow.argoproj.io':
      return workflowHealth;
    case 'Rollout.argoproj.io':
      return rolloutHealth;
    case 'AnalysisRun.argoproj.io':
      return analysisRunHealth;
    default:
      return undefined;
  }
}

/**
 * Argo CD's health of one live object (undefined → Missing).
 *
 * An object being deleted is Progressing ("Pending deletion"). A kind Argo CD has no check for
 * is Healthy once it exists. The checks read the fields every served version of a kind shares,
 * so an older apiVersion of a kind is read as its current one. Where Argo CD would say
 * `Unknown`, this says Progressing with Argo CD's message: the object is not yet healthy, and
 * nothing shows it failed.
 */
export function objectHealth(live: KubernetesObject | undefined): ObjectHealth {
  if (!live) return health('Missing');
  const obj = live as unknown as Json;
  const meta = record(obj.metadata);
  const finalizers = Array.isArray(meta.finalizers) ? meta.finalizers : [];
  if (meta.deletionTimestamp && !finalizers.includes(HOOK_FINALIZER)) {
    return health('Progressing', 'Pending deletion');
  }
  const [group, version] = text(live.apiVersion).includes('/')
    ? text(live.apiVersion).split('/', 2)
    : ['', text(live.apiVersion)];
  const assess = check(group, version, text(live.kind));
  return assess ? assess(obj) : health('Healthy');
}

/** Whether `next` is worse than `current`, as gitops-engine's `IsWorse`. */
function isWorse(
  current: ObjectHealthStatus,
  next: ObjectHealthStatus,
): boolean {
  return ORDER.indexOf(next) > ORDER.indexOf(current);
}

/**
 * The set's health: the worst of its objects (Degraded > Missing > Progressing > Suspended >
 * Healthy, as Argo CD's `IsWorse`), naming the first object of that worst status, with its own
 * message ("StatefulSet inventory-db: Waiting for 1 pods to be ready..."), or its status where
 * Argo CD gives no message ("Ingress web is progressing"). An empty set is Healthy.
 */
export function objectSetHealth(
  objects: Array<ObjectRef & { live: KubernetesObject | undefined }>,
): ObjectHealth & { object?: ObjectRef } {
  let worst: { health: ObjectHealth; object: ObjectRef } | undefined;
  for (const { live, ...object } of objects) {
    const current = objectHealth(live);
    if (isWorse(worst?.health.status ?? 'Healthy', current.status)) {
      worst = { health: current, object };
    }
  }
  if (!worst) return health('Healthy');
  const { kind, name } = worst.object;
  const { status, message } = worst.health;
  return {
    status,
    message: message
      ? `${kind} ${name}: ${message}`
      : `${kind} ${name} is ${status.toLowerCase()}`,
    object: worst.object,
  };
}
