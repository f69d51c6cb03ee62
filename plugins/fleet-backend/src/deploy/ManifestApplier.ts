import {
  AppsV1Api,
  AutoscalingV2Api,
  CoreV1Api,
  NetworkingV1Api,
  PatchStrategy,
  PolicyV1Api,
  setHeaderOptions,
  type V1Deployment,
  type V1Ingress,
  type V1PodDisruptionBudget,
  type ConfigurationOptions,
  type KubeConfig,
  type V1Service,
} from '@kubernetes/client-node';
import type {
  ClusterAccess,
  ClusterClients,
} from '../kubernetes/ClusterClients';
import { describeKubeError, isKubeStatus } from '../kubernetes/requestOptions';
import { diffObject } from '../kubernetes/diffObject';
import { ENTITY_REF_ANNOTATION, type Manifests } from './manifests';
import {
  assertFleetOwned,
  deleteIfFleetOwned,
  OwnershipConflictError,
} from './ownership';

export type ApplyResult =
  | { kind: 'applied'; generation?: number }
  | { kind: 'not-configured'; message: string }
  | {
      kind: 'failed';
      message: string;
      /** `OWNERSHIP_CONFLICT`: a foreign object stands where one of Fleet's would go. */
      reason?: 'OWNERSHIP_CONFLICT';
    };

/** The live counterparts of an application's objects on one cluster. */
/** HPA-targeted Deployment names per cluster and namespace, for one reconcile run. */
export type AutoscalerCache = Map<string, Promise<Set<string>>>;

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
  | { kind: 'unreachable'; message: string }
  | { kind: 'missing' };

/** Whether Fleet may create the namespace an application (`entityRef`, `appName`) goes to. */
export type NamespaceCreationPolicy = (request: {
  entityRef: string;
  appName: string;
  namespace: string;
}) => Promise<boolean>;

/**
 * Applies an application's objects to one cluster through that cluster's own client,
 * idempotently: Deployment and PodDisruptionBudget are created, and patched on 409; the Service
 * is created, and replaced on 409 keeping its clusterIP and resourceVersion; the namespace is
 * created when missing.
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
    const kc = loaded.kubeConfig;
    const core = kc.makeApiClient(CoreV1Api);
    const apps = kc.makeApiClient(AppsV1Api);
    const policy = kc.makeApiClient(PolicyV1Api);
    const opts = () => loaded.requestOptions(this.requestTimeoutMs);
    const mergePatch = () =>
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch, opts());

    const entityRef =
      manifests.deployment.metadata?.annotations?.[ENTITY_REF_ANNOTATION];
    /**
     * On a 409, the object there must be Fleet's for this entity (its `managed-by` label and
     * entity-ref annotation): never patch or replace someone else's.
     */
    const assertOurs = (
      kind: string,
      live: {
        metadata?: {
          name?: string;
          labels?: Record<string, string>;
          annotations?: Record<string, string>;
        };
      },
    ) =>
      assertFleetOwned(
        kind,
        namespace,
        live.metadata?.name ?? manifests.deployment.metadata!.name!,
        live,
        entityRef,
      );

    try {
      // Create the namespace when missing and the project names it exactly (a namespace
      // matched by a pattern must exist already); a namespace-scoped account may not read
      // namespaces (403), and someone else may have created it meanwhile (409): both mean "go on".
      const creates =
        entityRef !== undefined &&
        (await this.mayCreateNamespace({
          entityRef,
          appName: manifests.deployment.metadata!.name!,
          namespace,
        }));
      if (creates) {
        try {
          await core.createNamespace(
            {
              body: {
                metadata: {
                  name: namespace,
                  labels: { 'app.kubernetes.io/managed-by': 'fleet' },
                },
              },
            },
            opts(),
          );
        } catch (error) {
          if (!isKubeStatus(error, 409) && !isKubeStatus(error, 403))
            throw error;
        }
      }

      const { deployment, service, podDisruptionBudget } = manifests;
      const name = deployment.metadata!.name!;
      let applied: V1Deployment;
      try {
        applied = await apps.createNamespacedDeployment(
          { namespace, body: deployment },
          opts(),
        );
      } catch (error) {
        if (!isKubeStatus(error, 409)) throw error;
        assertOurs(
          'Deployment',
          await apps.readNamespacedDeployment({ name, namespace }, opts()),
        );
        const keepReplicas =
          options.ignoreReplicas ||
          (await this.autoscaledDeployments(
            cluster,
            namespace,
            options.autoscalers,
            kc,
            opts,
          ).then(
            names => names.has(name),
            () => false, // no right to list HPAs: nothing says one owns the count
          ));
        const { replicas: _ownedElsewhere, ...specWithoutReplicas } =
          deployment.spec!;
        applied = await apps.patchNamespacedDeployment(
          {
            name,
            namespace,
            body: keepReplicas
              ? { ...deployment, spec: specWithoutReplicas }
              : deployment,
          },
          mergePatch(),
        );
      }

      const serviceName = service.metadata!.name!;
      try {
        await core.createNamespacedService(
          { namespace, body: service },
          opts(),
        );
      } catch (error) {
        if (!isKubeStatus(error, 409)) throw error;
        const live = await core.readNamespacedService(
          { name: serviceName, namespace },
          opts(),
        );
        assertOurs('Service', live);
        // Replace only when Fleet's fields differ: an identical apply changes nothing.
        if (diffObject(service, live).length > 0) {
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
      }

      if (podDisruptionBudget) {
        try {
          await policy.createNamespacedPodDisruptionBudget(
            { namespace, body: podDisruptionBudget },
            opts(),
          );
        } catch (error) {
          if (!isKubeStatus(error, 409)) throw error;
          assertOurs(
            'PodDisruptionBudget',
            await policy.readNamespacedPodDisruptionBudget(
              { name, namespace },
              opts(),
            ),
          );
          // A PDB of an earlier Fleet had minAvailable: a merge patch must clear it, as a PDB
          // cannot have both.
          await policy.patchNamespacedPodDisruptionBudget(
            {
              name,
              namespace,
              body: {
                ...podDisruptionBudget,
                spec: { ...podDisruptionBudget.spec, minAvailable: null },
              },
            },
            mergePatch(),
          );
        }
      } else {
        // Fewer than 2 replicas: a PDB of ours from an earlier spec must go, never someone else's.
        await deleteIfFleetOwned(
          entityRef,
          () =>
            policy.readNamespacedPodDisruptionBudget(
              { name, namespace },
              opts(),
            ),
          body =>
            policy.deleteNamespacedPodDisruptionBudget(
              { name, namespace, body },
              opts(),
            ),
        );
      }
      await this.applyIngress(kc, namespace, name, manifests.ingress, {
        entityRef,
        opts,
        mergePatch,
        assertOurs,
      });
      return { kind: 'applied', generation: applied.metadata?.generation };
    } catch (error) {
      if (error instanceof OwnershipConflictError)
        return {
          kind: 'failed',
          message: error.message,
          reason: 'OWNERSHIP_CONFLICT',
        };
      return {
        kind: 'failed',
        message: describeKubeError(error, this.requestTimeoutMs),
      };
    }
  }

  /**
   * The Ingress: created, and patched on 409 (when it is ours); when the application no longer
   * asks for one, an Ingress of ours from an earlier spec is deleted, never someone else's.
   */
  private async applyIngress(
    kc: KubeConfig,
    namespace: string,
    name: string,
    ingress: V1Ingress | undefined,
    helpers: {
      entityRef: string | undefined;
      opts: () => ConfigurationOptions;
      mergePatch: () => ConfigurationOptions;
      assertOurs: (
        kind: string,
        live: {
          metadata?: {
            name?: string;
            labels?: Record<string, string>;
            annotations?: Record<string, string>;
          };
        },
      ) => void;
    },
  ): Promise<void> {
    const networking = kc.makeApiClient(NetworkingV1Api);
    const { opts, mergePatch, assertOurs, entityRef } = helpers;
    if (ingress) {
      try {
        await networking.createNamespacedIngress(
          { namespace, body: ingress },
          opts(),
        );
      } catch (error) {
        if (!isKubeStatus(error, 409)) throw error;
        assertOurs(
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
          mergePatch(),
        );
      }
      return;
    }
    try {
      await deleteIfFleetOwned(
        entityRef,
        () => networking.readNamespacedIngress({ name, namespace }, opts()),
        body =>
          networking.deleteNamespacedIngress({ name, namespace, body }, opts()),
      );
    } catch (error) {
      // 404: none; 403: no right to read Ingresses, and then Fleet never made one there.
      if (!isKubeStatus(error, 404) && !isKubeStatus(error, 403)) throw error;
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

/** The rollout state of a live Deployment, as `kubectl rollout status` judges it. */
export function rolloutStateOf(live: V1Deployment): RolloutState {
  const desired = live.spec?.replicas ?? 1;
  const status = live.status ?? {};
  const generation = live.metadata?.generation ?? 0;
  const stalled = status.conditions?.find(
    c => c.type === 'Progressing' && c.reason === 'ProgressDeadlineExceeded',
  );
  if ((status.observedGeneration ?? 0) >= generation && stalled) {
    return {
      kind: 'deadline-exceeded',
      message: stalled.message ?? 'ProgressDeadlineExceeded',
    };
  }
  const updated = status.updatedReplicas ?? 0;
  const available = status.availableReplicas ?? 0;
  const total = status.replicas ?? 0;
  if ((status.observedGeneration ?? 0) < generation) {
    return {
      kind: 'progressing',
      message: 'waiting for the deployment spec update to be observed',
    };
  }
  if (updated < desired) {
    return {
      kind: 'progressing',
      message: `${updated} of ${desired} replicas updated`,
    };
  }
  if (total > updated) {
    return {
      kind: 'progressing',
      message: `${total - updated} old replicas pending termination`,
    };
  }
  if (available < desired) {
    return {
      kind: 'progressing',
      message: `${available} of ${desired} updated replicas available`,
    };
  }
  return { kind: 'ready' };
}
