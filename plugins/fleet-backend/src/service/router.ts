import { InputError } from '@backstage/errors';
import express from 'express';
import { createOpenApiRouter } from '../schema/openapi';
import { createRouteContext } from './routeContext';
import type { RouterOptions } from './routerOptions';
import { registerClusterRoutes } from './routes/clusters';
import { registerHealthRoutes } from './routes/health';
import { registerApplicationRoutes } from './routes/applications';
import { registerReleaseRoutes } from './routes/releases';
import { registerDeploymentRoutes } from './routes/deployments';
import { registerFreezeWindowRoutes } from './routes/freezeWindows';
import { registerAnalysisProviderRoutes } from './routes/analysisProviders';

export type { RouterOptions, RouterStores } from './routerOptions';

/** Request bodies are small JSON documents; anything bigger is refused with 413. */
const MAX_BODY_KB = 64;

/**
 * The Fleet API: the auth and body middleware, then every resource's routes. Everything it
 * needs comes through its options.
 */
export async function createRouter(
  options: RouterOptions,
): Promise<express.Router> {
  const { httpAuth } = options;
  const ctx = createRouteContext(options);
  // Typed by the OpenAPI spec (src/schema/openapi.yaml): a route, parameter or answer the spec
  // does not describe fails to compile, and the spec is served at /openapi.json. Requests are
  // validated by the spec too, but not by this router's validator middleware: it would run in
  // front of the routes, before authentication and the permission check (a caller who may not
  // write must get 403, not a 400 describing the schema), and its error handler turns every
  // error, a 401 or 413 included, into a 400. Each route instead checks its query and body with
  // the spec's schemas compiled by ./specValidation, after its permission check (./validation).
  const router = await createOpenApiRouter({
    // No body parser in front: bodies are parsed below, for authenticated callers only.
    middleware: [(_req, _res, next) => next()],
    // Authentication is the httpAuth service's (below), not the validator's.
    validatorOptions: {
      validateRequests: false,
      validateResponses: false,
      validateSecurity: false,
      // With nothing validated here, the validator's route lookup is work for nothing: it compiles
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

  // The routes, one file a resource (./routes), all sharing one context: the options and the
  // helpers made from them once. Express matches in registration order; no two of these paths
  // overlap, and each path's methods keep their order.
  registerClusterRoutes(router, ctx);
  registerHealthRoutes(router, ctx);
  registerApplicationRoutes(router, ctx);
  registerReleaseRoutes(router, ctx);
  registerDeploymentRoutes(router, ctx);
  registerFreezeWindowRoutes(router, ctx);
  registerAnalysisProviderRoutes(router, ctx);

  return router;
}
