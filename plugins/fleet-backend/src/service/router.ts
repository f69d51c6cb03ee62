import { InputError } from '@backstage/errors';
import {
  fleetDeploymentCreatePermission,
  fleetDeploymentDeletePermission,
} from '@cnp/plugin-fleet-common';
import express from 'express';
import { createOpenApiRouter } from '../schema/openapi';
import { normalizeEntityRef } from '../catalog/entityRefs';
import {
  RESTRICTED_VIEW,
  toApiDeployment,
  toApiEvent,
  toApiRevision,
} from './apiShapes';
import { actorOf, placementGrantOf } from './requirePermission';
import { hideRevisionEnv } from './envVisibility';
import { sendJson } from './sendJson';
import {
  createDeploymentSchema,
  deploymentListQuerySchema,
  pageQuerySchema,
  idSchema,
  parseOrThrow,
  parsePathNameOr404,
  rollbackSchema,
  undeployQuerySchema,
} from './validation';
import { createRouteContext } from './routeContext';
import type { RouterOptions } from './routerOptions';
import { registerClusterRoutes } from './routes/clusters';
import { registerHealthRoutes } from './routes/health';
import { registerApplicationRoutes } from './routes/applications';
import { registerReleaseRoutes } from './routes/releases';

export type { RouterOptions, RouterStores } from './routerOptions';

/** Request bodies are small JSON documents; anything bigger is refused with 413. */
const MAX_BODY_KB = 64;

export async function createRouter(
  options: RouterOptions,
): Promise<express.Router> {
  const { httpAuth, permissions, stores, deployments, tenancy } = options;
  const ctx = createRouteContext(options);
  const {
    pages,
    authorize,
    deployableBy,
    viewOf,
    checkClusters,
    audited,
    getDeploymentOr404,
    writeTarget,
    textField,
  } = ctx;
  // Typed by the OpenAPI spec (src/schema/openapi.yaml): a route, parameter or answer the spec
  // does not describe fails to compile, and the spec is served at /openapi.json. Requests are
  // checked by the zod schemas of ./validation, whose messages say what is wrong in a caller's
  // words; the spec states the same shapes for clients.
  const router = await createOpenApiRouter({
    // No body parser in front: bodies are parsed below, for authenticated callers only.
    middleware: [(_req, _res, next) => next()],
    // Authentication is the httpAuth service's (below), not the validator's.
    validatorOptions: {
      validateRequests: false,
      validateResponses: false,
      validateSecurity: false,
      // With nothing validated, the validator's route lookup is work for nothing: it compiles
      // every spec path's pattern until one matches, on every request (measured: ~0.1 ms of
      // the entity card's ~1.3 ms in the backend).
      ignorePaths: () => true,
    },
  });

  // Liveness answers without credentials (see the auth policy in plugin.ts), like Backstage's
  // own plugins; it says nothing about the fleet.
  router.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });

  // Every other route needs an authenticated principal, reads included. (The unauthenticated
  // auth policy on '/health' is a path prefix: it also lets anonymous calls reach '/health/run',
  // so the check here must not accept the 'none' principal.)
  router.use(async (req, _res, next) => {
    await httpAuth.credentials(req, { allow: ['user', 'service'] });
    next();
  });

  // Bodies are parsed only for authenticated callers.
  router.use(express.json({ limit: `${MAX_BODY_KB}kb` }));
  // Body parser errors, reworded: a JSON syntax error would otherwise quote the body back.
  router.use(
    (
      error: Error & { type?: string },
      _req: express.Request,
      _res: express.Response,
      next: express.NextFunction,
    ) => {
      if (error.type === 'entity.parse.failed') {
        next(new InputError('Invalid request body: not valid JSON'));
      } else if (error.type === 'entity.too.large') {
        next(
          Object.assign(
            new Error(`Request body larger than ${MAX_BODY_KB} kB`),
            { name: 'PayloadTooLargeError', statusCode: 413 },
          ),
        );
      } else {
        next(error);
      }
    },
  );

  registerClusterRoutes(router, ctx);
  registerHealthRoutes(router, ctx);
  registerApplicationRoutes(router, ctx);
  registerReleaseRoutes(router, ctx);

  router.get('/deployments', async (req, res) => {
    const query = parseOrThrow(deploymentListQuerySchema, req.query, 'query');
    const entityRef = query.entityRef
      ? normalizeEntityRef(query.entityRef)
      : undefined;
    const view = await viewOf(req);
    const page = pages.read('deployments', query);
    const found = await stores.deployments.listDeployments({
      entityRef,
      cluster: query.cluster,
      page,
    });
    sendJson(
      req,
      res,
      pages.answer(
        'deployments',
        page,
        found,
        d => [d.entityRef, d.cluster],
        d => toApiDeployment(d, view),
      ),
    );
  });

  router.post('/deployments', async (req, res) => {
    const entityRef = writeTarget(req.body, 'deployment');
    const deployment = await audited(
      req,
      'deployment-create',
      { entityRef, cluster: textField(req.body, 'cluster') },
      async () => {
        const credentials = await authorize(
          req,
          fleetDeploymentCreatePermission,
          entityRef,
        );
        const body = parseOrThrow(
          createDeploymentSchema,
          req.body,
          'deployment',
        );
        const application = await stores.applications.getApplicationByEntityRef(
          entityRef,
        );
        await tenancy.workload({
          entityRef,
          clusters: [body.cluster],
          spec: application?.spec,
        });
        await checkClusters(credentials, [body.cluster]);
        // A deploy by hand to one cluster says nothing about the placement, unless it creates
        // the application (from the component's annotations): then its author decides.
        const creates = !application;
        const grant = creates
          ? await placementGrantOf(permissions, credentials)
          : undefined;
        return deployments.deploy(
          { ...body, entityRef, placementGrant: grant },
          actorOf(credentials),
        );
      },
    );
    res.status(201).json(toApiDeployment(deployment, RESTRICTED_VIEW));
  });

  router.get('/deployments/:id', async (req, res) => {
    const id = parsePathNameOr404(idSchema, req.params.id, 'Deployment');
    const deployment = await getDeploymentOr404(id);
    sendJson(req, res, toApiDeployment(deployment, await viewOf(req)));
  });

  router.delete('/deployments/:id', async (req, res) => {
    const id = parsePathNameOr404(idSchema, req.params.id, 'Deployment');
    const { force } = parseOrThrow(undeployQuerySchema, req.query, 'query');
    const existing = await getDeploymentOr404(id);
    const deployment = await audited(
      req,
      'deployment-delete',
      { deploymentId: id, force: force ?? false },
      async () => {
        const credentials = await authorize(
          req,
          fleetDeploymentDeletePermission,
          existing.entityRef,
        );
        return deployments.undeploy(id, { force }, actorOf(credentials));
      },
    );
    res.status(202).json(toApiDeployment(deployment, RESTRICTED_VIEW));
  });

  router.get('/deployments/:id/revisions', async (req, res) => {
    const id = parsePathNameOr404(idSchema, req.params.id, 'Deployment');
    const query = parseOrThrow(pageQuerySchema, req.query, 'query');
    const page = pages.read('revisions', query, id);
    const deployment = await getDeploymentOr404(id);
    const [view, mayDeploy] = await Promise.all([
      viewOf(req),
      deployableBy(req, [deployment.entityRef]),
    ]);
    const revisions = await stores.revisions.listRevisions(id, page);
    sendJson(
      req,
      res,
      pages.answer(
        'revisions',
        page,
        revisions,
        r => [String(r.revision)],
        r =>
          toApiRevision(
            mayDeploy.has(deployment.entityRef) ? r : hideRevisionEnv(r),
            view,
          ),
        id,
      ),
    );
  });

  router.post('/deployments/:id/rollback', async (req, res) => {
    const id = parsePathNameOr404(idSchema, req.params.id, 'Deployment');
    const existing = await getDeploymentOr404(id);
    const deployment = await audited(
      req,
      'deployment-rollback',
      { deploymentId: id },
      async () => {
        const credentials = await authorize(
          req,
          fleetDeploymentCreatePermission,
          existing.entityRef,
        );
        const body = parseOrThrow(rollbackSchema, req.body ?? {}, 'rollback');
        await tenancy.workload({
          entityRef: existing.entityRef,
          clusters: [existing.cluster],
          spec: (
            await stores.applications.getApplication(existing.applicationId)
          )?.spec,
        });
        await checkClusters(credentials, [existing.cluster]);
        return deployments.rollback(id, body.toRevision, actorOf(credentials));
      },
    );
    res.status(201).json(toApiDeployment(deployment, RESTRICTED_VIEW));
  });

  router.get('/deployments/:id/events', async (req, res) => {
    const id = parsePathNameOr404(idSchema, req.params.id, 'Deployment');
    await getDeploymentOr404(id);
    const view = await viewOf(req);
    sendJson(req, res, {
      items: (
        await stores.events.listEvents({
          subjectKind: 'deployment',
          subject: id,
        })
      ).map(e => toApiEvent(e, view)),
    });
  });

  return router;
}
