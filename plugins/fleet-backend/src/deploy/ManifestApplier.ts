import {
  AppsV1Api,
  AutoscalingV2Api,
  CoreV1Api,
  NetworkingV1Api,
  PolicyV1Api,
  type ConfigurationOptions,
  type KubeConfig,
  type V1Deployment,
} from '@kubernetes/client-node';
import type {
  ClusterAccess,
  ClusterClients,
} from '../kubernetes/ClusterClients';
import { describeKubeError, isKubeStatus } from '../kubernetes/requestOptions';
import { FieldConflictError } from '../kubernetes/serverSideApply';
import type {
  ApplyResult,
  AutoscalerCache,
  KnownLive,
  LiveObjects,
  NamespaceCreationPolicy,
  RolloutState,
} from './applierTypes';
import { ENTITY_REF_ANNOTATION, type Manifests } from './manifests';
import { OwnershipConflictError } from './ownership';
import { rolloutStateOf } from './rolloutState';
import {
  applyDeployment,
  applyIngress,
  applyPodDisruptionBudget,
  applyService,
  createNamespace,
  type WorkloadApply,
} from './workloadApply';

// Its types are the applier's, wherever a caller reads them from.
export type * from './applierTypes';
export { rolloutStateOf } from './rolloutState';

/**
 * Applies an application's objects to one cluster through that cluster's own client, by
 * server-side apply as field manager `fleet` (`workloadApply.ts` applies each kind, after
 * checking that an object already there is Fleet's): a field Fleet stops sending leaves the
 * live object, other managers' fields stay, and the namespace is applied when missing. Also reads the live objects and a
 * rollout's state.
 */
export class ManifestApplier {
  private constructor(
    private readonly clients: ClusterClients,
    private readonly requestTimeoutMs: number,
    private readonly mayCreateNamespace: NamespaceCreationPolicy,
  ) {}

  static create(options: {
    clients: ClusterClients;
    requestTimeoutMs?: number;
    /**
     * Whether Fleet may create a missing namespace for the application (its project names it
     * exactly); default: always.
     */
    mayCreateNamespace?: NamespaceCreationPolicy;
  }): ManifestApplier {
    return new ManifestApplier(
      options.clients,
      options.requestTimeoutMs ?? 15_000,
      options.mayCreateNamespace ?? (async () => true),
    );
  }

  /**
   * Creates or updates the application's objects. On an update, `spec.replicas` is left as it is
   * live when something else owns it: an HPA that targets the Deployment (found in `autoscalers`
   * or read), or `ignoreReplicas` (the application lists `/spec/replicas` in ignoreDifferences).
   * Re-applying, by a deploy or by self-healing, never scales an autoscaled Deployment back.
   */
  async apply(
    cluster: ClusterAccess,
    namespace: string,
    manifests: Manifests,
    options: { autoscalers?: AutoscalerCache; ignoreReplicas?: boolean } = {},
  ): Promise<ApplyResult> {
    const loaded = await this.clients.kubeConfigFor(cluster);
    if (loaded.kind === 'unusable')
      return { kind: 'not-configured', message: loaded.reason };
    const opts = () => loaded.requestOptions(this.requestTimeoutMs);
    const { deployment } = manifests;
    const ctx: WorkloadApply = {
      kc: loaded.kubeConfig,
      namespace,
      name: deployment.metadata!.name!,
      entityRef: deployment.metadata?.annotations?.[ENTITY_REF_ANNOTATION],
      opts,
    };
    try {
      // Create the namespace when missing and the project names it exactly (a namespace
      // matched by a pattern must exist already).
      if (
        ctx.entityRef !== undefined &&
        (await this.mayCreateNamespace({
          entityRef: ctx.entityRef,
          appName: ctx.name,
          namespace,
        }))
      ) {
        await createNamespace(ctx);
      }
      const applied = await applyDeployment(
        ctx,
        deployment,
        async () =>
          !!options.ignoreReplicas ||
          this.autoscaledDeployments(
            cluster,
            namespace,
            options.autoscalers,
            ctx.kc,
            opts,
          ).then(
            names => names.has(ctx.name),
            () => false, // no right to list HPAs: nothing says one owns the count
          ),
      );
      await applyService(ctx, manifests.service);
      await applyPodDisruptionBudget(ctx, manifests.podDisruptionBudget);
      await applyIngress(ctx, manifests.ingress);
      return { kind: 'applied', generation: applied.metadata?.generation };
    } catch (error) {
      if (error instanceof OwnershipConflictError)
        return {
          kind: 'failed',
          message: error.message,
          reason: 'OWNERSHIP_CONFLICT',
        };
      // Another manager's field: shown as the reason, never forced.
      if (error instanceof FieldConflictError)
        return { kind: 'failed', message: error.message };
      return {
        kind: 'failed',
        message: describeKubeError(error, this.requestTimeoutMs),
      };
    }
  }

  /** Whether `ensureNamespace` would create `namespace` for the application when it is missing. */
  createsNamespace(request: {
    entityRef: string;
    appName: string;
    namespace: string;
  }): Promise<boolean> {
    return this.mayCreateNamespace(request);
  }

  /**
   * Creates `namespace` on the cluster when it is missing and the application's project names
   * it exactly (one matched by a pattern must exist already); leaves one that is there as it is.
   * An error is the apply's failure.
   */
  async ensureNamespace(
    cluster: ClusterAccess,
    request: { entityRef: string; appName: string; namespace: string },
  ): Promise<ApplyResult> {
    const loaded = await this.clients.kubeConfigFor(cluster);
    if (loaded.kind === 'unusable')
      return { kind: 'not-configured', message: loaded.reason };
    try {
      if (await this.mayCreateNamespace(request)) {
        await createNamespace({
          kc: loaded.kubeConfig,
          namespace: request.namespace,
          name: request.appName,
          entityRef: request.entityRef,
          opts: () => loaded.requestOptions(this.requestTimeoutMs),
        });
      }
      return { kind: 'applied' };
    } catch (error) {
      return {
        kind: 'failed',
        message: describeKubeError(error, this.requestTimeoutMs),
      };
    }
  }

  /**
   * Reads the live objects that correspond to `manifests` (absent ones are undefined). With
   * `autoscalers`, the namespace's HPA list is read once per cluster and namespace for all the
   * calls sharing that map (a reconcile run), instead of once per deployment. What `known`
   * holds is taken as it is, and only the rest is read.
   */
  async readLive(
    cluster: ClusterAccess,
    namespace: string,
    manifests: Manifests,
    options: { autoscalers?: AutoscalerCache; known?: KnownLive } = {},
  ): Promise<LiveObjects> {
    const known = options.known ?? {};
    const loaded = await this.clients.kubeConfigFor(cluster);
    if (loaded.kind === 'unusable')
      return { kind: 'unreachable', message: loaded.reason };
    const kc = loaded.kubeConfig;
    const opts = () => loaded.requestOptions(this.requestTimeoutMs);
    const orUndefined = <T>(promise: Promise<T>): Promise<T | undefined> =>
      promise.catch(error => {
        if (isKubeStatus(error, 404)) return undefined;
        throw error;
      });
    const name = manifests.deployment.metadata!.name!;
    try {
      const [deployment, service, podDisruptionBudget, autoscaled, ingress] =
        await Promise.all([
          known.deployment
            ? known.deployment.object
            : orUndefined(
                kc
                  .makeApiClient(AppsV1Api)
                  .readNamespacedDeployment({ name, namespace }, opts()),
              ),
          known.service
            ? known.service.object
            : orUndefined(
                kc
                  .makeApiClient(CoreV1Api)
                  .readNamespacedService(
                    { name: manifests.service.metadata!.name!, namespace },
                    opts(),
                  ),
              ),
          manifests.podDisruptionBudget && !known.podDisruptionBudget
            ? orUndefined(
                kc
                  .makeApiClient(PolicyV1Api)
                  .readNamespacedPodDisruptionBudget(
                    { name, namespace },
                    opts(),
                  ),
              )
            : known.podDisruptionBudget?.object,
          known.autoscaled ??
            this.autoscaledDeployments(
              cluster,
              namespace,
              options.autoscalers,
              kc,
              opts,
            ).then(hpas => hpas.has(name)),
          manifests.ingress && !known.ingress
            ? orUndefined(
                kc
                  .makeApiClient(NetworkingV1Api)
                  .readNamespacedIngress({ name, namespace }, opts()),
              )
            : known.ingress?.object,
        ]);
      return {
        kind: 'read',
        deployment,
        service,
        podDisruptionBudget,
        ingress,
        autoscaled,
      };
    } catch (error) {
      return {
        kind: 'unreachable',
        message: describeKubeError(error, this.requestTimeoutMs),
      };
    }
  }

  /** The names of the Deployments an HPA targets in `namespace`, shared through `cache`. */
  private autoscaledDeployments(
    cluster: ClusterAccess,
    namespace: string,
    cache: AutoscalerCache | undefined,
    kc: KubeConfig,
    opts: () => ConfigurationOptions,
  ): Promise<Set<string>> {
    const read = async () =>
      new Set(
        (
          await kc
            .makeApiClient(AutoscalingV2Api)
            .listNamespacedHorizontalPodAutoscaler({ namespace }, opts())
        ).items
          .filter(hpa => hpa.spec?.scaleTargetRef?.kind === 'Deployment')
          .map(hpa => hpa.spec!.scaleTargetRef.name),
      );
    if (!cache) return read();
    const key = `${cluster.name}\u0000${namespace}`;
    let names = cache.get(key);
    if (!names) {
      names = read();
      // A failed read is not shared: the next deployment of that cluster tries again.
      names.catch(() => cache.delete(key));
      cache.set(key, names);
    }
    return names;
  }

  /** Reads the live Deployment and says whether its rollout is complete. */
  async rolloutState(
    cluster: ClusterAccess,
    namespace: string,
    name: string,
  ): Promise<RolloutState> {
    const loaded = await this.clients.kubeConfigFor(cluster);
    if (loaded.kind === 'unusable')
      return { kind: 'unreachable', message: loaded.reason };
    const apps = loaded.kubeConfig.makeApiClient(AppsV1Api);
    let live: V1Deployment;
    try {
      live = await apps.readNamespacedDeployment(
        { name, namespace },
        loaded.requestOptions(this.requestTimeoutMs),
      );
    } catch (error) {
      if (isKubeStatus(error, 404)) return { kind: 'missing' };
      return {
        kind: 'unreachable',
        message: describeKubeError(error, this.requestTimeoutMs),
      };
    }
    return rolloutStateOf(live);
  }
}
