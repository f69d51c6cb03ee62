import {
  coreServices,
  createBackendModule,
} from '@backstage/backend-plugin-api';
import { parseEntityRef, stringifyEntityRef } from '@backstage/catalog-model';
import { Config, readDurationFromConfig } from '@backstage/config';
import { catalogServiceRef } from '@backstage/plugin-catalog-node';
import { durationToMilliseconds } from '@backstage/types';
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
import { kubernetesProxyPermission } from '@backstage/plugin-kubernetes-common';
import { CatalogGroupResolver } from './CatalogGroupResolver';

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
 * This app's permission policy (see docs/permissions.md):
 *
 * - `fleet.deployment.create` (deploying a component, registering or changing its application,
 *   rolling back), `fleet.deployment.delete` (undeploying it) and `fleet.release.manage` are
 *   conditional: allowed when the user owns the component (the catalog's `IS_ENTITY_OWNER`
 *   rule, evaluated by the catalog), or, for members of a group in `fleet.permissions.deployers`,
 *   when the component's `cnp.io/deployers` annotation names that group (the catalog says so:
 *   a component that is not in the catalog, or does not name the group, is refused);
 * - `fleet.cluster.create` / `update` / `delete`, `fleet.health.run` and the Kubernetes plugin's
 *   `kubernetes.proxy` (which acts with Fleet's kubeconfig credentials) are allowed to the members
 *   of `fleet.permissions.clusterAdmins` only, and to nobody while it lists no group (fail closed:
 *   cluster labels decide placement and a failure threshold decides outages, so they are not
 *   every user's to change);
 * - `fleet.cluster.deploy` (putting workloads on a cluster, checked besides the component's
 *   permission) is allowed to the cluster admins, and otherwise conditional: allowed on a cluster
 *   without a `cnp.io/allowed-groups` or `allowed-groups.cnp.io/<group>` label, or when the user
 *   is in a group they admit (one a label: dots belong to a group's name);
 * - everything else is allowed.
 *
 * Who is in which group is read from the catalog when the decision is made
 * ({@link CatalogGroupResolver}), not taken from the ownership claims in the user's token, so a
 * user who signed in before the catalog had read the org gets their rights as soon as it has.
 *
 * Service principals (plugins, static tokens) never reach a policy: the permission framework
 * allows them within their configured `accessRestrictions`.
 */
export class FleetPermissionPolicy implements PermissionPolicy {
  private constructor(
    private readonly groups: CatalogGroupResolver,
    private readonly deployers: string[],
    private readonly clusterAdmins: string[],
  ) {}

  static fromConfig(
    config: Config,
    deps: { groups: CatalogGroupResolver },
  ): FleetPermissionPolicy {
    return new FleetPermissionPolicy(
      deps.groups,
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
    // The Kubernetes plugin's proxy acts on a cluster with Fleet's own kubeconfig credentials
    // (pod logs, and the tab's delete-pod button): a cluster admin's, like Fleet's cluster writes.
    const isFleetAdminPermission =
      FLEET_ADMIN_PERMISSIONS.some(p => isPermission(request.permission, p)) ||
      isPermission(request.permission, kubernetesProxyPermission);
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
    // The user's groups as the catalog has them now, not as the token froze them at sign-in.
    const claims = await this.groups.claims(user.credentials);
    const memberOf = (groups: string[]) =>
      groups.some(group => claims.includes(group));

    if (isClusterDeploy) {
      if (memberOf(this.clusterAdmins))
        return { result: AuthorizeResult.ALLOW };
      return createFleetClusterConditionalDecision(
        request.permission as typeof fleetClusterDeployPermission,
        fleetClusterConditions.allowsGroup({ claims }),
      );
    }
    if (isFleetAdminPermission) {
      return {
        result: memberOf(this.clusterAdmins)
          ? AuthorizeResult.ALLOW
          : AuthorizeResult.DENY,
      };
    }
    const owner = fleetDeploymentConditions.isEntityOwner({ claims });
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
        auth: coreServices.auth,
        logger: coreServices.logger,
        catalog: catalogServiceRef,
      },
      async init({ policy, config, userInfo, auth, logger, catalog }) {
        const ttlKey = 'fleet.permissions.groupsCacheTtl';
        const groups = CatalogGroupResolver.create({
          catalog,
          auth,
          userInfo,
          logger,
          cacheTtlMs: config.has(ttlKey)
            ? durationToMilliseconds(
                readDurationFromConfig(config, { key: ttlKey }),
              )
            : undefined,
        });
        policy.setPolicy(FleetPermissionPolicy.fromConfig(config, { groups }));
      },
    });
  },
});
