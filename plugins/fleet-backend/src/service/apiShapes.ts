import type {
  Application,
  Cluster,
  Deployment,
  FleetEvent,
  Revision,
} from '@cnp/plugin-fleet-common';
import type { ClusterRecord } from '../database/types';
import { redactDetail } from '../util/redactDetail';

/**
 * Who an answer is for. Cluster admins (allowed `fleet.cluster.update`, and services) see where
 * each kubeconfig is and why Fleet cannot use it; everyone else sees no kubeconfigRef and a
 * generic reason instead of file paths and system error codes.
 */
export interface ApiView {
  clusterAdmin: boolean;
}

/** The view of a caller who may see every detail. */
export const ADMIN_VIEW: ApiView = { clusterAdmin: true };
/** The view of a caller who is not a cluster admin (also: answers to writes by deployers). */
export const RESTRICTED_VIEW: ApiView = { clusterAdmin: false };

/**
 * The fields of clusters, applications, deployments, revisions and events that may have no
 * value. The API always sends them, as null when unset (`origin: null` for an application
 * nobody said the origin of), so a client can tell "not set" from "not sent".
 */
const NULLABLE = {
  cluster: [
    'context',
    'statusReason',
    'failureThreshold',
    'lastProbeAt',
    'lastSuccessAt',
    'lastTransitionAt',
    'probeLatencyMs',
    'serverVersion',
  ],
  application: ['origin'],
  deployment: [
    'clusterStatus',
    'statusReason',
    'message',
    'image',
    'lastAppliedAt',
    'lastSyncedAt',
  ],
  revision: [
    'replicas',
    'env',
    'resources',
    'namespace',
    'outcome',
    'outcomeReason',
    'outcomeAt',
  ],
  event: ['from', 'reason', 'message'],
} as const;

function withNulls<T extends object>(value: T, keys: readonly string[]): T {
  const shaped: Record<string, unknown> = {
    ...(value as Record<string, unknown>),
  };
  for (const key of keys) shaped[key] ??= null;
  return shaped as T;
}

/** A cluster as the API answers it: the stored record without internal bookkeeping. */
export function toApiCluster(record: ClusterRecord, view: ApiView): Cluster {
  const {
    cascadeHeldAt: _held,
    firstFailureAt: _firstFailure,
    identityCa: _ca,
    ...cluster
  } = record;
  const shown = view.clusterAdmin
    ? cluster
    : {
        ...cluster,
        kubeconfigRef: null,
        statusReason: redactDetail(cluster.statusReason),
      };
  return withNulls(shown, NULLABLE.cluster);
}

export function toApiApplication(application: Application): Application {
  return withNulls(application, NULLABLE.application);
}

export function toApiDeployment(
  deployment: Deployment,
  view: ApiView,
): Deployment {
  const shown = view.clusterAdmin
    ? deployment
    : {
        ...deployment,
        statusReason: redactDetail(deployment.statusReason),
        message: redactDetail(deployment.message),
      };
  return withNulls(shown, NULLABLE.deployment);
}

export function toApiRevision(revision: Revision, view: ApiView): Revision {
  const shown = view.clusterAdmin
    ? revision
    : { ...revision, outcomeReason: redactDetail(revision.outcomeReason) };
  return withNulls(shown, NULLABLE.revision);
}

export function toApiEvent(event: FleetEvent, view: ApiView): FleetEvent {
  const shown = view.clusterAdmin
    ? event
    : {
        ...event,
        reason: redactDetail(event.reason),
        message: redactDetail(event.message),
      };
  return withNulls(shown, NULLABLE.event);
}
