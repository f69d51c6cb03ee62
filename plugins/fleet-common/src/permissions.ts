import { createPermission } from '@backstage/plugin-permission-common';

/** @public */
export const fleetClusterCreatePermission = createPermission({
  name: 'fleet.cluster.create',
  attributes: { action: 'create' },
});

/** @public */
export const fleetClusterUpdatePermission = createPermission({
  name: 'fleet.cluster.update',
  attributes: { action: 'update' },
});

/** @public */
export const fleetClusterDeletePermission = createPermission({
  name: 'fleet.cluster.delete',
  attributes: { action: 'delete' },
});

/**
 * Deploying a component: a resource permission on the catalog entity being deployed.
 *
 * @public
 */
export const fleetDeploymentCreatePermission = createPermission({
  name: 'fleet.deployment.create',
  attributes: { action: 'create' },
  resourceType: 'catalog-entity',
});

/** @public */
export const fleetHealthRunPermission = createPermission({
  name: 'fleet.health.run',
  attributes: { action: 'update' },
});

/** @public */
export const fleetPermissions = [
  fleetClusterCreatePermission,
  fleetClusterUpdatePermission,
  fleetClusterDeletePermission,
  fleetDeploymentCreatePermission,
  fleetHealthRunPermission,
];
