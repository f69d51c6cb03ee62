import type {
  V1Deployment,
  V1Ingress,
  V1PodDisruptionBudget,
  V1Service,
} from '@kubernetes/client-node';

export type ApplyResult =
  | { kind: 'applied'; generation?: number }
  | { kind: 'not-configured'; message: string }
  | {
      kind: 'failed';
      message: string;
      /** `OWNERSHIP_CONFLICT`: a foreign object stands where one of Fleet's would go. */
      reason?: 'OWNERSHIP_CONFLICT';
    };

/** HPA-targeted Deployment names per cluster and namespace, for one reconcile run. */
export type AutoscalerCache = Map<string, Promise<Set<string>>>;

/** The live counterparts of an application's objects on one cluster. */
export type LiveObjects =
  | {
      kind: 'read';
      deployment?: V1Deployment;
      service?: V1Service;
      podDisruptionBudget?: V1PodDisruptionBudget;
      ingress?: V1Ingress;
      /** An HPA targets the Deployment: it owns `spec.replicas`. */
      autoscaled: boolean;
    }
  | { kind: 'unreachable'; message: string };

/**
 * Live objects already known (from a watch's cache): a key that is present, even with an
 * undefined `object` (absent live), is not read again.
 */
export interface KnownLive {
  deployment?: { object?: V1Deployment };
  service?: { object?: V1Service };
  podDisruptionBudget?: { object?: V1PodDisruptionBudget };
  ingress?: { object?: V1Ingress };
  autoscaled?: boolean;
}

export type RolloutState =
  | { kind: 'ready' }
  | { kind: 'progressing'; message: string }
  | { kind: 'deadline-exceeded'; message: string }
  /** One of a component's own objects is unhealthy for good (a Job out of retries). */
  | { kind: 'degraded'; message: string }
  | { kind: 'unreachable'; message: string }
  | { kind: 'missing' };

/** Whether Fleet may create the namespace an application (`entityRef`, `appName`) goes to. */
export type NamespaceCreationPolicy = (request: {
  entityRef: string;
  appName: string;
  namespace: string;
}) => Promise<boolean>;
