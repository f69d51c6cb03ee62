import { createExtensionPoint } from '@backstage/backend-plugin-api';
import type {
  AnalysisTemplate,
  ReleaseStrategy,
} from '@cnp/plugin-fleet-common';
import type { FleetAnalysisContext } from './analysisProviders';
import type {
  ConfigurationOptions,
  KubeConfig,
  V1Deployment,
  V1Service,
} from '@kubernetes/client-node';

/**
 * A connection to one cluster, with the credentials Fleet holds for it.
 *
 * @public
 */
export interface FleetClusterConnection {
  kubeConfig: KubeConfig;
  /**
   * Options for each request (`api.someCall(params, requestOptions(ms))`): the cluster's own
   * connection pool and a timeout that really aborts the request.
   */
  requestOptions(timeoutMs: number): ConfigurationOptions;
}

/**
 * A cluster a traffic provider steers a canary on.
 *
 * @public
 */
export interface FleetTrafficCluster {
  /** The cluster's name in Fleet. */
  name: string;
  /** Connects to the cluster; rejects when its kubeconfig cannot be used now. */
  connect(): Promise<FleetClusterConnection>;
}

/**
 * The objects of one revision of an application, as Fleet applies them.
 *
 * @public
 */
export interface FleetRevisionObjects {
  deployment: V1Deployment;
  service: V1Service;
}

/**
 * What one cluster's canary needs to know.
 *
 * @public
 */
export interface FleetTrafficTarget {
  cluster: FleetTrafficCluster;
  namespace: string;
  /** The application's Kubernetes name (its Deployment's). */
  name: string;
  /** What the cluster runs now (the previous revision). */
  stable: FleetRevisionObjects;
  /** What the release brings (the new revision). */
  canary: FleetRevisionObjects;
  /** The revision numbers of the two. */
  stableRevision: number;
  canaryRevision: number;
  /** The replicas the application runs. */
  replicas: number;
  /** The strategy's `maxSurge` and `maxUnavailable`, resolved to pods. */
  maxSurge: number;
  maxUnavailable: number;
  /** The strategy's weights (its `setWeight` steps), in order. */
  weights: number[];
  /** The strategy's Istio routing, when it names a VirtualService. */
  istio?: { virtualService: string; routes?: string[] };
  /** The strategy's Gateway API routing, when it names an HTTPRoute. */
  gatewayAPI?: { httpRoute: string };
  /** The strategy's analysis templates and what their queries are filled with. */
  analysis?: { templates: AnalysisTemplate[]; context: FleetAnalysisContext };
}

/**
 * Where a provider's call left the canary. `waiting` is asked again at the next tick (a
 * Kubernetes error is a `waiting` too); `failed` ends the release (or pauses it when the
 * strategy turns rollback off).
 *
 * @public
 */
export type FleetTrafficStepOutcome =
  | { kind: 'reached'; message: string }
  | { kind: 'waiting'; message: string }
  | {
      kind: 'failed';
      message: string;
      /** `OWNERSHIP_CONFLICT`: a foreign object is in the way; it was left untouched. */
      reason?: 'OWNERSHIP_CONFLICT';
    };

/**
 * One way of steering a canary's traffic on a cluster (Fleet's own: `gateway-api` for a Gateway
 * API HTTPRoute's weights, `rollout` for Argo Rollouts, `istio` for an Istio VirtualService's
 * weights, `replicas` for a canary Deployment beside the stable one). Every call must be
 * idempotent: the release orchestrator calls again after a restart, or at the next tick while an
 * outcome is `waiting`.
 *
 * @public
 */
export interface FleetTrafficProvider {
  /**
   * The provider's id (lower case letters, digits and dashes): stored as the `mode` of each
   * cluster it runs a canary on, and shown as such in the API and the UI.
   */
  readonly id: string;
  /** How it steers, in words for events: "canary started through <description>". */
  readonly description: string;
  /**
   * Whether the provider itself carries the traffic to 100 % (a step of weight 100, and the
   * end of the steps, are its own). Otherwise, at 100 % the stable workload takes the new
   * revision and the canary is removed.
   */
  readonly stepsToFull?: boolean;
  /**
   * Whether it steers the canary of a release with this strategy on this cluster. Providers are
   * asked in order (those added through the extension point first); the first to answer yes
   * runs the cluster's canary to its end.
   */
  detect(options: {
    cluster: FleetTrafficCluster;
    strategy: ReleaseStrategy;
  }): Promise<boolean>;
  /**
   * Why the canary may not start on this cluster (for instance: an autoscaler would fight a
   * canary sized by replicas), or undefined.
   */
  startRefusal?(options: {
    cluster: FleetTrafficCluster;
    namespace: string;
    name: string;
  }): Promise<string | undefined>;
  /**
   * Before the canary starts: an existing object it would change that is not Fleet's for this
   * component, in words, or undefined. Reads only.
   */
  ownershipConflict(target: FleetTrafficTarget): Promise<string | undefined>;
  /**
   * Moves the canary toward `weight` (`target.weights[weightIndex]`); `reached` once it carries
   * that share of the traffic.
   */
  step(
    target: FleetTrafficTarget,
    options: { weight: number; weightIndex: number },
  ): Promise<FleetTrafficStepOutcome>;
  /**
   * Takes the traffic off the canary: once the stable workload runs the new revision
   * (`completion`), or as the release goes back to the previous revision (`rollback`).
   */
  trafficToStable(
    target: FleetTrafficTarget,
    options: { cause: 'completion' | 'rollback' },
  ): Promise<FleetTrafficStepOutcome>;
  /** Deletes the canary's objects that are Fleet's; `reached` once they are gone. */
  removeCanary(target: FleetTrafficTarget): Promise<FleetTrafficStepOutcome>;
}

/**
 * The interface of {@link fleetTrafficProvidersExtensionPoint}.
 *
 * @public
 */
export interface FleetTrafficProvidersExtensionPoint {
  /**
   * Adds traffic providers, asked before Fleet's own (`gateway-api`, `rollout`, `istio`,
   * `replicas`) in the order added. An id already taken is an error at startup.
   */
  addTrafficProvider(...providers: FleetTrafficProvider[]): void;
}

/**
 * An extension point to add ways of steering a canary's traffic to Fleet's progressive
 * releases.
 *
 * @public
 */
export const fleetTrafficProvidersExtensionPoint =
  createExtensionPoint<FleetTrafficProvidersExtensionPoint>({
    id: 'fleet.traffic-providers',
  });
