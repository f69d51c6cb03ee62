import { AuthorizeResult } from '@backstage/plugin-permission-common';
import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import type { ApiRouter } from '@backstage/backend-openapi-utils';
import type { JsonObject } from '@backstage/types';
import { InputError, NotFoundError } from '@backstage/errors';
import {
  fleetDeploymentCreatePermission,
  type Application,
  type Deployment,
} from '@cnp/plugin-fleet-common';
import type express from 'express';
import { randomBytes } from 'node:crypto';
import type { spec } from '../schema/openapi';
import { normalizeEntityRef } from '../catalog/entityRefs';
import type { ClusterRecord } from '../database/types';
import { asError } from '../util/errors';
import type { ApiView } from './apiShapes';
import type { ReleaseViewer } from './envVisibility';
import { PageCursors } from './paging';
import {
  requireClusterPermission,
  requirePermission,
  viewOfCaller,
} from './requirePermission';
import type { RouterOptions } from './routerOptions';
import {
  applicationIdOr404,
  parseOrThrow,
  parsePathNameOr404,
  writeTargetSchema,
} from './validation';

type Permission = Parameters<typeof requirePermission>[2];

/** An audited write and the permission it needs. */
export type AuthorizedWrite = {
  eventId: string;
  meta: JsonObject;
  permission: Permission;
  /** The entity the permission is checked on, for a permission on an entity. */
  resourceRef?: string;
};

/** The router the routes are registered on, typed by the OpenAPI spec (paths, parameters, answers). */
export type FleetRouter = ApiRouter<typeof spec>;

/** What every route file shares: the router's options and the helpers made from them once. */
export type RouteContext = {
  options: RouterOptions;
  /** Signs and reads list cursors. */
  pages: PageCursors;
  /** Authenticates the caller and checks one permission (on `resourceRef` for an entity's). */
  authorize(
    req: express.Request,
    permission: Permission,
    resourceRef?: string,
  ): Promise<BackstageCredentials>;
  /**
   * The entities among `entityRefs` the caller may deploy (`fleet.deployment.create`, one
   * batched decision): only they see plain environment values.
   */
  deployableBy(
    req: express.Request,
    entityRefs: string[],
  ): Promise<Set<string>>;
  /** What the caller may see of kubeconfigs and host errors: asked once per request. */
  viewOf(req: express.Request): Promise<ApiView>;
  /** What the caller may see of releases of these components (see releaseForCaller). */
  releaseViewerOf(
    req: express.Request,
    entityRefs: string[],
  ): Promise<ReleaseViewer>;
  /**
   * `fleet.cluster.deploy` on the named clusters that exist: an unknown name is left to the
   * service's own 404 or 400 (the caller's mistake, not a refusal that would tell which names
   * exist).
   */
  checkClusters(
    credentials: BackstageCredentials,
    names: string[],
  ): Promise<void>;
  /** Runs a write as an audit event: who (from the request's credentials), what, and the outcome. */
  audited<T>(
    req: express.Request,
    eventId: string,
    meta: JsonObject,
    fn: () => Promise<T>,
  ): Promise<T>;
  /**
   * Runs a write as an audit event (see audited) once the caller holds `permission`, on
   * `resourceRef` for an entity's. The check runs within the event: a refusal is audited as a
   * failure like any other error.
   */
  authorizedWrite<T>(
    req: express.Request,
    write: AuthorizedWrite,
    fn: (credentials: BackstageCredentials) => Promise<T>,
  ): Promise<T>;
  /**
   * A write on the application the path's `:id` names (404 before anything else when none): an
   * audit event with its id and component, run once the caller holds `permission` on the
   * component.
   */
  applicationWrite<T>(
    req: express.Request,
    eventId: string,
    permission: Permission,
    fn: (write: {
      /** The id as the path gave it. */
      id: string;
      application: Application;
      credentials: BackstageCredentials;
    }) => Promise<T>,
  ): Promise<T>;
  getClusterOr404(rawName: string): Promise<ClusterRecord>;
  getApplicationOr404(id: string): Promise<Application>;
  getDeploymentOr404(id: string): Promise<Deployment>;
  /**
   * The component a write names, read alone before the permission check (which needs it); the
   * rest of the body is validated once the caller may write.
   */
  writeTarget(body: unknown, what: string): string;
  /** A body's text field for the audit record, before validation: short, or null. */
  textField(body: unknown, key: string): string | null;
};

/** The audited writes: each one audit event, with the permission checked within it. */
function createWrites(
  auditor: RouterOptions['auditor'],
  authorize: RouteContext['authorize'],
  getApplicationOr404: RouteContext['getApplicationOr404'],
): Pick<RouteContext, 'audited' | 'authorizedWrite' | 'applicationWrite'> {
  const audited: RouteContext['audited'] = async (req, eventId, meta, fn) => {
    const event = await auditor?.createEvent({
      eventId,
      severityLevel: 'medium',
      request: req,
      meta,
    });
    try {
      const result = await fn();
      await event?.success();
      return result;
    } catch (error) {
      await event?.fail({ error: asError(error) });
      throw error;
    }
  };
  const authorizedWrite: RouteContext['authorizedWrite'] = (req, write, fn) =>
    audited(req, write.eventId, write.meta, async () =>
      fn(await authorize(req, write.permission, write.resourceRef)),
    );
  return {
    audited,
    authorizedWrite,
    async applicationWrite(req, eventId, permission, fn) {
      const id = applicationIdOr404(req.params.id);
      const application = await getApplicationOr404(id);
      const { entityRef } = application;
      return authorizedWrite(
        req,
        {
          eventId,
          meta: { applicationId: id, entityRef },
          permission,
          resourceRef: entityRef,
        },
        credentials => fn({ id, application, credentials }),
      );
    },
  };
}

/** The helpers the routes share, made once per router from its options. */
export function createRouteContext(options: RouterOptions): RouteContext {
  const { httpAuth, permissions, stores, auditor } = options;
  const access = { httpAuth, permissions };

  const deployableBy = async (req: express.Request, entityRefs: string[]) => {
    const refs = [...new Set(entityRefs)];
    if (refs.length === 0) return new Set<string>();
    const credentials = await httpAuth.credentials(req);
    const decisions = await permissions.authorize(
      refs.map(resourceRef => ({
        permission: fleetDeploymentCreatePermission,
        resourceRef,
      })),
      { credentials },
    );
    return new Set(
      refs.filter((_, i) => decisions[i]?.result === AuthorizeResult.ALLOW),
    );
  };
  const viewOf = (req: express.Request) => viewOfCaller(access, req);

  const authorize: RouteContext['authorize'] = (req, permission, resourceRef) =>
    requirePermission(access, req, permission, resourceRef);
  const getApplicationOr404 = async (id: string) => {
    const application = await stores.applications.getApplication(id);
    if (!application) {
      throw new NotFoundError(`Application '${id}' not found`);
    }
    return application;
  };

  return {
    options,
    pages: PageCursors.create(options.cursorKey ?? randomBytes(32)),
    authorize,
    deployableBy,
    viewOf,
    async releaseViewerOf(req, entityRefs) {
      const [mayDeploy, view] = await Promise.all([
        deployableBy(req, entityRefs),
        viewOf(req),
      ]);
      return {
        clusterAdmin: view.clusterAdmin,
        mayDeploy: ref => mayDeploy.has(ref),
      };
    },
    async checkClusters(credentials, names) {
      const known = await Promise.all(
        [...new Set(names)].map(async name =>
          (await stores.clusters.getCluster(name)) ? name : undefined,
        ),
      );
      await requireClusterPermission(
        permissions,
        credentials,
        known.filter((name): name is string => name !== undefined),
      );
    },
    ...createWrites(auditor, authorize, getApplicationOr404),
    async getClusterOr404(rawName) {
      const name = parsePathNameOr404('clusterName', rawName, 'Cluster');
      const cluster = await stores.clusters.getCluster(name);
      if (!cluster) throw new NotFoundError(`Cluster '${name}' not found`);
      return cluster;
    },
    getApplicationOr404,
    async getDeploymentOr404(id) {
      const deployment = await stores.deployments.getDeployment(id);
      if (!deployment) throw new NotFoundError(`Deployment '${id}' not found`);
      return deployment;
    },
    writeTarget(body, what) {
      const { entityRef } = parseOrThrow(writeTargetSchema, body ?? {}, what);
      if (entityRef === undefined) {
        throw new InputError(`Invalid ${what}: entityRef is required`);
      }
      return normalizeEntityRef(entityRef);
    },
    textField(body, key) {
      const value = (body as Record<string, unknown> | undefined)?.[key];
      return typeof value === 'string' ? value.slice(0, 253) : null;
    },
  };
}
