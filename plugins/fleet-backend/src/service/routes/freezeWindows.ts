import { sendJson } from '../sendJson';
import type { FleetRouter, RouteContext } from '../routeContext';

/** The freeze windows of the configuration. */
export function registerFreezeWindowRoutes(
  router: FleetRouter,
  ctx: RouteContext,
): void {
  listFreezeWindows(router, ctx);
}

/**
 * `GET /freeze-windows`: every window, open ones first, with the known clusters it freezes. Any
 * authenticated caller may read it (the router's middleware checks): the windows are the
 * platform's schedule, and the cluster names are those `GET /clusters` answers.
 */
function listFreezeWindows(router: FleetRouter, ctx: RouteContext) {
  const { stores, freezeWindows } = ctx.options;
  router.get('/freeze-windows', async (req, res) => {
    if (!freezeWindows) {
      sendJson(req, res, { items: [] });
      return;
    }
    const clusters = await stores.clusters.listClusters();
    sendJson(req, res, {
      items: freezeWindows.list(
        clusters.map(({ name, labels }) => ({ name, labels })),
      ),
    });
  });
}
