import type {
  V1Affinity,
  V1Deployment,
  V1EnvVar,
  V1Ingress,
  V1ObjectMeta,
  V1PodDisruptionBudget,
  V1PodSpec,
  V1ResourceRequirements,
  V1Service,
  V1Toleration,
} from '@kubernetes/client-node';
import type { ApplicationSpec } from '@cnp/plugin-fleet-common';
import { sanitizeK8sName } from '../kubernetes/sanitizeK8sName';
import { preStopHook } from './podLifecycle';

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

/**
 * The track of an application's pods: `stable` on the pods of its Deployment, `canary` on those
 * of a release's canary. Never in a Deployment's selector (it cannot change); a Service adds it
 * to its selector to reach one track only (the stable Service of an Istio canary).
 */
export const TRACK_LABEL = 'cnp.io/track';

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
  /**
   * Requests and limits for a resource (cpu, memory) the application sets neither a request
   * nor a limit for (`fleet.deploy.defaultResources`).
   */
  defaultResources?: ResourceDefaults;
  /**
   * How long a stopping pod sleeps before its container gets SIGTERM, so that endpoints and
   * Ingress controllers stop sending it traffic first (default 5; 0 leaves the hook out).
   */
  preStopSleepSeconds?: number;
  /**
   * The cluster's Kubernetes version (`v1.30.2`), from its health probe: the preStop hook uses
   * the `sleep` action from 1.30, an `exec` of `sleep` below or when it is not known.
   */
  serverVersion?: string | null;
}

/** Requests and limits per resource name, as a container's `resources`. */
export interface ResourceDefaults {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
}

export const DEFAULT_PRE_STOP_SLEEP_SECONDS = 5;
/**
 * The requests and limits of a container whose application and `fleet.deploy.defaultResources`
 * say nothing: what held seed 004's CPU stressor.
 */
export const DEFAULT_RESOURCES: ResourceDefaults = {
  requests: { cpu: '100m', memory: '128Mi' },
  limits: { cpu: '200m', memory: '256Mi' },
};
export const ZONE_TOPOLOGY_KEY = 'topology.kubernetes.io/zone';
export const HOSTNAME_TOPOLOGY_KEY = 'kubernetes.io/hostname';

export interface Manifests {
  deployment: V1Deployment;
  service: V1Service;
  /** Only for replicas >= 2. */
  podDisruptionBudget?: V1PodDisruptionBudget;
  /** Only when the application asks for one (`spec.ingress`). */
  ingress?: V1Ingress;
}

/**
 * The application's requests and limits, completed from the defaults (Fleet's own when
 * `fleet.deploy.defaultResources` is unset) for each resource it says nothing about. A resource
 * it sets a request or a limit for keeps exactly what it set: a default request above its limit
 * (or under its request) would make the pod invalid. `resources: {}` (no request, no limit)
 * opts out: the container gets none.
 */
export function resourcesWithDefaults(
  own: ApplicationSpec['resources'],
  defaults: ResourceDefaults | undefined = DEFAULT_RESOURCES,
): V1ResourceRequirements | undefined {
  if (
    own &&
    !Object.keys(own.requests ?? {}).length &&
    !Object.keys(own.limits ?? {}).length
  )
    return undefined;
  const requests: Record<string, string> = { ...(own?.requests ?? {}) };
  const limits: Record<string, string> = { ...(own?.limits ?? {}) };
  const named = new Set([...Object.keys(requests), ...Object.keys(limits)]);
  for (const [resource, value] of Object.entries(defaults?.requests ?? {}))
    if (!named.has(resource)) requests[resource] = value;
  for (const [resource, value] of Object.entries(defaults?.limits ?? {}))
    if (!named.has(resource)) limits[resource] = value;
  const out: V1ResourceRequirements = {};
  if (Object.keys(requests).length) out.requests = requests;
  if (Object.keys(limits).length) out.limits = limits;
  return nonEmpty(out);
}

/** A Service name must also start with a letter (DNS-1035). */
export function serviceNameFor(name: string): string {
  return /^[a-z]/.test(name) ? name : sanitizeK8sName(`svc-${name}`);
}

/**
 * Turns an application spec into the typed objects Fleet applies: a Deployment (port 8000 by
 * default, readiness and liveness probes on GET /health, a preStop sleep, the application's
 * affinity and tolerations, requests and limits completed from the defaults), a ClusterIP Service
 * 80 -> port, for two replicas or more a PodDisruptionBudget that lets one pod be evicted at a
 * time and a topology spread over nodes and zones, and an Ingress when the application asks.
 * Every object (and the pod template) carries Fleet's labels, the Kubernetes plugin's
 * `backstage.io/kubernetes-id`, and the entity ref as an annotation.
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
  const deployment: V1Deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata,
    spec: {
      replicas,
      selector: { matchLabels: selector },
      progressDeadlineSeconds: input.progressDeadlineSeconds,
      template: {
        metadata: {
          labels: { ...labels, [TRACK_LABEL]: 'stable' },
          annotations,
        },
        spec: podSpecFor(input, { replicas, port, selector }),
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

  // One voluntary eviction at a time, whatever the replica count: a drain never takes more
  // than one pod of the application down at once.
  const podDisruptionBudget: V1PodDisruptionBudget | undefined =
    replicas >= 2
      ? {
          apiVersion: 'policy/v1',
          kind: 'PodDisruptionBudget',
          metadata,
          spec: {
            maxUnavailable: 1,
            selector: { matchLabels: selector },
          },
        }
      : undefined;

  const ingress = spec.ingress
    ? ingressFor(name, metadata, spec.ingress)
    : undefined;

  return {
    deployment: stripUndefined(deployment),
    service: stripUndefined(service),
    podDisruptionBudget:
      podDisruptionBudget && stripUndefined(podDisruptionBudget),
    ingress: ingress && stripUndefined(ingress),
  };
}

/**
 * The pod of an application's Deployment: one container (its image, port, env, requests and
 * limits, probes on GET /health, a preStop sleep), the application's affinity and tolerations,
 * and from two replicas a topology spread over nodes and zones.
 */
function podSpecFor(
  input: ManifestInput,
  workload: {
    replicas: number;
    port: number;
    selector: Record<string, string>;
  },
): V1PodSpec {
  const { name, spec } = input;
  const { replicas, port, selector } = workload;
  const preStopSleep =
    input.preStopSleepSeconds ?? DEFAULT_PRE_STOP_SLEEP_SECONDS;
  const probe = (initialDelaySeconds: number) => ({
    httpGet: { path: '/health', port },
    initialDelaySeconds,
    periodSeconds: 10,
    timeoutSeconds: 2,
    failureThreshold: 3,
  });
  return {
    containers: [
      {
        name,
        image: spec.image,
        ports: [{ name: 'http', containerPort: port, protocol: 'TCP' }],
        // Empty lists and maps are left out: an API server drops them (omitempty), and a
        // field that is never there would look like drift forever.
        env: envOf(spec.env),
        resources: resourcesWithDefaults(
          spec.resources,
          input.defaultResources,
        ),
        readinessProbe: probe(2),
        livenessProbe: probe(10),
        // Endpoints and Ingress controllers learn of a stopping pod asynchronously: the
        // sleep keeps it serving until they have stopped sending it traffic.
        lifecycle: preStopHook(preStopSleep, input.serverVersion),
      },
    ],
    // The kubelet kills a container this long after it starts stopping, preStop included.
    terminationGracePeriodSeconds:
      preStopSleep > 20 ? preStopSleep + 30 : undefined,
    affinity: nonEmpty(spec.affinity as V1Affinity | undefined),
    tolerations: nonEmpty(spec.tolerations as V1Toleration[] | undefined),
    // Spread over nodes and, where nodes carry a zone label, over zones; ScheduleAnyway:
    // a cluster with one zone (or a full node) still runs every replica.
    topologySpreadConstraints:
      replicas >= 2
        ? [HOSTNAME_TOPOLOGY_KEY, ZONE_TOPOLOGY_KEY].map(topologyKey => ({
            maxSkew: 1,
            topologyKey,
            whenUnsatisfiable: 'ScheduleAnyway',
            labelSelector: { matchLabels: selector },
          }))
        : undefined,
  };
}

/** The container's env, sorted by name; empty, left out. */
function envOf(env: ApplicationSpec['env']): V1EnvVar[] | undefined {
  return nonEmpty(
    Object.entries(env ?? {})
      .sort(([a], [b]) => a.localeCompare(b))
      .flatMap(([envName, value]): V1EnvVar[] => {
        // A reference is applied as it is; a plain value Fleet was not given
        // (null) is left out rather than set empty.
        if (value === null || value === undefined) return [];
        if (typeof value === 'string') return [{ name: envName, value }];
        return [{ name: envName, valueFrom: value.valueFrom }];
      }),
  );
}

/** The Ingress an application asks for: its host and path to the Service, with TLS if asked. */
function ingressFor(
  name: string,
  metadata: V1ObjectMeta,
  ingress: NonNullable<ApplicationSpec['ingress']>,
): V1Ingress {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata,
    spec: {
      ingressClassName: ingress.className,
      rules: [
        {
          host: ingress.host,
          http: {
            paths: [
              {
                path: ingress.path ?? '/',
                pathType: 'Prefix',
                backend: {
                  service: {
                    name: serviceNameFor(name),
                    port: { number: SERVICE_PORT },
                  },
                },
              },
            ],
          },
        },
      ],
      tls: ingress.tls
        ? [
            {
              hosts: [ingress.host],
              secretName:
                typeof ingress.tls === 'object'
                  ? ingress.tls.secretName
                  : tlsSecretNameFor(name),
            },
          ]
        : undefined,
    },
  };
}

/** The Secret an Ingress with `tls: true` takes its certificate from. */
export function tlsSecretNameFor(name: string): string {
  return sanitizeK8sName(`${name}-tls`);
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
