import { createPermission } from '@backstage/plugin-permission-common';

/** Registering a cluster by hand (`POST /clusters`). @public */
export const fleetClusterCreatePermission = createPermission({
  name: 'fleet.cluster.create',
  attributes: { action: 'create' },
});

/** Changing a cluster's labels or failure threshold (`PATCH /clusters/:name`). @public */
export const fleetClusterUpdatePermission = createPermission({
  name: 'fleet.cluster.update',
  attributes: { action: 'update' },
});

/** Removing a manual cluster (`DELETE /clusters/:name`). @public */
export const fleetClusterDeletePermission = createPermission({
  name: 'fleet.cluster.delete',
  attributes: { action: 'delete' },
});

/**
 * Deploying a component: a resource permission on the catalog entity being deployed (its
 * `resourceRef` is the component's entity ref). Checked by `POST /deployments`,
 * `POST /applications` and `PATCH /applications/:id`, and so by the scaffolder actions
 * `fleet:application:register` and `fleet:deploy`. Its rules are the catalog's: a policy can
 * answer with a conditional decision such as "the caller owns the entity"; see the condition
 * exports of `@cnp/plugin-catalog-backend-module-fleet` (`createFleetDeploymentConditionalDecision`).
 *
 * @public
 */
export const fleetDeploymentCreatePermission = createPermission({
  name: 'fleet.deployment.create',
  attributes: { action: 'create' },
  resourceType: 'catalog-entity',
});

/**
 * Undeploying a component from a cluster (`DELETE /deployments/:id`) or from the whole fleet
 * (`DELETE /applications/:id`): a resource permission on the component's catalog entity, with
 * the same rules as deploying. Rolling back needs `fleet.deployment.create`.
 *
 * @public
 */
export const fleetDeploymentDeletePermission = createPermission({
  name: 'fleet.deployment.delete',
  attributes: { action: 'delete' },
  resourceType: 'catalog-entity',
});

/**
 * Making and steering a fleet release (`POST /applications/:id/releases`): a resource
 * permission on the component's catalog entity.
 *
 * @public
 */
export const fleetReleaseManagePermission = createPermission({
  name: 'fleet.release.manage',
  attributes: { action: 'update' },
  resourceType: 'catalog-entity',
});

/** The permission resource type of a Fleet cluster: its `resourceRef` is the cluster's name. @public */
export const FLEET_CLUSTER_PERMISSION_RESOURCE_TYPE = 'fleet-cluster';

/**
 * The cluster label naming the groups whose members may deploy to the cluster: group names of
 * the `default` namespace, separated by dots (`team-a.payments`). A cluster without it is open
 * to every deployer. @public
 */
export const FLEET_CLUSTER_ALLOWED_GROUPS_LABEL = 'cnp.io/allowed-groups';

/**
 * Putting workloads on a cluster: a resource permission on the cluster (its `resourceRef` is
 * the cluster's name), checked besides the component's permission on deploy, rollback, release
 * and on a placement that names clusters. Its rules (`@cnp/plugin-fleet-node`'s
 * `fleetClusterConditions`) let a policy decide by the cluster's labels, e.g. "the caller is in a
 * group the cluster's `cnp.io/allowed-groups` label names".
 *
 * @public
 */
export const fleetClusterDeployPermission = createPermission({
  name: 'fleet.cluster.deploy',
  attributes: { action: 'update' },
  resourceType: FLEET_CLUSTER_PERMISSION_RESOURCE_TYPE,
});

/**
 * The group refs a cluster's `cnp.io/allowed-groups` label names, or undefined when the cluster
 * has no such label (open to every deployer). @public
 */
export function clusterAllowedGroups(
  labels: Record<string, string> | undefined,
): string[] | undefined {
  const value = labels?.[FLEET_CLUSTER_ALLOWED_GROUPS_LABEL]?.trim();
  if (value === undefined) return undefined;
  return value
    .split('.')
    .filter(Boolean)
    .map(name => `group:default/${name.toLocaleLowerCase('en-US')}`);
}

/** Running a health cycle now (`POST /health/run`). @public */
export const fleetHealthRunPermission = createPermission({
  name: 'fleet.health.run',
  attributes: { action: 'update' },
});

/** Every Fleet permission, for `permissionsRegistry.addPermissions`. @public */
export const fleetPermissions = [
  fleetClusterCreatePermission,
  fleetClusterUpdatePermission,
  fleetClusterDeletePermission,
  fleetDeploymentCreatePermission,
  fleetDeploymentDeletePermission,
  fleetReleaseManagePermission,
  fleetHealthRunPermission,
  fleetClusterDeployPermission,
];
