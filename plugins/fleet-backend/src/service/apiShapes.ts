import type {
  Application,
  Cluster,
  Deployment,
  FleetEvent,
  Revision,
} from '@cnp/plugin-fleet-common';
import type { ClusterRecord } from '../database/types';

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
export function toApiCluster(record: ClusterRecord): Cluster {
  const {
    cascadeHeldAt: _held,
    firstFailureAt: _firstFailure,
    identityCa: _ca,
    ...cluster
  } = record;
  return withNulls(cluster, NULLABLE.cluster);
}

export function toApiApplication(application: Application): Application {
  return withNulls(application, NULLABLE.application);
}

export function toApiDeployment(deployment: Deployment): Deployment {
  return withNulls(deployment, NULLABLE.deployment);
}

export function toApiRevision(revision: Revision): Revision {
  return withNulls(revision, NULLABLE.revision);
}

export function toApiEvent(event: FleetEvent): FleetEvent {
  return withNulls(event, NULLABLE.event);
}
