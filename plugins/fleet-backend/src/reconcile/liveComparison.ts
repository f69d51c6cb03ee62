import type {
  Application,
  Revision,
  SyncDifference,
} from '@cnp/plugin-fleet-common';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ClusterRecord, DeploymentState } from '../database/types';
import type { AutoscalerCache } from '../deploy/ManifestApplier';
import { objectSetHealth } from '../deploy/objectHealth';
import { diffObject } from '../kubernetes/diffObject';
import type {
  ReconcileSummary,
  ReconcileWorkerOptions,
} from './reconcileTypes';

export type CheckerOptions = Pick<
  ReconcileWorkerOptions,
  | 'stores'
  | 'applier'
  | 'objectApplier'
  | 'deployments'
  | 'logger'
  | 'reconcile'
  | 'liveState'
  | 'objectsRefusal'
>;

/** Whether a deployment's workload is healthy, in words either way. */
export interface WorkloadHealth {
  healthy: boolean;
  /** Why it is not healthy. */
  unhealthy: string;
  /** What it is again once healthy. */
  recovered: string;
}

/** Deployments to compare, with what they are compared against. */
export interface CheckBatch {
  deployments: DeploymentState[];
  revisionOf: Map<string, Revision>;
  apps: Map<string, Application>;
  clustersByName: Map<string, ClusterRecord>;
  summary: ReconcileSummary;
  /** Compared because a watch saw their objects change (heals are then limited). */
  fromEvent?: boolean;
}

/** One deployment of a batch, with its own revision, application and cluster. */
export type CheckOne = {
  deployment: DeploymentState;
  revision: Revision | undefined;
  application: Application;
  cluster: ClusterRecord;
  summary: ReconcileSummary;
  autoscalers: AutoscalerCache;
  fromEvent: boolean;
};

/** The live read of one deployment and how it differs from the desired objects. */
export type Compared = {
  /** An HPA owns the Deployment's replica count. */
  autoscaled: boolean;
  health: WorkloadHealth;
  differences: SyncDifference[];
  described: string;
  desired: Awaited<ReturnType<CheckerOptions['deployments']['desiredFor']>>;
};

/**
 * Reads a deployment's live objects and compares them with its desired ones on the fields Fleet
 * owns (`diffObject`), and judges the workload's health: the generated workload's Deployment by
 * its available replicas, a component's own objects as Argo CD does. `unreadable` says why the
 * live objects could not be read.
 */
export async function compareLive(
  options: CheckerOptions,
  one: CheckOne,
): Promise<Compared | { unreadable: string }> {
  const { applier, deployments, liveState } = options;
  const { application } = one;
  const desired = await deployments.desiredFor({
    application,
    revision: one.revision,
    cluster: one.cluster,
  });
  if (desired.objects) return compareObjects(options, one, desired);
  const { manifests, namespace } = desired;
  const live = await (liveState ?? applier).readLive(
    one.cluster,
    namespace,
    manifests,
    { autoscalers: one.autoscalers },
  );
  if (live.kind === 'unreachable') return { unreadable: live.message };
  const ignore = [
    ...(application.spec.ignoreDifferences ?? []),
    ...(live.autoscaled ? ['/spec/replicas'] : []),
  ];
  const differences: SyncDifference[] = [
    ...diffObject(manifests.deployment, live.deployment, ignore),
    ...diffObject(manifests.service, live.service, ignore),
    ...(manifests.podDisruptionBudget
      ? diffObject(
          manifests.podDisruptionBudget,
          live.podDisruptionBudget,
          ignore,
        )
      : []),
    ...(manifests.ingress
      ? diffObject(manifests.ingress, live.ingress, ignore)
      : []),
  ];
  const desiredReplicas = live.deployment?.spec?.replicas ?? 1;
  const available = live.deployment?.status?.availableReplicas ?? 0;
  return {
    autoscaled: live.autoscaled,
    health: {
      healthy: live.deployment !== undefined && available >= desiredReplicas,
      unhealthy: live.deployment
        ? `${available} of ${desiredReplicas} replicas available`
        : 'The Deployment is missing',
      recovered: `${available} of ${desiredReplicas} replicas available again`,
    },
    differences,
    described: describeDifferences(differences),
    desired,
  };
}

/**
 * Compares a component's own objects, as its revision recorded them, with their live
 * counterparts (every object, every kind), and judges their health as Argo CD does.
 */
async function compareObjects(
  options: CheckerOptions,
  one: CheckOne,
  desired: Compared['desired'] & { objects: KubernetesObject[] },
): Promise<Compared | { unreadable: string }> {
  const { objectApplier } = options;
  if (!objectApplier) {
    return {
      unreadable: "This Fleet backend cannot read a component's own manifests",
    };
  }
  const live = await objectApplier.readLive(one.cluster, desired.objects);
  if (live.kind !== 'read') return { unreadable: live.message };
  const autoscaled = desired.objects.some(
    o => o.kind === 'HorizontalPodAutoscaler',
  );
  const ignore = [
    ...(one.application.spec.ignoreDifferences ?? []),
    ...(autoscaled ? ['/spec/replicas'] : []),
  ];
  const differences = desired.objects.flatMap((object, i) =>
    diffObject(object, live.live[i], ignore),
  );
  const health = objectSetHealth(
    desired.objects.map((object, i) => ({
      kind: object.kind ?? '',
      name: object.metadata?.name ?? '',
      namespace: object.metadata?.namespace,
      live: live.live[i],
    })),
  );
  return {
    autoscaled,
    health: {
      healthy: health.status === 'Healthy',
      unhealthy: health.message ?? health.status,
      recovered: `All ${desired.objects.length} objects healthy again`,
    },
    differences,
    described: describeDifferences(differences),
    desired,
  };
}

/** Differences as an event says them: `Deployment/web /spec/replicas, ConfigMap/web-config (missing)`. */
export function describeDifferences(differences: SyncDifference[]): string {
  return differences
    .map(
      d => `${d.kind}/${d.name}${d.path === '/' ? ' (missing)' : ` ${d.path}`}`,
    )
    .join(', ');
}
