import {
  AppsV1Api,
  CoreV1Api,
  NetworkingV1Api,
  PolicyV1Api,
  type V1ObjectMeta,
} from '@kubernetes/client-node';
import type {
  ClusterAccess,
  ClusterClients,
} from '../kubernetes/ClusterClients';
import { describeKubeError, isKubeStatus } from '../kubernetes/requestOptions';
import {
  ENTITY_REF_ANNOTATION,
  MANAGED_BY_LABEL,
  serviceNameFor,
} from './manifests';

export type RemoveResult =
  | { kind: 'removed'; removed: string[]; kept: string[] }
  | { kind: 'not-configured'; message: string }
  | { kind: 'failed'; message: string };

/**
 * Undeploys an application from one cluster: deletes the Deployment, Service,
 * PodDisruptionBudget and Ingress Fleet applied for it, and only those: an object of the same name that does
 * not carry Fleet's `managed-by` label and this entity's annotation is someone else's and stays.
 * An object already gone counts as removed.
 */
export class ManifestRemover {
  private constructor(
    private readonly clients: Pick<ClusterClients, 'kubeConfigFor'>,
    private readonly requestTimeoutMs: number,
  ) {}

  static create(options: {
    clients: Pick<ClusterClients, 'kubeConfigFor'>;
    requestTimeoutMs?: number;
  }): ManifestRemover {
    return new ManifestRemover(
      options.clients,
      options.requestTimeoutMs ?? 15_000,
    );
  }

  async remove(
    cluster: ClusterAccess,
    namespace: string,
    name: string,
    entityRef: string,
  ): Promise<RemoveResult> {
    const loaded = await this.clients.kubeConfigFor(cluster);
    if (loaded.kind === 'unusable')
      return { kind: 'not-configured', message: loaded.reason };
    const opts = () => loaded.requestOptions(this.requestTimeoutMs);
    const apps = loaded.kubeConfig.makeApiClient(AppsV1Api);
    const core = loaded.kubeConfig.makeApiClient(CoreV1Api);
    const policy = loaded.kubeConfig.makeApiClient(PolicyV1Api);
    const networking = loaded.kubeConfig.makeApiClient(NetworkingV1Api);
    const objects: Array<{
      kind: string;
      name: string;
      read: () => Promise<{ metadata?: V1ObjectMeta }>;
      remove: () => Promise<unknown>;
    }> = [
      {
        kind: 'Deployment',
        name,
        read: () => apps.readNamespacedDeployment({ name, namespace }, opts()),
        remove: () =>
          apps.deleteNamespacedDeployment({ name, namespace }, opts()),
      },
      {
        kind: 'Service',
        name: serviceNameFor(name),
        read: () =>
          core.readNamespacedService(
            { name: serviceNameFor(name), namespace },
            opts(),
          ),
        remove: () =>
          core.deleteNamespacedService(
            { name: serviceNameFor(name), namespace },
            opts(),
          ),
      },
      {
        kind: 'PodDisruptionBudget',
        name,
        read: () =>
          policy.readNamespacedPodDisruptionBudget({ name, namespace }, opts()),
        remove: () =>
          policy.deleteNamespacedPodDisruptionBudget(
            { name, namespace },
            opts(),
          ),
      },
      {
        kind: 'Ingress',
        name,
        read: () =>
          networking.readNamespacedIngress({ name, namespace }, opts()),
        remove: () =>
          networking.deleteNamespacedIngress({ name, namespace }, opts()),
      },
    ];
    const removed: string[] = [];
    const kept: string[] = [];
    try {
      for (const object of objects) {
        let live: { metadata?: V1ObjectMeta };
        try {
          live = await object.read();
        } catch (error) {
          if (isKubeStatus(error, 404)) continue; // already gone
          // No right to read Ingresses there: Fleet could not have made one either.
          if (object.kind === 'Ingress' && isKubeStatus(error, 403)) continue;
          throw error;
        }
        const ours =
          live.metadata?.labels?.[MANAGED_BY_LABEL] === 'fleet' &&
          live.metadata?.annotations?.[ENTITY_REF_ANNOTATION] === entityRef;
        if (!ours) {
          kept.push(`${object.kind}/${object.name}`);
          continue;
        }
        try {
          await object.remove();
        } catch (error) {
          if (!isKubeStatus(error, 404)) throw error;
        }
        removed.push(`${object.kind}/${object.name}`);
      }
    } catch (error) {
      return {
        kind: 'failed',
        message: describeKubeError(error, this.requestTimeoutMs),
      };
    }
    return { kind: 'removed', removed, kept };
  }
}
