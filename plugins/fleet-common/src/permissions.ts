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
];
