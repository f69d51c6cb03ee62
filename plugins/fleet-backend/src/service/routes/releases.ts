import { NotAllowedError } from '@backstage/errors';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import {
  fleetReleaseApprovePermission,
  fleetReleaseManagePermission,
} from '@cnp/plugin-fleet-common';
import { checkAnalysisProviders } from '../../progressive/AnalysisProviders';
import { checkAnalysisAddresses } from '../../progressive/prometheusAddress';
import { actorOf } from '../requirePermission';
import { releaseForCaller, RESTRICTED_RELEASE_VIEW } from '../envVisibility';
import { sendJson } from '../sendJson';
import {
  applicationIdOr404,
  parseApproval,
  parsePathNameOr404,
  parseRejection,
  parseRelease,
} from '../validation';
import { parseOpenReleasesQuery, parsePageQuery } from '../queryValidation';
import type { FleetRouter, RouteContext } from '../routeContext';
import { authorOf } from '../../stages/gates';

/** Fleet releases: start one for an application, list and read them, steer one. */
export function registerReleaseRoutes(
  router: FleetRouter,
  ctx: RouteContext,
): void {
  createRelease(router, ctx);
  listReleases(router, ctx);
  listOpenReleases(router, ctx);
  getRelease(router, ctx);
  steerRelease(router, ctx);
  decideRelease(router, ctx);
}

/** `POST /applications/:id/releases` (`fleet.release.manage`). */
function createRelease(router: FleetRouter, ctx: RouteContext) {
  const {
    stores,
    releases,
    tenancy,
    allowedPrometheusAddresses = [],
    analysisProviders = ['prometheus'],
  } = ctx.options;
  const { checkClusters, applicationWrite } = ctx;
  router.post('/applications/:id/releases', async (req, res) => {
    const release = await applicationWrite(
      req,
      'release-create',
      fleetReleaseManagePermission,
      async ({ id, application: existing, credentials }) => {
        const asked = parseRelease(req.body);
        checkAnalysisProviders(asked.strategy, analysisProviders);
        checkAnalysisAddresses(asked.strategy, allowedPrometheusAddresses);
        // A release to a stage goes to the stage's clusters, with the version its required
        // stage verified: checked here, before the tenancy and cluster checks of its targets.
        const body = await releases.planStage(id, asked);
        const targets =
          body.clusters ??
          (await stores.deployments.listDeployments({ applicationId: id }))
            .filter(d => d.placed && d.status !== 'REMOVING')
            .map(d => d.cluster);
        await tenancy.workload({
          entityRef: existing.entityRef,
          clusters: targets,
          spec: existing.spec,
          env: body.env,
        });
        await checkClusters(credentials, targets);
        return releases.release(id, body, actorOf(credentials));
      },
    );
    res.status(201).json(releaseForCaller(release, RESTRICTED_RELEASE_VIEW));
  });
}

/** `GET /applications/:id/releases`: paged. */
function listReleases(router: FleetRouter, ctx: RouteContext) {
  const { releases } = ctx.options;
  const { pages, releaseViewerOf } = ctx;
  router.get('/applications/:id/releases', async (req, res) => {
    const id = applicationIdOr404(req.params.id);
    const query = parsePageQuery('/applications/{id}/releases', req.query);
    const page = pages.read('releases', query, id);
    const items = await releases.listReleases(id, page);
    const viewer = await releaseViewerOf(
      req,
      items.map(r => r.entityRef),
    );
    sendJson(
      req,
      res,
      pages.answer(
        'releases',
        page,
        items,
        r => [r.createdAt, r.id],
        r => releaseForCaller(r, viewer),
        id,
      ),
    );
  });
}

/** `GET /releases/:id`. */
function getRelease(router: FleetRouter, ctx: RouteContext) {
  const { releases } = ctx.options;
  const { releaseViewerOf } = ctx;
  router.get('/releases/:id', async (req, res) => {
    const id = parsePathNameOr404('releaseId', req.params.id, 'Release');
    const release = await releases.getRelease(id);
    const viewer = await releaseViewerOf(req, [release.entityRef]);
    sendJson(req, res, releaseForCaller(release, viewer));
  });
}

/** `POST /releases/:id/{promote,pause,resume,abort}` (`fleet.release.manage`). */
function steerRelease(router: FleetRouter, ctx: RouteContext) {
  const { releases } = ctx.options;
  const { authorizedWrite } = ctx;
  for (const action of ['promote', 'pause', 'resume', 'abort'] as const) {
    router.post(`/releases/:id/${action}`, async (req, res) => {
      const id = parsePathNameOr404('releaseId', req.params.id, 'Release');
      const { entityRef } = await releases.getRelease(id);
      const release = await authorizedWrite(
        req,
        {
          eventId: `release-${action}`,
          meta: { releaseId: id, entityRef },
          permission: fleetReleaseManagePermission,
          resourceRef: entityRef,
        },
        async credentials => releases.steer(id, action, actorOf(credentials)),
      );
      res.json(releaseForCaller(release, RESTRICTED_RELEASE_VIEW));
    });
  }
}

/**
 * `GET /releases`: the fleet's releases in the statuses asked (the waiting ones by default), each
 * as the caller may see it.
 */
function listOpenReleases(router: FleetRouter, ctx: RouteContext) {
  const { releases } = ctx.options;
  const { releaseViewerOf } = ctx;
  router.get('/releases', async (req, res) => {
    const { statuses } = parseOpenReleasesQuery(req.query);
    const items = await releases.listOpenReleases(statuses);
    const viewer = await releaseViewerOf(
      req,
      items.map(r => r.entityRef),
    );
    sendJson(req, res, { items: items.map(r => releaseForCaller(r, viewer)) });
  });
}

/**
 * `POST /releases/:id/{approve,reject}` (`fleet.release.approve` on the component). Who may
 * decide besides the permission (the stage's groups, never the author for an approval) is the
 * release's rule, answered as a 403 that says why. A release whose stage names no approver
 * group (one a freeze window holds) is decided by those who may release the component
 * (`fleet.release.manage`): otherwise anyone signed in could override the freeze on it, or
 * withdraw it.
 */
function decideRelease(router: FleetRouter, ctx: RouteContext) {
  const { releases, deciderOf, permissions } = ctx.options;
  const { authorizedWrite } = ctx;
  for (const action of ['approve', 'reject'] as const) {
    router.post(`/releases/:id/${action}`, async (req, res) => {
      const id = parsePathNameOr404('releaseId', req.params.id, 'Release');
      const { entityRef, gate, createdBy } = await releases.getRelease(id);
      const release = await authorizedWrite(
        req,
        {
          eventId: `release-${action}`,
          meta: { releaseId: id, entityRef },
          permission: fleetReleaseApprovePermission,
          resourceRef: entityRef,
        },
        async credentials => {
          const decider = deciderOf
            ? await deciderOf(credentials)
            : { ref: actorOf(credentials), groups: [] };
          // Its author may always withdraw it (even once the component is gone).
          const withdrawing =
            action === 'reject' &&
            authorOf(createdBy) === authorOf(decider.ref);
          if (gate && !gate.approvals && !withdrawing) {
            const [decision] = await permissions.authorize(
              [
                {
                  permission: fleetReleaseManagePermission,
                  resourceRef: entityRef,
                },
              ],
              { credentials },
            );
            if (decision.result !== AuthorizeResult.ALLOW) {
              throw new NotAllowedError(
                `Only those who may release ${entityRef} may ${action} release '${id}': its stage names no approver group`,
              );
            }
          }
          const input =
            action === 'approve'
              ? parseApproval(req.body ?? {})
              : parseRejection(req.body ?? {});
          return action === 'approve'
            ? releases.approve(id, decider, input)
            : releases.reject(id, decider, input);
        },
      );
      res.json(releaseForCaller(release, RESTRICTED_RELEASE_VIEW));
    });
  }
}
