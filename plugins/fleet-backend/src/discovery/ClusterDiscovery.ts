import { LoggerService } from '@backstage/backend-plugin-api';
import type { ClusterOrigin, ClusterStore } from '../database/types';
import {
  discoverKubeconfigClusters,
  DiscoveryResult,
  DiscoverySources,
  type KubeconfigItem,
  type KubeconfigReadCache,
} from './discoverKubeconfigClusters';

/** Kubeconfigs besides the files (hub Secrets, in-cluster config), listed once per discovery. */
export type ExtraKubeconfigs = () => Promise<{
  items: KubeconfigItem[];
  warnings: string[];
}>;

/** What discovery reads and writes of the clusters. */
export type DiscoveryClusterStore = Pick<
  ClusterStore,
  'listClusterOrigins' | 'upsertDiscoveredClusters'
>;

/** Reads the kubeconfig sources and upserts what they name into the store. */
export class ClusterDiscovery {
  /** The names the last discovery found, and when it started (see `discoveredNames`). */
  private last?: { at: number; names: Promise<Set<string>>; settled: boolean };
  /** What the last discoveries read of each file: unchanged files are not parsed again. */
  private readonly reads: KubeconfigReadCache = new Map();

  private constructor(
    private readonly clusters: DiscoveryClusterStore,
    private readonly logger: LoggerService,
    private readonly sources: DiscoverySources,
    private readonly extra?: ExtraKubeconfigs,
  ) {}

  static create(options: {
    clusters: DiscoveryClusterStore;
    logger: LoggerService;
    sources: DiscoverySources;
    /** Kubeconfigs read from the hub cluster (see `hubKubeconfigItems`). */
    extra?: ExtraKubeconfigs;
  }) {
    return new ClusterDiscovery(
      options.clusters,
      options.logger,
      options.sources,
      options.extra,
    );
  }

  /** What the sources name now, the stored clusters keeping their names and API servers. */
  async discover(): Promise<DiscoveryResult & { origins: ClusterOrigin[] }> {
    const stored = await this.clusters.listClusterOrigins();
    const extra = this.extra ? await this.extra() : { items: [], warnings: [] };
    // Manual clusters too: their names and API servers are taken.
    const result = await discoverKubeconfigClusters(
      this.sources,
      stored,
      extra.items,
      this.reads,
    );
    return {
      ...result,
      warnings: [...extra.warnings, ...result.warnings],
      origins: stored,
    };
  }

  /**
   * The names discovery finds, from a discovery that started less than `maxAgeMs` ago (the last
   * `run()` or an earlier call's) or else a new one, which callers meanwhile share: API requests
   * (a DELETE of a discovered cluster) do not read every kubeconfig source each.
   */
  async discoveredNames(maxAgeMs: number): Promise<Set<string>> {
    const last = this.last;
    if (last && (!last.settled || Date.now() - last.at < maxAgeMs)) {
      return last.names;
    }
    const at = Date.now();
    const names = this.discover().then(
      result => new Set(result.clusters.map(c => c.name)),
    );
    const entry = { at, names, settled: false };
    this.last = entry;
    names.then(
      () => {
        entry.settled = true;
      },
      () => {
        // A failed discovery is not kept: the next caller tries again.
        if (this.last === entry) this.last = undefined;
      },
    );
    return names;
  }

  async run(): Promise<{
    inserted: string[];
    updated: string[];
    warnings: string[];
  }> {
    if (
      !this.sources.kubeconfigPath &&
      !this.sources.kubeconfigDir &&
      !this.extra
    ) {
      return { inserted: [], updated: [], warnings: [] };
    }
    // One read of the stored clusters serves the naming and the upsert.
    const at = Date.now();
    const { clusters, warnings, origins } = await this.discover();
    this.last = {
      at,
      names: Promise.resolve(new Set(clusters.map(c => c.name))),
      settled: true,
    };
    for (const warning of warnings) this.logger.warn(warning);
    const { inserted, updated, failed } =
      await this.clusters.upsertDiscoveredClusters(clusters, origins);
    for (const { name, message } of failed) {
      const warning = `Could not record discovered cluster '${name}': ${message}`;
      this.logger.warn(warning, { cluster: name });
      warnings.push(warning);
    }
    if (inserted.length) {
      this.logger.info(`Discovered new clusters: ${inserted.join(', ')}`, {
        clusters: inserted.join(','),
      });
    }
    if (updated.length) {
      this.logger.info(
        `Updated endpoint or kubeconfig of clusters: ${updated.join(', ')}`,
        { clusters: updated.join(',') },
      );
    }
    return { inserted, updated, warnings };
  }
}
