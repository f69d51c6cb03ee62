import {
  AppsV1Api,
  CoreV1Api,
  NetworkingV1Api,
  PolicyV1Api,
  type ConfigurationOptions,
  type KubeConfig,
  type V1Deployment,
  type V1Ingress,
  type V1PodDisruptionBudget,
  type V1Service,
} from '@kubernetes/client-node';
import { diffObject } from '../kubernetes/diffObject';
import { isKubeStatus } from '../kubernetes/requestOptions';
import { MANAGED_BY_LABEL } from './manifests';
import { assertFleetOwned, deleteIfFleetOwned } from './ownership';

/** A live object as far as its ownership goes. */
interface LiveMetadata {
  metadata?: {
    name?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
}

/**
 * What the apply of one application's objects on one cluster shares: the cluster's client, the
 * namespace, the application's name and entity ref, and the request options.
 */
export interface WorkloadApply {
  kc: KubeConfig;
  namespace: string;
  /** The name of the Deployment, the PodDisruptionBudget and the Ingress. */
  name: string;
  /** The entity the objects are Fleet's for (the Deployment's `cnp.io/entity-ref`). */
  entityRef: string | undefined;
  opts: () => ConfigurationOptions;
  mergePatch: () => ConfigurationOptions;
}

/**
 * On a 409, the object there must be Fleet's for this entity (its `managed-by` label and
 * entity-ref annotation): never patch or replace someone else's.
 */
function assertOurs(ctx: WorkloadApply, kind: string, live: LiveMetadata) {
  assertFleetOwned(
    kind,
    ctx.namespace,
    live.metadata?.name ?? ctx.name,
    live,
    ctx.entityRef,
  );
}

/**
 * Creates the namespace; a namespace-scoped account may not read namespaces (403), and someone
 * else may have created it meanwhile (409): both mean "go on".
 */
export async function createNamespace(ctx: WorkloadApply): Promise<void> {
  try {
    await ctx.kc.makeApiClient(CoreV1Api).createNamespace(
      {
        body: {
          metadata: {
            name: ctx.namespace,
            labels: { [MANAGED_BY_LABEL]: 'fleet' },
          },
        },
      },
      ctx.opts(),
    );
  } catch (error) {
    if (!isKubeStatus(error, 409) && !isKubeStatus(error, 403)) throw error;
  }
}

/**
 * The Deployment: created, and patched on 409 (when it is ours), without `spec.replicas` when
 * `keepReplicas` says something else owns the count.
 */
export async function applyDeployment(
  ctx: WorkloadApply,
  deployment: V1Deployment,
  keepReplicas: () => Promise<boolean>,
): Promise<V1Deployment> {
  const { namespace, name, opts } = ctx;
  const apps = ctx.kc.makeApiClient(AppsV1Api);
  try {
    return await apps.createNamespacedDeployment(
      { namespace, body: deployment },
      opts(),
    );
  } catch (error) {
    if (!isKubeStatus(error, 409)) throw error;
  }
  assertOurs(
    ctx,
    'Deployment',
    await apps.readNamespacedDeployment({ name, namespace }, opts()),
  );
  const { replicas: _ownedElsewhere, ...specWithoutReplicas } =
    deployment.spec!;
  return apps.patchNamespacedDeployment(
    {
      name,
      namespace,
      body: (await keepReplicas())
        ? { ...deployment, spec: specWithoutReplicas }
        : deployment,
    },
    ctx.mergePatch(),
  );
}

/**
 * The Service: created, and on 409 (when it is ours) replaced keeping its clusterIP and
 * resourceVersion, only when Fleet's fields differ: an identical apply changes nothing.
 */
export async function applyService(
  ctx: WorkloadApply,
  service: V1Service,
): Promise<void> {
  const { namespace, opts } = ctx;
  const core = ctx.kc.makeApiClient(CoreV1Api);
  const serviceName = service.metadata!.name!;
  try {
    await core.createNamespacedService({ namespace, body: service }, opts());
    return;
  } catch (error) {
    if (!isKubeStatus(error, 409)) throw error;
  }
  const live = await core.readNamespacedService(
    { name: serviceName, namespace },
    opts(),
  );
  assertOurs(ctx, 'Service', live);
  if (diffObject(service, live).length === 0) return;
  await core.replaceNamespacedService(
    {
      name: serviceName,
      namespace,
      body: {
        ...service,
        metadata: {
          ...service.metadata,
          resourceVersion: live.metadata?.resourceVersion,
        },
        spec: {
          ...service.spec,
          clusterIP: live.spec?.clusterIP,
          clusterIPs: live.spec?.clusterIPs,
        },
      },
    },
    opts(),
  );
}

/**
 * The PodDisruptionBudget: created, and patched on 409 (when it is ours); with fewer than 2
 * replicas (none asked for), a PDB of ours from an earlier spec goes, never someone else's.
 */
export async function applyPodDisruptionBudget(
  ctx: WorkloadApply,
  podDisruptionBudget: V1PodDisruptionBudget | undefined,
): Promise<void> {
  const { namespace, name, opts } = ctx;
  const policy = ctx.kc.makeApiClient(PolicyV1Api);
  if (!podDisruptionBudget) {
    await deleteIfFleetOwned(
      ctx.entityRef,
      () =>
        policy.readNamespacedPodDisruptionBudget({ name, namespace }, opts()),
      body =>
        policy.deleteNamespacedPodDisruptionBudget(
          { name, namespace, body },
          opts(),
        ),
    );
    return;
  }
  try {
    await policy.createNamespacedPodDisruptionBudget(
      { namespace, body: podDisruptionBudget },
      opts(),
    );
    return;
  } catch (error) {
    if (!isKubeStatus(error, 409)) throw error;
  }
  assertOurs(
    ctx,
    'PodDisruptionBudget',
    await policy.readNamespacedPodDisruptionBudget({ name, namespace }, opts()),
  );
  // A PDB of an earlier Fleet had minAvailable: a merge patch must clear it, as a PDB cannot
  // have both.
  await policy.patchNamespacedPodDisruptionBudget(
    {
      name,
      namespace,
      body: {
        ...podDisruptionBudget,
        spec: { ...podDisruptionBudget.spec, minAvailable: null },
      },
    },
    ctx.mergePatch(),
  );
}

/**
 * The Ingress: created, and patched on 409 (when it is ours); when the application no longer
 * asks for one, an Ingress of ours from an earlier spec is deleted, never someone else's.
 */
export async function applyIngress(
  ctx: WorkloadApply,
  ingress: V1Ingress | undefined,
): Promise<void> {
  const { namespace, name, opts } = ctx;
  const networking = ctx.kc.makeApiClient(NetworkingV1Api);
  if (ingress) {
    try {
      await networking.createNamespacedIngress(
        { namespace, body: ingress },
        opts(),
      );
    } catch (error) {
      if (!isKubeStatus(error, 409)) throw error;
      assertOurs(
        ctx,
        'Ingress',
        await networking.readNamespacedIngress({ name, namespace }, opts()),
      );
      await networking.patchNamespacedIngress(
        {
          name,
          namespace,
          // TLS dropped from the spec must go from the live object too.
          body: {
            ...ingress,
            spec: { ...ingress.spec, tls: ingress.spec?.tls ?? null },
          },
        },
        ctx.mergePatch(),
      );
    }
    return;
  }
  try {
    await deleteIfFleetOwned(
      ctx.entityRef,
      () => networking.readNamespacedIngress({ name, namespace }, opts()),
      body =>
        networking.deleteNamespacedIngress({ name, namespace, body }, opts()),
    );
  } catch (error) {
    // 404: none; 403: no right to read Ingresses, and then Fleet never made one there.
    if (!isKubeStatus(error, 404) && !isKubeStatus(error, 403)) throw error;
  }
}
