import { LoggerService } from '@backstage/backend-plugin-api';
import type { FleetStore } from '../database/FleetStore';
import {
  discoverKubeconfigClusters,
  DiscoveryResult,
  DiscoverySources,
} from './discoverKubeconfigClusters';

/** Reads the kubeconfig sources and upserts what they name into the store. */
export class ClusterDiscovery {
  private constructor(
    private readonly store: FleetStore,
    private readonly logger: LoggerService,
    private readonly sources: DiscoverySources,
  ) {}

  static create(options: {
    store: FleetStore;
    logger: LoggerService;
    sources: DiscoverySources;
  }) {
    return new ClusterDiscovery(options.store, options.logger, options.sources);
  }

  /** What the sources name now, the clusters discovered before keeping their names. */
  async discover(): Promise<DiscoveryResult> {
    const known = (await this.store.listClusters())
      .filter(c => c.source === 'discovered')
      .map(c => ({
        name: c.name,
        endpoint: c.endpoint,
        kubeconfigRef: c.kubeconfigRef,
        context: c.context ?? undefined,
      }));
    return discoverKubeconfigClusters(this.sources, known);
  }

  async run(): Promise<{
    inserted: string[];
    updated: string[];
    warnings: string[];
  }> {
    if (!this.sources.kubeconfigPath && !this.sources.kubeconfigDir) {
      return { inserted: [], updated: [], warnings: [] };
    }
    const { clusters, warnings } = await this.discover();
    for (const warning of warnings) this.logger.warn(warning);
    const { inserted, updated, failed } =
      await this.store.upsertDiscoveredClusters(clusters);
    for (const { name, message } of failed) {
      const warning = `Could not record discovered cluster '${name}': ${message}`;
      this.logger.warn(warning);
      warnings.push(warning);
    }
    if (inserted.length)
      this.logger.info(`Discovered new clusters: ${inserted.join(', ')}`);
    if (updated.length) {
      this.logger.info(
        `Updated endpoint or kubeconfig of clusters: ${updated.join(', ')}`,
      );
    }
    return { inserted, updated, warnings };
  }
}
