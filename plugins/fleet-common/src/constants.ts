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
 * The component's own Kubernetes manifests, deployed instead of Fleet's generated workload: a
 * folder relative to the entity's `backstage.io/source-location` (`dir:./deploy`), or the URL
 * of a folder or of one YAML file (`url:https://…`).
 *
 * @public
 */
export const FLEET_ANNOTATION_MANIFESTS_REF = 'cnp.io/manifests-ref';

/**
 * Which Deployment or Rollout among the component's own manifests is its workload (its image is
 * what a revision records); unset: the only Deployment or Rollout there.
 *
 * @public
 */
export const FLEET_ANNOTATION_WORKLOAD = 'cnp.io/workload';

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
