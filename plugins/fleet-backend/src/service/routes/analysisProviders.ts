import { sendJson } from '../sendJson';
import type { FleetRouter, RouteContext } from '../routeContext';

/**
 * `GET /analysis-providers`: the providers a release's analysis may name and, for Fleet's
 * `prometheus`, the servers it may query. Any authenticated caller may read it (the router's
 * middleware checks), as anyone who may write a strategy must know what it may name: the
 * addresses are what `fleet.analysis.prometheus.allowedAddresses` configures, and a release
 * naming another is refused with them anyway. An address that carries credentials
 * (`http://user:password@…`) is left out: they are the platform's, never shown.
 */
export function registerAnalysisProviderRoutes(
  router: FleetRouter,
  ctx: RouteContext,
): void {
  const { analysisProviders, allowedPrometheusAddresses } = ctx.options;
  router.get('/analysis-providers', async (req, res) => {
    const types = analysisProviders ?? ['prometheus'];
    sendJson(req, res, {
      items: types.map(type => ({
        type,
        addresses:
          type === 'prometheus'
            ? (allowedPrometheusAddresses ?? []).filter(
                address => !/^[a-z][a-z0-9+.-]*:\/\/[^/]*@/i.test(address),
              )
            : null,
      })),
    });
  });
}
