import {
  AuthorizeResult,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import {
  createConditionAuthorizer,
  type PermissionRuleset,
} from '@backstage/plugin-permission-node';
import {
  FLEET_CLUSTER_PERMISSION_RESOURCE_TYPE,
  fleetClusterDeployPermission,
  type Cluster,
} from '@cnp/plugin-fleet-common';
import type { PlacementGrant } from '../database/types';

/** The cluster as the `fleet.cluster.deploy` rules see it. */
export type GatedCluster = Pick<Cluster, 'name' | 'labels'>;

/**
 * Whether the reconcile may place an application on a cluster, with the `fleet.cluster.deploy`
 * decision of the user who last registered, changed or deployed it: undefined when it may, else
 * the reason it may not (shown on the application).
 */
export type PlacementGate = (
  grant: PlacementGrant | undefined,
  cluster: GatedCluster,
) => string | undefined;

/**
 * A gate that evaluates recorded decisions with the cluster rules the plugin registered: ALLOW
 * places anywhere, DENY nowhere, a conditional decision (e.g. "clusters whose
 * `cnp.io/allowed-groups` names one of the user's groups") on the clusters that satisfy it, read
 * with their labels as they are now. Without a recorded decision nothing is placed: no user has
 * said where the application may go.
 */
export function createPlacementGate(
  ruleset: PermissionRuleset<GatedCluster>,
): PlacementGate {
  const authorize = createConditionAuthorizer<GatedCluster>(ruleset);
  const permission = fleetClusterDeployPermission.name;
  return (grant, cluster) => {
    if (!grant) {
      return `No user has allowed it yet: the placement acts on the ${permission} decision of the last user to register, change or deploy the application`;
    }
    const { decision, by } = grant;
    if (
      decision.result === AuthorizeResult.CONDITIONAL &&
      decision.resourceType !== FLEET_CLUSTER_PERMISSION_RESOURCE_TYPE
    ) {
      return `The recorded ${permission} decision of ${by} is not about clusters; change or deploy the application again`;
    }
    let allowed: boolean;
    try {
      allowed = authorize(decision as PolicyDecision, cluster);
    } catch (error) {
      return `The recorded ${permission} decision of ${by} cannot be evaluated (${
        (error as Error).message
      }); change or deploy the application again`;
    }
    return allowed ? undefined : `Not allowed: ${permission} for ${by}`;
  };
}
