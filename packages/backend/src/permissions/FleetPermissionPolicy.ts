import {
  coreServices,
  createBackendModule,
  UserInfoService,
} from '@backstage/backend-plugin-api';
import { parseEntityRef, stringifyEntityRef } from '@backstage/catalog-model';
import { Config } from '@backstage/config';
import {
  AuthorizeResult,
  isPermission,
  PolicyDecision,
} from '@backstage/plugin-permission-common';
import {
  PermissionPolicy,
  PolicyQuery,
  PolicyQueryUser,
} from '@backstage/plugin-permission-node';
import { policyExtensionPoint } from '@backstage/plugin-permission-node/alpha';
import {
  createFleetDeploymentConditionalDecision,
  fleetDeploymentConditions,
} from '@cnp/plugin-catalog-backend-module-fleet';
import {
  createFleetClusterConditionalDecision,
  fleetClusterConditions,
} from '@cnp/plugin-fleet-node';
import {
  FLEET_ANNOTATION_DEPLOYERS,
  fleetClusterCreatePermission,
  fleetClusterDeployPermission,
  fleetClusterDeletePermission,
  fleetClusterUpdatePermission,
  fleetDeploymentCreatePermission,
  fleetDeploymentDeletePermission,
  fleetHealthRunPermission,
  fleetReleaseManagePermission,
} from '@cnp/plugin-fleet-common';
import { toError } from '@backstage/errors';

/** What a component's owners (and the deployers) may do to it: deploy, undeploy, release. */
const FLEET_ENTITY_PERMISSIONS = [
  fleetDeploymentCreatePermission,
  fleetDeploymentDeletePermission,
  fleetReleaseManagePermission,
];

const FLEET_ADMIN_PERMISSIONS = [
  fleetClusterCreatePermission,
  fleetClusterUpdatePermission,
  fleetClusterDeletePermission,
  fleetHealthRunPermission,
];

function normalizeRefs(refs: string[] | undefined, key: string): string[] {
  return (refs ?? []).map(ref => {
    try {
      return stringifyEntityRef(
        parseEntityRef(ref, {
          defaultKind: 'group',
          defaultNamespace: 'default',
        }),
      ).toLocaleLowerCase('en-US');
    } catch (error) {
      throw new Error(
        `Invalid config value ${key}: '${ref}': ${toError(error).message}`,
      );
    }
  });
}

/**
 * This app's permission policy (see "Permissions" in the README):
 *
 * - `fleet.deployment.create` (deploying a component, registering or changing its application,
 *   rolling back), `fleet.deployment.delete` (undeploying it) and `fleet.release.manage` are
 *   conditional: allowed when the user owns the component (the catalog's `IS_ENTITY_OWNER`
 *   rule, evaluated by the catalog), or, for members of a group in `fleet.permissions.deployers`,
 *   when the component's `cnp.io/deployers` annotation names that group (the catalog says so:
 *   a component that is not in the catalog, or does not name the group, is refused);
 * - `fleet.cluster.create` / `update` / `delete` and `fleet.health.run` are allowed to the members
 *   of `fleet.permissions.clusterAdmins` only, and to nobody while it lists no group (fail closed:
 *   cluster labels decide placement and a failure threshold decides outages, so they are not
 *   every user's to change);
 * - `fleet.cluster.deploy` (putting workloads on a cluster, checked besides the component's
 *   permission) is allowed to the cluster admins, and otherwise conditional: allowed on a cluster
 *   without a `cnp.io/allowed-groups` label, or when the user is in a group it names;
 * - everything else is allowed.
 *
 * Service principals (plugins, static tokens) never reach a policy: the permission framework
 * allows them within their configured `accessRestrictions`.
 */
export class FleetPermissionPolicy implements PermissionPolicy {
  private constructor(
    private readonly userInfo: UserInfoService,
    private readonly deployers: string[],
    private readonly clusterAdmins: string[],
  ) {}

  static fromConfig(
    config: Config,
    deps: { userInfo: UserInfoService },
  ): FleetPermissionPolicy {
    return new FleetPermissionPolicy(
      deps.userInfo,
      normalizeRefs(
        config.getOptionalStringArray('fleet.permissions.deployers'),
        'fleet.permissions.deployers',
      ),
      normalizeRefs(
        config.getOptionalStringArray('fleet.permissions.clusterAdmins'),
        'fleet.permissions.clusterAdmins',
      ),
    );
  }

  async handle(
    request: PolicyQuery,
    user?: PolicyQueryUser,
  ): Promise<PolicyDecision> {
    const isFleetAdminPermission = FLEET_ADMIN_PERMISSIONS.some(p =>
      isPermission(request.permission, p),
    );
    const isClusterDeploy = isPermission(
      request.permission,
      fleetClusterDeployPermission,
    );
    const entityPermission = FLEET_ENTITY_PERMISSIONS.find(p =>
      isPermission(request.permission, p),
    );
    if (!isFleetAdminPermission && !entityPermission && !isClusterDeploy) {
      return { result: AuthorizeResult.ALLOW };
    }
    if (!user) {
      return { result: AuthorizeResult.DENY };
    }
    const { ownershipEntityRefs } = await this.userInfo.getUserInfo(
      user.credentials,
    );
    const claims = ownershipEntityRefs.map(ref =>
      ref.toLocaleLowerCase('en-US'),
    );
    const memberOf = (groups: string[]) =>
      groups.some(group => claims.includes(group));

    if (isClusterDeploy) {
      if (memberOf(this.clusterAdmins))
        return { result: AuthorizeResult.ALLOW };
      return createFleetClusterConditionalDecision(
        request.permission as typeof fleetClusterDeployPermission,
        fleetClusterConditions.allowsGroup({ claims: ownershipEntityRefs }),
      );
    }
    if (isFleetAdminPermission) {
      return {
        result: memberOf(this.clusterAdmins)
          ? AuthorizeResult.ALLOW
          : AuthorizeResult.DENY,
      };
    }
    const owner = fleetDeploymentConditions.isEntityOwner({
      claims: ownershipEntityRefs,
    });
    // A deployer group's members also deploy the components whose catalog entry names their
    // group: the catalog says so, so nobody pre-registers someone else's component (or one that
    // is not in the catalog) with their own image.
    const deployerGroups = this.deployers.filter(group =>
      claims.includes(group),
    );
    if (deployerGroups.length > 0) {
      return createFleetDeploymentConditionalDecision(entityPermission!, {
        anyOf: [
          owner,
          ...deployerGroups.map(group =>
            fleetDeploymentConditions.hasAnnotation({
              annotation: FLEET_ANNOTATION_DEPLOYERS,
              value: group,
            }),
          ),
        ],
      });
    }
    return createFleetDeploymentConditionalDecision(entityPermission!, owner);
  }
}

/** Installs {@link FleetPermissionPolicy} as the app's permission policy. */
export const permissionModuleFleetPolicy = createBackendModule({
  pluginId: 'permission',
  moduleId: 'fleet-policy',
  register(reg) {
    reg.registerInit({
      deps: {
        policy: policyExtensionPoint,
        config: coreServices.rootConfig,
        userInfo: coreServices.userInfo,
      },
      async init({ policy, config, userInfo }) {
        policy.setPolicy(
          FleetPermissionPolicy.fromConfig(config, { userInfo }),
        );
      },
    });
  },
});
