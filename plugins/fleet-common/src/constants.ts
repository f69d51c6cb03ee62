/**
 * Cluster health as Fleet tracks it.
 *
 * - `ONLINE`: the last probe succeeded.
 * - `OFFLINE`: an outage is confirmed: `failureThreshold` consecutive probes failed.
 * - `UNKNOWN`: never successfully probed yet, or not probeable.
 *
 * @public
 */
export const CLUSTER_STATUSES = ['ONLINE', 'OFFLINE', 'UNKNOWN'] as const;

/** @public */
export type ClusterStatus = (typeof CLUSTER_STATUSES)[number];

/** @public */
export const CLUSTER_SOURCES = ['discovered', 'manual'] as const;

/** @public */
export type ClusterSource = (typeof CLUSTER_SOURCES)[number];

/** @public */
export const DEPLOYMENT_STATUSES = [
  'PENDING',
  'PROGRESSING',
  'DEPLOYED',
  'DEGRADED',
  'FAILED',
  'REMOVING',
] as const;

/** @public */
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

/** @public */
export const SYNC_STATUSES = ['SYNCED', 'OUT_OF_SYNC', 'UNKNOWN'] as const;

/** @public */
export type SyncStatus = (typeof SYNC_STATUSES)[number];

/** @public */
export const APPLICATION_ORIGINS = ['scaffolded', 'imported'] as const;

/** @public */
export type ApplicationOrigin = (typeof APPLICATION_ORIGINS)[number];

/**
 * Why a revision was made: a deploy to one cluster, a fleet release, a placement that put the
 * application on a new cluster, a rollback asked for, or an automatic one.
 *
 * @public
 */
export const REVISION_CAUSES = [
  'deploy',
  'release',
  'placement',
  'rollback',
  'auto-rollback',
] as const;

/** @public */
export type RevisionCause = (typeof REVISION_CAUSES)[number];

/**
 * Machine-readable reasons a deployment has its status.
 *
 * @public
 */
export const DeploymentReasons = {
  CLUSTER_OFFLINE: 'CLUSTER_OFFLINE',
  APPLY_FAILED: 'APPLY_FAILED',
  /**
   * An object of the same name that is not Fleet's for this component (no
   * `app.kubernetes.io/managed-by: fleet` label or another `cnp.io/entity-ref`) is in the way:
   * it is left untouched.
   */
  OWNERSHIP_CONFLICT: 'OWNERSHIP_CONFLICT',
  CLUSTER_NOT_CONFIGURED: 'CLUSTER_NOT_CONFIGURED',
  WORKLOAD_UNHEALTHY: 'WORKLOAD_UNHEALTHY',
  PROGRESS_DEADLINE_EXCEEDED: 'PROGRESS_DEADLINE_EXCEEDED',
  /** DEPLOYED again after an automatic rollback of a revision that failed. */
  ROLLED_BACK: 'ROLLED_BACK',
} as const;

/**
 * Machine-readable reasons a cluster has its status.
 *
 * @public
 */
export const ClusterReasons = {
  NEVER_PROBED: 'NEVER_PROBED',
  PROBE_SUCCEEDED: 'PROBE_SUCCEEDED',
  PROBE_FAILED: 'PROBE_FAILED',
  FAILURE_THRESHOLD_REACHED: 'FAILURE_THRESHOLD_REACHED',
  NOT_PROBEABLE: 'NOT_PROBEABLE',
} as const;

/**
 * Catalog annotations Fleet reads on components.
 *
 * @public
 */
export const FLEET_ANNOTATION_IMAGE = 'cnp.io/image';
/** @public */
export const FLEET_ANNOTATION_CLUSTERS = 'cnp.io/clusters';
/** @public */
export const FLEET_ANNOTATION_CLUSTER_SELECTOR = 'cnp.io/cluster-selector';

/**
 * Names the deployer group (an entity ref, e.g. `group:default/platform`) whose members may
 * deploy the component without owning it; without it only the owners may.
 *
 * @public
 */
export const FLEET_ANNOTATION_DEPLOYERS = 'cnp.io/deployers';

/** Catalog `Resource` type Fleet publishes clusters as. @public */
export const FLEET_CLUSTER_RESOURCE_TYPE = 'kubernetes-cluster';

/**
 * Paged lists (`GET /clusters`, `/applications`, `/deployments`): the largest `limit` accepted,
 * and the page size when none is given.
 *
 * @public
 */
export const FLEET_LIST_LIMITS = { max: 1000, default: 100 } as const;

/**
 * `GET /clusters?name=a&name=b`: the most cluster names one request may ask for; a client asking
 * for more splits them over several requests.
 *
 * @public
 */
export const FLEET_CLUSTER_NAMES_MAX = 100;
