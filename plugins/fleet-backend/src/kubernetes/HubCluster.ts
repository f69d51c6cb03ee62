import { CoreV1Api, KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { parseErrorSummary } from '@cnp/plugin-fleet-node';
import { describeKubeError, isKubeStatus, withTimeout } from './requestOptions';

/** How the backend reaches its hub cluster (see `fleet.hub`). */
export interface HubOptions {
  kubeconfigPath?: string;
  context?: string;
  inCluster: boolean;
  /** Prefix before /var/run/secrets/kubernetes.io/serviceaccount (tests, sidecar layouts). */
  serviceAccountPathPrefix?: string;
}

/** What a read of a Secret on the hub found. */
export type HubSecretRead =
  | { kind: 'found'; secret: V1Secret }
  | { kind: 'not-found' }
  | { kind: 'failed'; reason: string };

const REQUEST_TIMEOUT_MS = 10_000;

/**
 * The hub: the cluster Fleet reads kubeconfig Secrets from. In a pod with no kubeconfig
 * configured it is the cluster the backend runs in, reached with the pod's service account
 * (client-node's in-cluster config, whose token file is read again as the kubelet rotates it);
 * otherwise the kubeconfig file `fleet.hub.kubeconfigPath`, read again when it changes.
 */
export class HubCluster {
  private file?: { key: string; kubeConfig: KubeConfig };

  private constructor(private readonly options: HubOptions) {}

  /** The hub, or undefined when none is configured (Secret references are then not readable). */
  static create(options: HubOptions): HubCluster | undefined {
    if (!options.inCluster && !options.kubeconfigPath) return undefined;
    return new HubCluster(options);
  }

  get inCluster(): boolean {
    return this.options.inCluster;
  }

  /** Says which hub this is, for logs and reasons (never a credential). */
  describe(): string {
    return this.options.inCluster
      ? 'the cluster the backend runs in (in-cluster config)'
      : `the hub cluster of kubeconfig file '${this.options.kubeconfigPath}'`;
  }

  /** A fresh KubeConfig of the hub (callers may change its context). */
  async kubeConfig(): Promise<KubeConfig> {
    if (this.options.inCluster) {
      const kc = new KubeConfig();
      kc.loadFromCluster(this.options.serviceAccountPathPrefix || undefined);
      return kc;
    }
    const file = this.options.kubeconfigPath!;
    const stat = await fs.stat(file);
    const key = `${stat.ino}:${stat.mtimeMs}:${stat.size}`;
    if (this.file?.key !== key) {
      const kc = new KubeConfig();
      try {
        kc.loadFromString(await fs.readFile(file, 'utf8'));
        kc.makePathsAbsolute(path.dirname(file));
      } catch (error) {
        throw new Error(
          `hub kubeconfig file '${file}' is malformed: ${parseErrorSummary(
            error,
          )}`,
        );
      }
      if (this.options.context) {
        if (!kc.getContextObject(this.options.context)) {
          throw new Error(
            `hub kubeconfig file '${file}' has no context '${this.options.context}'`,
          );
        }
        kc.setCurrentContext(this.options.context);
      }
      this.file = { key, kubeConfig: kc };
    }
    const copy = new KubeConfig();
    copy.loadFromString(this.file.kubeConfig.exportConfig());
    return copy;
  }

  private async core(): Promise<CoreV1Api> {
    return (await this.kubeConfig()).makeApiClient(CoreV1Api);
  }

  /** Reads one Secret; a missing one and every failure are answers, never throws. */
  async readSecret(namespace: string, name: string): Promise<HubSecretRead> {
    let core: CoreV1Api;
    try {
      core = await this.core();
    } catch (error) {
      return { kind: 'failed', reason: parseErrorSummary(error) };
    }
    try {
      const secret = await core.readNamespacedSecret(
        { namespace, name },
        withTimeout(REQUEST_TIMEOUT_MS),
      );
      return { kind: 'found', secret };
    } catch (error) {
      if (isKubeStatus(error, 404)) return { kind: 'not-found' };
      return {
        kind: 'failed',
        reason: describeKubeError(error, REQUEST_TIMEOUT_MS),
      };
    }
  }

  /** The Secrets with these labels, in one namespace or in all; throws what went wrong. */
  async listSecrets(
    labelSelector: string,
    namespace?: string,
  ): Promise<V1Secret[]> {
    const core = await this.core();
    const items: V1Secret[] = [];
    let cont: string | undefined;
    try {
      do {
        const page = namespace
          ? await core.listNamespacedSecret(
              { namespace, labelSelector, limit: 500, _continue: cont },
              withTimeout(REQUEST_TIMEOUT_MS),
            )
          : await core.listSecretForAllNamespaces(
              { labelSelector, limit: 500, _continue: cont },
              withTimeout(REQUEST_TIMEOUT_MS),
            );
        items.push(...page.items);
        cont = page.metadata?._continue || undefined;
      } while (cont);
    } catch (error) {
      throw new Error(describeKubeError(error, REQUEST_TIMEOUT_MS));
    }
    return items;
  }
}
