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
import { isKubeStatus } from '../kubernetes/requestOptions';
import {
  ObjectAppearedError,
  serverSideApply,
} from '../kubernetes/serverSideApply';
import { MANAGED_BY_LABEL } from './manifests';
import { assertFleetOwned, deleteIfFleetOwned } from './ownership';
import { withReplicasLeftTo } from './replicas';

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
}

/** An object that is there must be Fleet's for this entity: never apply over someone else's. */
function assertOurs(ctx: WorkloadApply, kind: string, live: LiveMetadata) {
  assertFleetOwned(
    kind,
    ctx.namespace,
    live.metadata?.name ?? ctx.name,
    live,
    ctx.entityRef,
  );
}

/** The object `read` answers, or undefined when there is none (404). */
async function readIfThere<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (isKubeStatus(error, 404)) return undefined;
    throw error;
  }
}

/**
 * Reads the live object, checks it is Fleet's when there, and applies `body` over it. One that
 * appeared while Fleet was creating it is read and checked again.
 */
async function applyOwned<T extends LiveMetadata>(
  ctx: WorkloadApply,
  kind: string,
  read: () => Promise<T>,
  write: (live: T | undefined) => Promise<T>,
): Promise<T> {
  const once = async () => {
    const live = await readIfThere(read);
    if (live) assertOurs(ctx, kind, live);
    return write(live);
  };
  try {
    return await once();
  } catch (error) {
    if (!(error instanceof ObjectAppearedError)) throw error;
    return once();
  }
}

/**
 * Applies the namespace when it is missing; one that is there (Fleet's or not) is left as it
 * is. A namespace-scoped account may not read or write namespaces (403): that means "go on".
 */
export async function createNamespace(ctx: WorkloadApply): Promise<void> {
  const core = ctx.kc.makeApiClient(CoreV1Api);
  const name = ctx.namespace;
  try {
    if (await readIfThere(() => core.readNamespace({ name }, ctx.opts())))
      return;
    await serverSideApply(
      {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name, labels: { [MANAGED_BY_LABEL]: 'fleet' } },
      },
      undefined,
      {
        patch: (params, options) =>
          core.patchNamespace({ name, ...params }, options),
        create: (params, options) => core.createNamespace(params, options),
      },
      ctx.opts,
    );
  } catch (error) {
    // Made meanwhile by someone else: there now, and left as it is.
    if (error instanceof ObjectAppearedError) return;
    if (!isKubeStatus(error, 403)) throw error;
  }
}

/**
 * The Deployment, applied (when it is ours); with `keepReplicas` (something else owns the
 * count) the applied `spec.replicas` is the live one, so the apply neither scales it back nor
 * drops it.
 */
export async function applyDeployment(
  ctx: WorkloadApply,
  deployment: V1Deployment,
  keepReplicas: () => Promise<boolean>,
): Promise<V1Deployment> {
  const { namespace, name, opts } = ctx;
  const apps = ctx.kc.makeApiClient(AppsV1Api);
  return applyOwned(
    ctx,
    'Deployment',
    () => apps.readNamespacedDeployment({ name, namespace }, opts()),
    async live => {
      const body =
        live && (await keepReplicas())
          ? withReplicasLeftTo(deployment, live)
          : deployment;
      return serverSideApply(
        body,
        live,
        {
          patch: (params, options) =>
            apps.patchNamespacedDeployment(
              { name, namespace, ...params },
              options,
            ),
          create: (params, options) =>
            apps.createNamespacedDeployment({ namespace, ...params }, options),
        },
        opts,
      );
    },
  );
}

/** The Service, applied (when it is ours): its allocated addresses stay as they are. */
export async function applyService(
  ctx: WorkloadApply,
  service: V1Service,
): Promise<void> {
  const { namespace, opts } = ctx;
  const core = ctx.kc.makeApiClient(CoreV1Api);
  const name = service.metadata!.name!;
  await applyOwned(
    ctx,
    'Service',
    () => core.readNamespacedService({ name, namespace }, opts()),
    live =>
      serverSideApply(
        service,
        live,
        {
          patch: (params, options) =>
            core.patchNamespacedService(
              { name, namespace, ...params },
              options,
            ),
          create: (params, options) =>
            core.createNamespacedService({ namespace, ...params }, options),
        },
        opts,
      ),
  );
}

/**
 * The PodDisruptionBudget, applied (when it is ours); with fewer than 2 replicas (none asked
 * for), a PDB of ours from an earlier spec goes, never someone else's.
 */
export async function applyPodDisruptionBudget(
  ctx: WorkloadApply,
  podDisruptionBudget: V1PodDisruptionBudget | undefined,
): Promise<void> {
  const { namespace, name, opts } = ctx;
  const policy = ctx.kc.makeApiClient(PolicyV1Api);
  const read = () =>
    policy.readNamespacedPodDisruptionBudget({ name, namespace }, opts());
  if (!podDisruptionBudget) {
    await deleteIfFleetOwned(ctx.entityRef, read, body =>
      policy.deleteNamespacedPodDisruptionBudget(
        { name, namespace, body },
        opts(),
      ),
    );
    return;
  }
  await applyOwned(ctx, 'PodDisruptionBudget', read, live =>
    serverSideApply(
      podDisruptionBudget,
      live,
      {
        patch: (params, options) =>
          policy.patchNamespacedPodDisruptionBudget(
            { name, namespace, ...params },
            options,
          ),
        create: (params, options) =>
          policy.createNamespacedPodDisruptionBudget(
            { namespace, ...params },
            options,
          ),
      },
      opts,
    ),
  );
}

/**
 * The Ingress, applied (when it is ours); when the application no longer asks for one, an
 * Ingress of ours from an earlier spec is deleted, never someone else's.
 */
export async function applyIngress(
  ctx: WorkloadApply,
  ingress: V1Ingress | undefined,
): Promise<void> {
  const { namespace, name, opts } = ctx;
  const networking = ctx.kc.makeApiClient(NetworkingV1Api);
  const read = () =>
    networking.readNamespacedIngress({ name, namespace }, opts());
  if (ingress) {
    await applyOwned(ctx, 'Ingress', read, live =>
      serverSideApply(
        ingress,
        live,
        {
          patch: (params, options) =>
            networking.patchNamespacedIngress(
              { name, namespace, ...params },
              options,
            ),
          create: (params, options) =>
            networking.createNamespacedIngress(
              { namespace, ...params },
              options,
            ),
        },
        opts,
      ),
    );
    return;
  }
  try {
    await deleteIfFleetOwned(ctx.entityRef, read, body =>
      networking.deleteNamespacedIngress({ name, namespace, body }, opts()),
    );
  } catch (error) {
    // 404: none; 403: no right to read Ingresses, and then Fleet never made one there.
    if (!isKubeStatus(error, 404) && !isKubeStatus(error, 403)) throw error;
  }
}
