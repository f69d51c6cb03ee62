import {
  BackstageCredentials,
  HttpAuthService,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import { NotAllowedError } from '@backstage/errors';
import {
  AuthorizeResult,
  BasicPermission,
  type PolicyDecision,
  ResourcePermission,
} from '@backstage/plugin-permission-common';
import {
  fleetClusterDeployPermission,
  fleetClusterUpdatePermission,
} from '@cnp/plugin-fleet-common';
import type { Request } from 'express';
import type { ApiView } from './apiShapes';

/** Authenticates the caller and checks one permission; DENY becomes a 403. */
export async function requirePermission(
  options: { httpAuth: HttpAuthService; permissions: PermissionsService },
  req: Request,
  permission: BasicPermission | ResourcePermission,
  resourceRef?: string,
): Promise<BackstageCredentials> {
  const credentials = await options.httpAuth.credentials(req, {
    allow: ['user', 'service'],
  });
  const request =
    permission.type === 'resource'
      ? { permission, resourceRef }
      : { permission };
  const [decision] = await options.permissions.authorize([request as any], {
    credentials,
  });
  if (decision.result !== AuthorizeResult.ALLOW) {
    throw new NotAllowedError(`Not allowed: ${permission.name}`);
  }
  return credentials;
}

/**
 * Checks `fleet.cluster.deploy` on each named cluster for the caller, in one call; a denied
 * cluster is a 403 that names it (the component's permission was checked before).
 */
export async function requireClusterPermission(
  permissions: PermissionsService,
  credentials: BackstageCredentials,
  clusters: string[],
): Promise<void> {
  const names = [...new Set(clusters)];
  if (names.length === 0) return;
  const decisions = await permissions.authorize(
    names.map(resourceRef => ({
      permission: fleetClusterDeployPermission,
      resourceRef,
    })),
    { credentials },
  );
  const denied = names.filter(
    (_, i) => decisions[i]?.result !== AuthorizeResult.ALLOW,
  );
  if (denied.length) {
    throw new NotAllowedError(
      `Not allowed: ${fleetClusterDeployPermission.name} on cluster${
        denied.length === 1 ? '' : 's'
      } ${denied.map(n => `'${n}'`).join(', ')}`,
    );
  }
}

/**
 * The caller's decision on `fleet.cluster.deploy` for clusters in general (ALLOW, DENY, or the
 * policy's conditions on a cluster), kept with the application it registers, changes or deploys:
 * the reconcile places the application on the clusters a selector or the component's
 * annotations select with it, in the background, where no caller is there to ask.
 */
export async function placementGrantOf(
  permissions: PermissionsService,
  credentials: BackstageCredentials,
): Promise<{ decision: PolicyDecision; by: string }> {
  const [decision] = await permissions.authorizeConditional(
    [{ permission: fleetClusterDeployPermission }],
    { credentials },
  );
  return { decision, by: actorOf(credentials) };
}

/**
 * What a caller may see of kubeconfigs and of the host's errors: cluster admins, those allowed
 * `fleet.cluster.update`, see everything; others see no kubeconfigRef and a generic reason.
 * Services count as admins: the permissions service allows them everything, unless their token's
 * access restrictions say otherwise.
 */
export async function viewOfCaller(
  options: { httpAuth: HttpAuthService; permissions: PermissionsService },
  req: Request,
): Promise<ApiView> {
  const credentials = await options.httpAuth.credentials(req, {
    allow: ['user', 'service'],
  });
  const [decision] = await options.permissions.authorize(
    [{ permission: fleetClusterUpdatePermission }],
    { credentials },
  );
  return { clusterAdmin: decision.result === AuthorizeResult.ALLOW };
}

/**
 * A readable name for who made a change, for events: the user's entity ref (with the service
 * that acted on their behalf, e.g. the scaffolder), or the service's subject.
 */
export function actorOf(credentials: BackstageCredentials): string {
  const principal = credentials.principal as {
    type: string;
    userEntityRef?: string;
    subject?: string;
    actor?: { subject?: string };
  };
  if (principal.type === 'user' && principal.userEntityRef) {
    return principal.actor?.subject
      ? `${principal.userEntityRef} via ${principal.actor.subject}`
      : principal.userEntityRef;
  }
  if (principal.type === 'service' && principal.subject)
    return principal.subject;
  return principal.type;
}
