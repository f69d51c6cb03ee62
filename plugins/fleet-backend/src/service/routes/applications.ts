import { InputError, NotAllowedError } from '@backstage/errors';
import { stageChangeRefusal } from '../../stages/gates';
import {
  fleetDeploymentCreatePermission,
  fleetDeploymentDeletePermission,
} from '@cnp/plugin-fleet-common';
import { normalizeEntityRef } from '../../catalog/entityRefs';
import { actorOf, placementGrantOf } from '../requirePermission';
import { hideApplicationEnv } from '../envVisibility';
import { applicationFleetStatus } from '../applicationStatus';
import { applicationETag, ifMatchVersions } from '../etags';
import { sendJson } from '../sendJson';
import {
  parseCreateApplication,
  parsePatchApplication,
  parsePreview,
  applicationIdOr404,
} from '../validation';
import { parseListQuery } from '../queryValidation';
import type { FleetRouter, RouteContext } from '../routeContext';

/** The applications: list, registration, reads, updates, their fleet status, stages and removal. */
export function registerApplicationRoutes(
  router: FleetRouter,
  ctx: RouteContext,
): void {
  listApplications(router, ctx);
  registerApplication(router, ctx);
  getApplication(router, ctx);
  updateApplication(router, ctx);
  getApplicationStatus(router, ctx);
  getApplicationStages(router, ctx);
  previewApplication(router, ctx);
  removeApplication(router, ctx);
}

/** `GET /applications`: paged; environment values plain only where the caller may deploy. */
function listApplications(router: FleetRouter, ctx: RouteContext) {
  const { stores } = ctx.options;
  const { pages, deployableBy } = ctx;
  router.get('/applications', async (req, res) => {
    const query = parseListQuery('/applications', req.query);
    const entityRef = query.entityRef
      ? normalizeEntityRef(query.entityRef)
      : undefined;
    const page = pages.read('applications', query);
    const applications = await stores.applications.listApplications({
      entityRef,
      page,
    });
    const mayDeploy = await deployableBy(
      req,
      applications.map(a => a.entityRef),
    );
    sendJson(
      req,
      res,
      pages.answer(
        'applications',
        page,
        applications,
        a => [a.entityRef],
        a => (mayDeploy.has(a.entityRef) ? a : hideApplicationEnv(a)),
      ),
    );
  });
}

/** `POST /applications` (`fleet.deployment.create` on the component). */
function registerApplication(router: FleetRouter, ctx: RouteContext) {
  const { permissions, logger, deployments, tenancy } = ctx.options;
  const { checkClusters, authorizedWrite, writeTarget } = ctx;
  router.post('/applications', async (req, res) => {
    const entityRef = writeTarget(req.body, 'application');
    const application = await authorizedWrite(
      req,
      {
        eventId: 'application-register',
        meta: { entityRef },
        permission: fleetDeploymentCreatePermission,
        resourceRef: entityRef,
      },
      async credentials => {
        const body = parseCreateApplication(req.body);
        await tenancy.application({
          entityRef,
          spec: body.spec,
          placement: body.placement,
        });
        await checkClusters(credentials, body.placement?.clusters ?? []);
        const registered = await deployments.registerApplication({
          ...body,
          entityRef,
          placementGrant: await placementGrantOf(permissions, credentials),
        });
        const actor = actorOf(credentials);
        logger.info(
          `Application ${registered.id} registered for ${entityRef} (${
            registered.origin ?? 'no origin'
          }) by ${actor}`,
          { application: registered.id, entityRef, actor },
        );
        return registered;
      },
    );
    res.status(201).json(application);
  });
}

/** `GET /applications/:id`, with its version as ETag. */
function getApplication(router: FleetRouter, ctx: RouteContext) {
  const { deployableBy, getApplicationOr404 } = ctx;
  router.get('/applications/:id', async (req, res) => {
    const id = applicationIdOr404(req.params.id);
    const application = await getApplicationOr404(id);
    const mayDeploy = await deployableBy(req, [application.entityRef]);
    res.set('ETag', applicationETag(application));
    // The ETag is the version, for If-Match; the answer also holds what changes without a new
    // version (the clusters the reconcile refused, whether it is being removed, which
    // environment values the caller may read), so it is never answered with a 304.
    res.set('Cache-Control', 'no-cache');
    delete req.headers['if-none-match'];
    delete req.headers['if-modified-since'];
    sendJson(
      req,
      res,
      mayDeploy.has(application.entityRef)
        ? application
        : hideApplicationEnv(application),
    );
  });
}

/** `PATCH /applications/:id`, If-Match on its version. */
function updateApplication(router: FleetRouter, ctx: RouteContext) {
  const { permissions, logger, deployments, tenancy, deciderOf } = ctx.options;
  const { authorize, checkClusters, audited, getApplicationOr404 } = ctx;
  router.patch('/applications/:id', async (req, res) => {
    const id = applicationIdOr404(req.params.id);
    const ifMatch = ifMatchVersions(req.get('If-Match'));
    const updated = await audited(
      req,
      'application-update',
      { applicationId: id },
      async () => {
        const application = await getApplicationOr404(id);
        const credentials = await authorize(
          req,
          fleetDeploymentCreatePermission,
          application.entityRef,
        );
        const body = parsePatchApplication(req.body);
        // Stages that require approvals are changed by their approvers, not by the owners they
        // hold back.
        const refused = stageChangeRefusal({
          entityRef: application.entityRef,
          current: application.spec.stages,
          next: body.spec?.stages,
          decider: deciderOf
            ? await deciderOf(credentials)
            : { ref: actorOf(credentials), groups: [] },
        });
        if (refused) throw new NotAllowedError(refused);
        await tenancy.application({
          entityRef: application.entityRef,
          applicationId: id,
          spec: body.spec
            ? { ...application.spec, ...body.spec }
            : application.spec,
          placement: body.placement,
        });
        // Only the clusters a placement adds: keeping a cluster it already named needs nothing.
        const before = new Set(application.placement.clusters ?? []);
        await checkClusters(
          credentials,
          (body.placement?.clusters ?? []).filter(name => !before.has(name)),
        );
        // Whoever sets the placement decides where the reconcile may take it: a change of the
        // spec alone keeps the placement's author and their decision.
        const grant =
          body.placement !== undefined
            ? await placementGrantOf(permissions, credentials)
            : undefined;
        const result = await deployments.updateApplication(
          id,
          { ...body, placementGrant: grant },
          ifMatch,
        );
        const actor = actorOf(credentials);
        logger.info(
          `Application ${id} of ${application.entityRef} updated by ${actor}`,
          { application: id, entityRef: application.entityRef, actor },
        );
        return result;
      },
    );
    res.set('ETag', applicationETag(updated));
    res.json(updated);
  });
}

/**
 * `GET /applications/:id/stages`: the application's stages, what each runs and verified, and
 * what keeps each from taking its required stage's version. Read like its status.
 */
function getApplicationStages(router: FleetRouter, ctx: RouteContext) {
  const { releases } = ctx.options;
  const { getApplicationOr404 } = ctx;
  router.get('/applications/:id/stages', async (req, res) => {
    const id = applicationIdOr404(req.params.id);
    await getApplicationOr404(id);
    sendJson(req, res, { items: await releases.listStages(id) });
  });
}

/** `GET /applications/:id/status`: where the application runs across the fleet. */
function getApplicationStatus(router: FleetRouter, ctx: RouteContext) {
  const { stores } = ctx.options;
  const { getApplicationOr404 } = ctx;
  router.get('/applications/:id/status', async (req, res) => {
    const id = applicationIdOr404(req.params.id);
    const application = await getApplicationOr404(id);
    const current = await stores.deployments.listDeployments({
      applicationId: id,
    });
    sendJson(req, res, applicationFleetStatus(application, current));
  });
}

/**
 * `POST /applications/:id/preview` (`fleet.deployment.create`): what a deploy or release would
 * change on each cluster (the named ones, else those the application is deployed to, else those
 * its placement names), by a server-side dry run. Nothing is written.
 */
function previewApplication(router: FleetRouter, ctx: RouteContext) {
  const { deployments, stores, tenancy } = ctx.options;
  const { applicationWrite, checkClusters } = ctx;
  router.post('/applications/:id/preview', async (req, res) => {
    const preview = await applicationWrite(
      req,
      'application-preview',
      fleetDeploymentCreatePermission,
      async ({ id, application, credentials }) => {
        const body = parsePreview(req.body);
        const names = body.clusters ?? [
          ...new Set(
            (await stores.deployments.listDeployments({ applicationId: id }))
              .filter(d => d.status !== 'REMOVING')
              .map(d => d.cluster),
          ),
        ];
        const targets =
          names.length > 0 ? names : application.placement?.clusters ?? [];
        if (targets.length === 0) {
          throw new InputError(
            `Invalid preview: ${application.entityRef} is deployed nowhere and its placement names no cluster; name 'clusters'`,
          );
        }
        const clusters = await Promise.all(
          targets.map(async name => {
            const cluster = await stores.clusters.getCluster(name);
            if (!cluster) {
              throw new InputError(
                `Invalid preview: unknown cluster '${name}'`,
              );
            }
            return cluster;
          }),
        );
        // A dry run reads the clusters as a deploy would: within the same project rules.
        await tenancy.workload({
          entityRef: application.entityRef,
          clusters: targets,
          spec: application.spec,
        });
        await checkClusters(credentials, targets);
        return deployments.preview({
          application,
          clusters,
          request: {
            image: body.image,
            replicas: body.replicas,
            version: body.version,
          },
        });
      },
    );
    sendJson(req, res, preview);
  });
}

/** `DELETE /applications/:id` (`fleet.deployment.delete`). */
function removeApplication(router: FleetRouter, ctx: RouteContext) {
  const { deployments, releases } = ctx.options;
  const { applicationWrite } = ctx;
  router.delete('/applications/:id', async (req, res) => {
    const application = await applicationWrite(
      req,
      'application-delete',
      fleetDeploymentDeletePermission,
      async ({ id, credentials }) => {
        const removed = await deployments.removeApplication(
          id,
          actorOf(credentials),
        );
        // Nothing may start its waiting releases any more.
        await releases.withdrawWaiting(id, actorOf(credentials));
        return removed;
      },
    );
    res.status(202).json(application);
  });
}
