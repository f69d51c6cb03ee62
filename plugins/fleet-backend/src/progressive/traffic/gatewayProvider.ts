import type { FleetTrafficProvider } from '@cnp/plugin-fleet-node';
import {
  HTTP_ROUTES,
  readSteerableHTTPRoute,
  setBackendWeights,
} from './httpRoute';
import { createRoutedTrafficProvider } from './istioProvider';

/**
 * Gateway API backend weights: where the strategy names an HTTPRoute and the cluster serves
 * `gateway.networking.k8s.io/v1` HTTPRoutes. As for Istio: a canary Deployment sized to the
 * weight, its own Service, the application's Service narrowed to the stable pods, and the
 * route's rules that send to the application's Service split between the two Services.
 */
export function createGatewayApiTrafficProvider(options: {
  requestTimeoutMs: number;
}): FleetTrafficProvider {
  return createRoutedTrafficProvider(
    {
      id: 'gateway-api',
      description: 'Gateway API HTTPRoute weights',
      asks: strategy => !!strategy.canary.trafficRouting?.gatewayAPI,
      resource: HTTP_ROUTES,
      readSteerable: readSteerableHTTPRoute,
      setWeights: setBackendWeights,
    },
    options,
  );
}
