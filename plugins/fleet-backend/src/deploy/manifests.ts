import type {
  V1Deployment,
  V1EnvVar,
  V1PodDisruptionBudget,
  V1Service,
} from '@kubernetes/client-node';
import type { ApplicationSpec } from '@cnp/plugin-fleet-common';
import { sanitizeK8sName } from '../kubernetes/sanitizeK8sName';

export const DEFAULT_CONTAINER_PORT = 8000;
export const SERVICE_PORT = 80;
export const ENTITY_REF_ANNOTATION = 'cnp.io/entity-ref';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const NAME_LABEL = 'app.kubernetes.io/name';
/**
 * The label Backstage's Kubernetes plugin finds a component's objects by (its default label
 * selector is `backstage.io/kubernetes-id=<the component's name>`); on every object Fleet applies
 * and on its pods, never in a selector (a Deployment's selector cannot change).
 */
export const KUBERNETES_ID_LABEL = 'backstage.io/kubernetes-id';

/** The name part of `component:default/payments`: the value of `backstage.io/kubernetes-id`. */
export function kubernetesIdOf(entityRef: string): string {
  return entityRef.slice(entityRef.lastIndexOf('/') + 1);
}

export interface ManifestInput {
  /** DNS-1123 name of the application (see sanitizeK8sName). */
  name: string;
  entityRef: string;
  namespace: string;
  spec: ApplicationSpec;
  defaultReplicas: number;
  progressDeadlineSeconds?: number;
  /** Upper bound of a PodDisruptionBudget's minAvailable (default 2). */
  maxMinAvailable?: number;
}

export interface Manifests {
  deployment: V1Deployment;
  service: V1Service;
  /** Only for replicas >= 2. */
  podDisruptionBudget?: V1PodDisruptionBudget;
}

/** A Service name must also start with a letter (DNS-1035). */
export function serviceNameFor(name: string): string {
  return /^[a-z]/.test(name) ? name : sanitizeK8sName(`svc-${name}`);
}

/**
 * Turns an application spec into the typed objects Fleet applies: a Deployment (port 8000 by
 * default, readiness and liveness probes on GET /health), a Service 80 -> port, and for two
 * replicas or more a PodDisruptionBudget and a topology spread over nodes. Every object (and the
 * pod template) carries Fleet's labels, the Kubernetes plugin's `backstage.io/kubernetes-id`,
 * and the entity ref as an annotation.
 */
export function buildManifests(input: ManifestInput): Manifests {
  const { name, namespace, spec, entityRef } = input;
  if (!spec.image) throw new Error(`Application '${name}' has no image`);
  const replicas = spec.replicas ?? input.defaultReplicas;
  const port = spec.port ?? DEFAULT_CONTAINER_PORT;
  const selector = { [NAME_LABEL]: name };
  const labels = {
    [NAME_LABEL]: name,
    [MANAGED_BY_LABEL]: 'fleet',
    [KUBERNETES_ID_LABEL]: kubernetesIdOf(entityRef),
  };
  const annotations = { [ENTITY_REF_ANNOTATION]: entityRef };
  const metadata = { name, namespace, labels, annotations };
  const probe = (initialDelaySeconds: number) => ({
    httpGet: { path: '/health', port },
    initialDelaySeconds,
    periodSeconds: 10,
    timeoutSeconds: 2,
    failureThreshold: 3,
  });

  const deployment: V1Deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata,
    spec: {
      replicas,
      selector: { matchLabels: selector },
      progressDeadlineSeconds: input.progressDeadlineSeconds,
      template: {
        metadata: { labels, annotations },
        spec: {
          containers: [
            {
              name,
              image: spec.image,
              ports: [{ name: 'http', containerPort: port, protocol: 'TCP' }],
              // Empty lists and maps are left out: an API server drops them (omitempty), and a
              // field that is never there would look like drift forever.
              env: nonEmpty(
                Object.entries(spec.env ?? {})
                  .sort(([a], [b]) => a.localeCompare(b))
                  .flatMap(([envName, value]): V1EnvVar[] => {
                    // A reference is applied as it is; a plain value Fleet was not given
                    // (null) is left out rather than set empty.
                    if (value === null || value === undefined) return [];
                    if (typeof value === 'string')
                      return [{ name: envName, value }];
                    return [{ name: envName, valueFrom: value.valueFrom }];
                  }),
              ),
              resources: nonEmpty(spec.resources),
              readinessProbe: probe(2),
              livenessProbe: probe(10),
            },
          ],
          topologySpreadConstraints:
            replicas >= 2
              ? [
                  {
                    maxSkew: 1,
                    topologyKey: 'kubernetes.io/hostname',
                    whenUnsatisfiable: 'ScheduleAnyway',
                    labelSelector: { matchLabels: selector },
                  },
                ]
              : undefined,
        },
      },
    },
  };

  const service: V1Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { ...metadata, name: serviceNameFor(name) },
    spec: {
      type: 'ClusterIP',
      selector,
      ports: [
        { name: 'http', port: SERVICE_PORT, targetPort: port, protocol: 'TCP' },
      ],
    },
  };

  const podDisruptionBudget: V1PodDisruptionBudget | undefined =
    replicas >= 2
      ? {
          apiVersion: 'policy/v1',
          kind: 'PodDisruptionBudget',
          metadata,
          spec: {
            minAvailable: Math.min(replicas - 1, input.maxMinAvailable ?? 2),
            selector: { matchLabels: selector },
          },
        }
      : undefined;

  return {
    deployment: stripUndefined(deployment),
    service: stripUndefined(service),
    podDisruptionBudget:
      podDisruptionBudget && stripUndefined(podDisruptionBudget),
  };
}

function nonEmpty<T>(value: T | undefined): T | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return value.length ? value : undefined;
  if (typeof value === 'object')
    return Object.keys(value as object).length ? value : undefined;
  return value;
}

/** Drops undefined fields, so that what is sent is exactly what is compared later. */
function stripUndefined<T>(value: T): T {
  return JSON.parse(JSON.stringify(value));
}
