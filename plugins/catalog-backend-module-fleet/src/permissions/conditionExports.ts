import { permissionRules as catalogPermissionRules } from '@backstage/plugin-catalog-backend/alpha';
import { catalogEntityPermissionResourceRef } from '@backstage/plugin-catalog-node/alpha';
import { createConditionExports } from '@backstage/plugin-permission-node';
import { isFleetDeployable } from './rules';

/**
 * The rules a policy can combine in a conditional decision on `fleet.deployment.create`, a
 * resource permission on the catalog entity being deployed. They are catalog rules: the catalog
 * evaluates them against the entity (`isFleetDeployable` is registered there by the Fleet catalog
 * module).
 *
 * @public
 */
export const fleetDeploymentPermissionRules = {
  isEntityOwner: catalogPermissionRules.isEntityOwner,
  isEntityKind: catalogPermissionRules.isEntityKind,
  hasAnnotation: catalogPermissionRules.hasAnnotation,
  hasLabel: catalogPermissionRules.hasLabel,
  isFleetDeployable,
};

const { conditions, createConditionalDecision } = createConditionExports({
  resourceRef: catalogEntityPermissionResourceRef,
  rules: fleetDeploymentPermissionRules,
});

/**
 * Conditions for policies on `fleet.deployment.create`, e.g.
 * `fleetDeploymentConditions.isEntityOwner({ claims: user.identity.ownershipEntityRefs })`.
 *
 * @public
 */
export const fleetDeploymentConditions = conditions;

/**
 * Builds the conditional decision a policy returns for `fleet.deployment.create`:
 *
 * ```ts
 * if (isPermission(request.permission, fleetDeploymentCreatePermission)) {
 *   return createFleetDeploymentConditionalDecision(request.permission, {
 *     anyOf: [fleetDeploymentConditions.isEntityOwner({ claims: user.identity.ownershipEntityRefs })],
 *   });
 * }
 * ```
 *
 * @public
 */
export const createFleetDeploymentConditionalDecision =
  createConditionalDecision;
