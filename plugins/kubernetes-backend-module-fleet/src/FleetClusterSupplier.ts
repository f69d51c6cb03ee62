import type {
  BackstageCredentials,
  LoggerService,
} from '@backstage/backend-plugin-api';
import { readDurationFromConfig, type Config } from '@backstage/config';
import { ForwardedError } from '@backstage/errors';
import { ANNOTATION_KUBERNETES_AUTH_PROVIDER } from '@backstage/plugin-kubernetes-common';
import type {
  ClusterDetails,
  KubernetesClustersSupplier,
} from '@backstage/plugin-kubernetes-node';
import type { Cluster } from '@cnp/plugin-fleet-common';
import {
  KubeconfigAccessPolicy,
  parseErrorSummary,
  readKubeconfigFile,
  sameKubernetesServer,
  type FleetService,
} from '@cnp/plugin-fleet-node';
import type { KubeConfig } from '@kubernetes/client-node';

/**
 * The auth provider of the clusters this module supplies (`kubernetes.io/auth-provider`): the
 * key of {@link FleetAuthStrategy}.
 *
 * @public
 */
export const FLEET_AUTH_PROVIDER = 'fleet';

const DEFAULT_REFRESH_MS = 30_000;

/** @public */
export interface FleetClusterSupplierOptions {
  fleet: FleetService;
  logger: LoggerService;
  /** Which kubeconfig files may be opened: Fleet's own rule (`fleet.discovery.*`). */
  policy: KubeconfigAccessPolicy;
  /** Whether a manual cluster's kubeconfig may run an exec plugin or auth-provider (Fleet's `fleet.discovery.allowExecForManual`). */
  allowExecForManual?: boolean;
  /** How long the cluster list is kept before Fleet is asked again (default 30 s). */
  refreshIntervalMs?: number;
  skipMetricsLookup?: boolean;
  /** The clock (tests). */
  now?: () => number;
}

interface Loaded {
  /** What the file and the cluster's fields were when it was read: it is read again when they change. */
  key: string;
  kubeConfig: KubeConfig;
  details: ClusterDetails;
}

/**
 * Fleet's latest health probe of a cluster failed: the cluster is in its grace period before an
 * outage is confirmed (still ONLINE), or has not come up yet (UNKNOWN).
 *
 * @public
 */
export interface ProbeFailure {
  /** How many probes in a row failed. */
  consecutiveFailures: number;
  /** When the latest probe ran (ISO 8601). */
  lastProbeAt: string | null;
}

type LoadOutcome =
  | { kind: 'ok'; loaded: Loaded }
  | { kind: 'skipped'; reason: string };

/**
 * The Kubernetes plugin's clusters, read from Fleet: every cluster Fleet knows that is not
 * OFFLINE and whose kubeconfig Fleet's rules let it use, with that kubeconfig's server, CA and
 * TLS settings. The list is read from Fleet's API (as this plugin, a service) and kept
 * `refreshIntervalMs`; the kubeconfig files are opened under the same rules as Fleet's own
 * clients: only inside Fleet's kubeconfig directories, only when the kubeconfig names the very
 * server Fleet has for the cluster, and never running an exec plugin for a manual cluster
 * unless Fleet allows it. Credentials are not part of the details: {@link FleetAuthStrategy}
 * asks {@link FleetClusterSupplier.kubeConfigFor} for each request.
 *
 * @public
 */
export class FleetClusterSupplier implements KubernetesClustersSupplier {
  private readonly loaded = new Map<string, Loaded>();
  private readonly skipped = new Map<string, string>();
  private failing = new Map<string, ProbeFailure>();
  private list?: { at: number; clusters: ClusterDetails[] };
  private refreshing?: Promise<ClusterDetails[]>;

  private constructor(private readonly options: FleetClusterSupplierOptions) {}

  static create(options: FleetClusterSupplierOptions): FleetClusterSupplier {
    return new FleetClusterSupplier(options);
  }

  /** Reads `kubernetes.fleet.*` and Fleet's own `fleet.discovery.*`. */
  static fromConfig(
    config: Config,
    deps: { fleet: FleetService; logger: LoggerService },
  ): FleetClusterSupplier {
    const own = config.getOptionalConfig('kubernetes.fleet');
    let refreshIntervalMs = DEFAULT_REFRESH_MS;
    if (own?.has('refreshInterval')) {
      const duration = readDurationFromConfig(own, { key: 'refreshInterval' });
      refreshIntervalMs =
        (((duration.days ?? 0) * 24 + (duration.hours ?? 0)) * 60 +
          (duration.minutes ?? 0)) *
          60_000 +
        (duration.seconds ?? 0) * 1000 +
        (duration.milliseconds ?? 0);
    }
    return new FleetClusterSupplier({
      ...deps,
      policy: KubeconfigAccessPolicy.fromConfig(config),
      allowExecForManual:
        config.getOptionalBoolean('fleet.discovery.allowExecForManual') ??
        false,
      refreshIntervalMs,
      skipMetricsLookup: own?.getOptionalBoolean('skipMetricsLookup') ?? false,
    });
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  async getClusters(_options?: {
    credentials: BackstageCredentials;
  }): Promise<ClusterDetails[]> {
    const interval = this.options.refreshIntervalMs ?? DEFAULT_REFRESH_MS;
    if (this.list && this.now() - this.list.at < interval)
      return this.list.clusters;
    return this.refresh();
  }

  /**
   * The kubeconfig of a cluster this supplier gave, as last read (its user's credentials sign
   * the Kubernetes plugin's requests); undefined for a cluster it does not supply.
   */
  async kubeConfigFor(name: string): Promise<KubeConfig | undefined> {
    await this.getClusters();
    return this.loaded.get(name)?.kubeConfig;
  }

  /**
   * Set when Fleet's latest health probe of a cluster this supplier gives failed (as of the
   * list last read): the tab does not wait on such a cluster.
   */
  probeFailure(name: string): ProbeFailure | undefined {
    return this.failing.get(name);
  }

  /** Reads Fleet's cluster list now (callers at the same time share one read). */
  refresh(): Promise<ClusterDetails[]> {
    if (!this.refreshing) {
      this.refreshing = this.readClusters().finally(() => {
        this.refreshing = undefined;
      });
    }
    return this.refreshing;
  }

  private async readClusters(): Promise<ClusterDetails[]> {
    const { fleet, logger } = this.options;
    let clusters: Cluster[];
    try {
      clusters = await fleet.listClusters();
    } catch (error) {
      if (this.list) {
        // Fleet is restarting or unreachable: the clusters it gave last stay until it answers.
        logger.warn(
          'Could not read the clusters from Fleet; keeping the last list',
          error instanceof Error ? error : undefined,
        );
        this.list = { at: this.now(), clusters: this.list.clusters };
        return this.list.clusters;
      }
      throw new ForwardedError('Could not read the clusters from Fleet', error);
    }
    const names = new Set(clusters.map(c => c.name));
    for (const name of [...this.loaded.keys()])
      if (!names.has(name)) this.loaded.delete(name);
    const failing = new Map<string, ProbeFailure>();
    const details: ClusterDetails[] = [];
    for (const cluster of clusters.sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const outcome = await this.load(cluster);
      if (outcome.kind === 'ok') {
        this.skipped.delete(cluster.name);
        details.push(outcome.loaded.details);
        // A failed probe resets the successes: the latest probe failed. (During a recovery
        // Fleet keeps the outage's failure count with successes counted; not-probeable keeps
        // both.)
        if (
          cluster.consecutiveFailures > 0 &&
          cluster.consecutiveSuccesses === 0
        )
          failing.set(cluster.name, {
            consecutiveFailures: cluster.consecutiveFailures,
            lastProbeAt: cluster.lastProbeAt,
          });
        continue;
      }
      this.loaded.delete(cluster.name);
      if (this.skipped.get(cluster.name) !== outcome.reason) {
        // Said once per cluster and reason, not at every refresh.
        logger.info(
          `Fleet cluster '${cluster.name}' is not given to the Kubernetes plugin: ${outcome.reason}`,
        );
        this.skipped.set(cluster.name, outcome.reason);
      }
    }
    this.list = { at: this.now(), clusters: details };
    this.failing = failing;
    return details;
  }

  private async load(cluster: Cluster): Promise<LoadOutcome> {
    const skip = (reason: string): LoadOutcome => ({ kind: 'skipped', reason });
    if (cluster.status === 'OFFLINE') return skip('it is OFFLINE');
    const ref = cluster.kubeconfigRef;
    if (!ref) {
      return skip(
        'Fleet does not show this plugin where its kubeconfig is (the kubernetes plugin needs the visibility of a cluster admin)',
      );
    }
    const resolved = await this.options.policy.resolve(ref);
    if (resolved.kind === 'unusable') return skip(resolved.reason);
    const key = [
      resolved.path,
      resolved.stat.ino,
      resolved.stat.mtimeMs,
      resolved.stat.size,
      cluster.context ?? '',
      cluster.endpoint,
      cluster.source,
    ].join('|');
    const cached = this.loaded.get(cluster.name);
    if (cached?.key === key) return { kind: 'ok', loaded: cached };

    let kubeConfig: KubeConfig;
    try {
      const read = await readKubeconfigFile(resolved.path, resolved.stat);
      if (read.kind === 'skipped')
        return skip(`its kubeconfig file is ${read.reason}`);
      kubeConfig = read.kubeConfig;
    } catch (error) {
      return skip(
        `its kubeconfig file is malformed: ${parseErrorSummary(error)}`,
      );
    }
    if (cluster.context) {
      if (!kubeConfig.getContextObject(cluster.context))
        return skip(`its kubeconfig has no context '${cluster.context}'`);
      kubeConfig.setCurrentContext(cluster.context);
    }
    const current = kubeConfig.getCurrentCluster();
    if (!current) return skip('its kubeconfig names no cluster');
    if (!sameKubernetesServer(current.server, cluster.endpoint)) {
      // Never send a kubeconfig's credentials to a server it does not name.
      return skip(
        `its kubeconfig names another server than the cluster's endpoint ${cluster.endpoint}`,
      );
    }
    const user = kubeConfig.getCurrentUser();
    if (
      cluster.source === 'manual' &&
      (user?.exec || user?.authProvider) &&
      !this.options.allowExecForManual
    ) {
      return skip(
        'its kubeconfig runs a credential plugin, which Fleet runs only for discovered clusters (fleet.discovery.allowExecForManual)',
      );
    }
    const loaded: Loaded = {
      key,
      kubeConfig,
      details: {
        name: cluster.name,
        title: cluster.name,
        url: current.server,
        authMetadata: {
          [ANNOTATION_KUBERNETES_AUTH_PROVIDER]: FLEET_AUTH_PROVIDER,
        },
        ...(current.caData ? { caData: current.caData } : {}),
        ...(current.caFile ? { caFile: current.caFile } : {}),
        ...(current.skipTLSVerify ? { skipTLSVerify: true } : {}),
        skipMetricsLookup: this.options.skipMetricsLookup ?? false,
      },
    };
    this.loaded.set(cluster.name, loaded);
    return { kind: 'ok', loaded };
  }
}
