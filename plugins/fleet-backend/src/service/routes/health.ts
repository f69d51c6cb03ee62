import {
  fleetHealthRunPermission,
  type FleetSummary,
} from '@cnp/plugin-fleet-common';
import { toApiEvent } from '../apiShapes';
import { sendJson } from '../sendJson';
import { parseOrThrow } from '../validation';
import { eventListQuerySchema } from '../queryValidation';
import type { FleetRouter, RouteContext } from '../routeContext';

/** The fleet as a whole: a manual health run, the summary and the recent events. */
export function registerHealthRoutes(
  router: FleetRouter,
  ctx: RouteContext,
): void {
  runHealth(router, ctx);
  getSummary(router, ctx);
  listDeploymentCounts(router, ctx);
  listRecentEvents(router, ctx);
}

/** `POST /health/run` (`fleet.health.run`). */
function runHealth(router: FleetRouter, ctx: RouteContext) {
  const { runHealthCycle } = ctx.options;
  const { authorizedWrite } = ctx;
  router.post('/health/run', async (req, res) => {
    const summary = await authorizedWrite(
      req,
      { eventId: 'health-run', meta: {}, permission: fleetHealthRunPermission },
      () => runHealthCycle(),
    );
    res.json(summary);
  });
}

/** `GET /summary`: counts of clusters and deployments, the mass outage, the last cycle. */
function getSummary(router: FleetRouter, ctx: RouteContext) {
  const { stores } = ctx.options;
  router.get('/summary', async (req, res) => {
    const clusters = await stores.clusters.countClustersByStatus();
    const deploymentCounts =
      await stores.deployments.countDeploymentsByStatus();
    const massOutage = (await stores.state.getMassOutage()) ?? {
      active: false,
      clusters: [],
    };
    const lastCycle = await stores.state.getLastCycle();
    const sum = (values: Record<string, number>) =>
      Object.values(values).reduce((a, b) => a + b, 0);
    const summary: FleetSummary = {
      clusters: { total: sum(clusters), ...clusters },
      deployments: {
        total: sum(deploymentCounts.byStatus),
        byStatus: deploymentCounts.byStatus, // the store counts every status, zeros included
        bySyncStatus: deploymentCounts.bySyncStatus,
      },
      massOutage,
      lastCycleAt: lastCycle?.finishedAt ?? null,
    };
    sendJson(req, res, summary);
  });
}

/**
 * `GET /deployment-counts`: deployments per cluster and status (as `GET /summary` counts them for
 * the whole fleet), for the fleet map.
 */
function listDeploymentCounts(router: FleetRouter, ctx: RouteContext) {
  const { stores } = ctx.options;
  router.get('/deployment-counts', async (req, res) => {
    const counts = await stores.deployments.countDeploymentsByCluster();
    sendJson(req, res, {
      items: counts.map(({ cluster, byStatus }) => ({
        cluster,
        total: Object.values(byStatus).reduce((a, b) => a + b, 0),
        byStatus,
      })),
    });
  });
}

/** `GET /events`: the most recent events of the fleet. */
function listRecentEvents(router: FleetRouter, ctx: RouteContext) {
  const { stores } = ctx.options;
  const { viewOf } = ctx;
  router.get('/events', async (req, res) => {
    const { limit } = parseOrThrow(eventListQuerySchema, req.query, 'query');
    const view = await viewOf(req);
    sendJson(req, res, {
      items: (await stores.events.listRecentEvents(limit ?? 50)).map(e =>
        toApiEvent(e, view),
      ),
    });
  });
}
