import {
  AppsV1Api,
  CoreV1Api,
  NetworkingV1Api,
  PolicyV1Api,
  type V1DeleteOptions,
  type V1ObjectMeta,
} from '@kubernetes/client-node';
import type {
  ClusterAccess,
  ClusterClients,
} from '../kubernetes/ClusterClients';
import { describeKubeError, isKubeStatus } from '../kubernetes/requestOptions';
import { serviceNameFor } from './manifests';
import { deleteIfFleetOwned } from './ownership';

export type RemoveResult =
  | { kind: 'removed'; removed: string[]; kept: string[] }
  | { kind: 'not-configured'; message: string }
  | { kind: 'failed'; message: string };

/** The application whose objects go: its name and entity ref, on one cluster and namespace. */
export interface RemoveRequest {
  cluster: ClusterAccess;
  namespace: string;
  /** The application's Kubernetes name (`Application.name`). */
  name: string;
  entityRef: string;
}

/**
 * Undeploys an application from one cluster: deletes the Deployment, Service,
 * PodDisruptionBudget and Ingress Fleet applied for it, and only those: an object of the same name that does
 * not carry Fleet's `managed-by` label and this entity's annotation is someone else's and stays.
 * An object already gone counts as removed. Each delete is conditional on the object read (its
 * uid and resourceVersion), so an object someone else makes under that name meanwhile stays.
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

  async remove(request: RemoveRequest): Promise<RemoveResult> {
    const { cluster, namespace, name, entityRef } = request;
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
      remove: (options: V1DeleteOptions) => Promise<unknown>;
    }> = [
      {
        kind: 'Deployment',
        name,
        read: () => apps.readNamespacedDeployment({ name, namespace }, opts()),
        remove: body =>
          apps.deleteNamespacedDeployment({ name, namespace, body }, opts()),
      },
      {
        kind: 'Service',
        name: serviceNameFor(name),
        read: () =>
          core.readNamespacedService(
            { name: serviceNameFor(name), namespace },
            opts(),
          ),
        remove: body =>
          core.deleteNamespacedService(
            { name: serviceNameFor(name), namespace, body },
            opts(),
          ),
      },
      {
        kind: 'PodDisruptionBudget',
        name,
        read: () =>
          policy.readNamespacedPodDisruptionBudget({ name, namespace }, opts()),
        remove: body =>
          policy.deleteNamespacedPodDisruptionBudget(
            { name, namespace, body },
            opts(),
          ),
      },
      {
        kind: 'Ingress',
        name,
        read: () =>
          networking.readNamespacedIngress({ name, namespace }, opts()),
        remove: body =>
          networking.deleteNamespacedIngress({ name, namespace, body }, opts()),
      },
    ];
    const removed: string[] = [];
    const kept: string[] = [];
    try {
      for (const object of objects) {
        let outcome;
        try {
          outcome = await deleteIfFleetOwned(
            entityRef,
            object.read,
            object.remove,
          );
        } catch (error) {
          // No right to read Ingresses there: Fleet could not have made one either.
          if (object.kind === 'Ingress' && isKubeStatus(error, 403)) continue;
          throw error;
        }
        if (outcome === 'foreign') kept.push(`${object.kind}/${object.name}`);
        else if (outcome === 'deleted')
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
