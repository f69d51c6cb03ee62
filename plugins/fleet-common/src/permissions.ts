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

/**
 * Approving or rejecting a release that waits before it starts (`POST /releases/:id/approve`,
 * `/reject`): a resource permission on the component's catalog entity. Fleet also requires the
 * approver to be a member of one of the groups the release's stage names, and never the
 * release's author; a policy decides who may approve at all.
 *
 * @public
 */
export const fleetReleaseApprovePermission = createPermission({
  name: 'fleet.release.approve',
  attributes: { action: 'update' },
  resourceType: 'catalog-entity',
});

/** The permission resource type of a Fleet cluster: its `resourceRef` is the cluster's name. @public */
export const FLEET_CLUSTER_PERMISSION_RESOURCE_TYPE = 'fleet-cluster';

/**
 * The cluster label naming ONE group whose members may deploy to the cluster: a group name of the
 * `default` namespace, as a whole (`payments.platform` is the group of that name; dots belong to
 * the name). For more groups, use one {@link FLEET_CLUSTER_ALLOWED_GROUP_LABEL_PREFIX} label
 * each. A cluster with neither is open to every deployer. @public
 */
export const FLEET_CLUSTER_ALLOWED_GROUPS_LABEL = 'cnp.io/allowed-groups';

/**
 * The prefix of the cluster labels that each admit one group: the prefix, then the name of a
 * group of the `default` namespace, set to `true` (e.g. `allowed-groups.cnp.io/payments: true`).
 * A group's name is a valid label key name (the same characters, at most 63), so no separator is
 * needed and none can be mistaken for part of a name. A value other than `true` (or empty) admits
 * nobody, but the cluster is still kept to the groups its labels admit. @public
 */
export const FLEET_CLUSTER_ALLOWED_GROUP_LABEL_PREFIX =
  'allowed-groups.cnp.io/';

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
 * The group refs a cluster admits: the group its `cnp.io/allowed-groups` label names (the whole
 * value, one group), and the group each label with the prefix `allowed-groups.cnp.io/` names
 * after it, when set to `true` (or empty). Undefined when the cluster has none of these labels (open to every deployer); an empty
 * list when it has some but they admit no group (kept to the cluster admins). @public
 */
export function clusterAllowedGroups(
  labels: Record<string, string> | undefined,
): string[] | undefined {
  if (!labels) return undefined;
  let restricted = false;
  const names: string[] = [];
  for (const [key, raw] of Object.entries(labels)) {
    const value = raw.trim();
    if (key === FLEET_CLUSTER_ALLOWED_GROUPS_LABEL) {
      restricted = true;
      if (value) names.push(value);
    } else if (key.startsWith(FLEET_CLUSTER_ALLOWED_GROUP_LABEL_PREFIX)) {
      restricted = true;
      const name = key.slice(FLEET_CLUSTER_ALLOWED_GROUP_LABEL_PREFIX.length);
      if (name && (value === 'true' || value === '')) names.push(name);
    }
  }
  if (!restricted) return undefined;
  return [
    ...new Set(
      names.map(name => `group:default/${name.toLocaleLowerCase('en-US')}`),
    ),
  ];
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
  fleetReleaseApprovePermission,
  fleetHealthRunPermission,
  fleetClusterDeployPermission,
];
