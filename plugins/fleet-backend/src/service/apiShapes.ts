import type {
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

/** A cluster as the API answers it: the stored record without internal bookkeeping. */
export function toApiCluster(record: ClusterRecord, view: ApiView): Cluster {
  const {
    cascadeHeldAt: _held,
    firstFailureAt: _firstFailure,
    identityCa: _ca,
    ...cluster
  } = record;
  return view.clusterAdmin
    ? cluster
    : {
        ...cluster,
        kubeconfigRef: null,
        statusReason: redactDetail(cluster.statusReason),
      };
}

/**
 * A deployment as the caller may see it; while PROGRESSING, with the time its rollout fails if
 * not complete (`progressDeadlineMs` after its last apply), when that deadline is given.
 */
export function toApiDeployment(
  deployment: Deployment,
  view: ApiView,
  progressDeadlineMs?: number,
): Deployment {
  const shown = view.clusterAdmin
    ? deployment
    : {
        ...deployment,
        statusReason: redactDetail(deployment.statusReason),
        message: redactDetail(deployment.message),
      };
  if (
    deployment.status !== 'PROGRESSING' ||
    !deployment.lastAppliedAt ||
    progressDeadlineMs === undefined
  )
    return shown;
  return {
    ...shown,
    progressDeadlineAt: new Date(
      Date.parse(deployment.lastAppliedAt) + progressDeadlineMs,
    ).toISOString(),
  };
}

export function toApiRevision(revision: Revision, view: ApiView): Revision {
  return view.clusterAdmin
    ? revision
    : { ...revision, outcomeReason: redactDetail(revision.outcomeReason) };
}

export function toApiEvent(event: FleetEvent, view: ApiView): FleetEvent {
  return view.clusterAdmin
    ? event
    : {
        ...event,
        reason: redactDetail(event.reason),
        message: redactDetail(event.message),
      };
}
