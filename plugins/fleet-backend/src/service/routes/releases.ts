import { fleetReleaseManagePermission } from '@cnp/plugin-fleet-common';
import { checkAnalysisProviders } from '../../progressive/AnalysisProviders';
import { checkAnalysisAddresses } from '../../progressive/prometheusAddress';
import { actorOf } from '../requirePermission';
import { releaseForCaller, RESTRICTED_RELEASE_VIEW } from '../envVisibility';
import { sendJson } from '../sendJson';
import {
  applicationIdOr404,
  parsePathNameOr404,
  parseRelease,
} from '../validation';
import { parsePageQuery } from '../queryValidation';
import type { FleetRouter, RouteContext } from '../routeContext';

/** Fleet releases: start one for an application, list and read them, steer one. */
export function registerReleaseRoutes(
  router: FleetRouter,
  ctx: RouteContext,
): void {
  createRelease(router, ctx);
  listReleases(router, ctx);
  getRelease(router, ctx);
  steerRelease(router, ctx);
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
        const body = parseRelease(req.body);
        checkAnalysisProviders(body.strategy, analysisProviders);
        checkAnalysisAddresses(body.strategy, allowedPrometheusAddresses);
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
