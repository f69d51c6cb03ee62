import {
  fleetDeploymentCreatePermission,
  fleetDeploymentDeletePermission,
  type Deployment,
} from '@cnp/plugin-fleet-common';
import { normalizeEntityRef } from '../../catalog/entityRefs';
import {
  RESTRICTED_VIEW,
  type ApiView,
  toApiDeployment,
  toApiEvent,
  toApiRevision,
} from '../apiShapes';
import { actorOf, placementGrantOf } from '../requirePermission';
import { hideRevisionEnv } from '../envVisibility';
import { sendJson } from '../sendJson';
import {
  parseCreateDeployment,
  parsePathNameOr404,
  parseRollback,
} from '../validation';
import {
  parseListQuery,
  parsePageQuery,
  parseUndeployQuery,
} from '../queryValidation';
import type { FleetRouter, RouteContext } from '../routeContext';

/** A deployment as the API answers it: in the caller's view, with its rollout's deadline. */
function shown(ctx: RouteContext, deployment: Deployment, view: ApiView) {
  return toApiDeployment(deployment, view, ctx.options.progressDeadlineMs);
}

/** The deployments: list, deploy by hand, read, undeploy, revisions, rollback and events. */
export function registerDeploymentRoutes(
  router: FleetRouter,
  ctx: RouteContext,
): void {
  listDeployments(router, ctx);
  createDeployment(router, ctx);
  getDeployment(router, ctx);
  undeploy(router, ctx);
  listRevisions(router, ctx);
  rollback(router, ctx);
  listDeploymentEvents(router, ctx);
}

/** `GET /deployments`: paged, by component or cluster. */
function listDeployments(router: FleetRouter, ctx: RouteContext) {
  const { stores } = ctx.options;
  const { pages, viewOf } = ctx;
  router.get('/deployments', async (req, res) => {
    const query = parseListQuery('/deployments', req.query);
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
        d => shown(ctx, d, view),
      ),
    );
  });
}

/** `POST /deployments`: a deploy by hand to one cluster (`fleet.deployment.create`). */
function createDeployment(router: FleetRouter, ctx: RouteContext) {
  const { permissions, stores, deployments, releases, tenancy } = ctx.options;
  const { checkClusters, authorizedWrite, writeTarget, textField } = ctx;
  router.post('/deployments', async (req, res) => {
    const entityRef = writeTarget(req.body, 'deployment');
    const deployment = await authorizedWrite(
      req,
      {
        eventId: 'deployment-create',
        meta: { entityRef, cluster: textField(req.body, 'cluster') },
        permission: fleetDeploymentCreatePermission,
        resourceRef: entityRef,
      },
      async credentials => {
        const body = parseCreateDeployment(req.body);
        const application = await stores.applications.getApplicationByEntityRef(
          entityRef,
        );
        await tenancy.workload({
          entityRef,
          clusters: [body.cluster],
          spec: application?.spec,
        });
        await checkClusters(credentials, [body.cluster]);
        // A stage that requires another takes versions by releases only.
        if (application) {
          await releases.assertDirectDeploy(application, body.cluster);
        }
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
    res.status(201).json(shown(ctx, deployment, RESTRICTED_VIEW));
  });
}

/** `GET /deployments/:id`. */
function getDeployment(router: FleetRouter, ctx: RouteContext) {
  const { viewOf, getDeploymentOr404 } = ctx;
  router.get('/deployments/:id', async (req, res) => {
    const id = parsePathNameOr404('deploymentId', req.params.id, 'Deployment');
    const deployment = await getDeploymentOr404(id);
    sendJson(req, res, shown(ctx, deployment, await viewOf(req)));
  });
}

/** `DELETE /deployments/:id` (`fleet.deployment.delete`). */
function undeploy(router: FleetRouter, ctx: RouteContext) {
  const { deployments } = ctx.options;
  const { authorizedWrite, getDeploymentOr404 } = ctx;
  router.delete('/deployments/:id', async (req, res) => {
    const id = parsePathNameOr404('deploymentId', req.params.id, 'Deployment');
    const { force } = parseUndeployQuery(req.query);
    const existing = await getDeploymentOr404(id);
    const deployment = await authorizedWrite(
      req,
      {
        eventId: 'deployment-delete',
        meta: { deploymentId: id, force: force ?? false },
        permission: fleetDeploymentDeletePermission,
        resourceRef: existing.entityRef,
      },
      async credentials =>
        deployments.undeploy(id, { force }, actorOf(credentials)),
    );
    res.status(202).json(shown(ctx, deployment, RESTRICTED_VIEW));
  });
}

/** `GET /deployments/:id/revisions`: paged; environment values plain only where the caller may deploy. */
function listRevisions(router: FleetRouter, ctx: RouteContext) {
  const { stores } = ctx.options;
  const { pages, deployableBy, viewOf, getDeploymentOr404 } = ctx;
  router.get('/deployments/:id/revisions', async (req, res) => {
    const id = parsePathNameOr404('deploymentId', req.params.id, 'Deployment');
    const query = parsePageQuery('/deployments/{id}/revisions', req.query);
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
}

/** `POST /deployments/:id/rollback` (`fleet.deployment.create`). */
function rollback(router: FleetRouter, ctx: RouteContext) {
  const { stores, deployments, tenancy } = ctx.options;
  const { checkClusters, authorizedWrite, getDeploymentOr404 } = ctx;
  router.post('/deployments/:id/rollback', async (req, res) => {
    const id = parsePathNameOr404('deploymentId', req.params.id, 'Deployment');
    const existing = await getDeploymentOr404(id);
    const deployment = await authorizedWrite(
      req,
      {
        eventId: 'deployment-rollback',
        meta: { deploymentId: id },
        permission: fleetDeploymentCreatePermission,
        resourceRef: existing.entityRef,
      },
      async credentials => {
        const body = parseRollback(req.body ?? {});
        await tenancy.workload({
          entityRef: existing.entityRef,
          clusters: [existing.cluster],
          spec: (
            await stores.applications.getApplication(existing.applicationId)
          )?.spec,
        });
        await checkClusters(credentials, [existing.cluster]);
        return deployments.rollback({
          deploymentId: id,
          toRevision: body.toRevision,
          actor: actorOf(credentials),
        });
      },
    );
    res.status(201).json(shown(ctx, deployment, RESTRICTED_VIEW));
  });
}

/** `GET /deployments/:id/events`. */
function listDeploymentEvents(router: FleetRouter, ctx: RouteContext) {
  const { stores } = ctx.options;
  const { viewOf, getDeploymentOr404 } = ctx;
  router.get('/deployments/:id/events', async (req, res) => {
    const id = parsePathNameOr404('deploymentId', req.params.id, 'Deployment');
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
