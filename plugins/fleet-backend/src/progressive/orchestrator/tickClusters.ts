import type { ReleaseProgress } from '@cnp/plugin-fleet-common';
import type { ClusterRecord, ClusterStore } from '../../database/types';

/**
 * The clusters one run of the release task has read, shared by the releases it advances: only
 * the clusters a release's work of this tick names, each read once, never the whole fleet.
 */
export class TickClusters {
  /** What was read, by name; a name read that is not there is a cluster removed from Fleet. */
  readonly byName = new Map<string, ClusterRecord>();
  private readonly reads = new Map<string, Promise<void>>();

  constructor(private readonly store: Pick<ClusterStore, 'listClusters'>) {}

  /** Reads the clusters of these names that this run has not read yet. */
  async load(names: Iterable<string>): Promise<void> {
    const wanted = [...new Set(names)];
    const missing = wanted.filter(name => !this.reads.has(name));
    if (missing.length) {
      const read = this.store.listClusters({ names: missing }).then(list => {
        for (const cluster of list) this.byName.set(cluster.name, cluster);
      });
      for (const name of missing) this.reads.set(name, read);
    }
    await Promise.all(wanted.map(name => this.reads.get(name)));
  }
}

/**
 * The clusters a release's tick starts with: those of its current wave (all of its clusters
 * before its first step, for the ownership check), or those going back while it aborts. What
 * the tick needs beyond them (the next wave, every cluster once it fails) is read as it goes.
 */
export function clustersToRead(p: ReleaseProgress): string[] {
  if (p.phase === 'PROGRESSING') {
    const first =
      p.currentWave === 0 && p.clusters.every(c => c.state === 'WAITING');
    return p.clusters
      .filter(c => first || c.wave === p.currentWave)
      .map(c => c.cluster);
  }
  if (p.phase === 'ABORTING') {
    return p.clusters
      .filter(c => c.state === 'ROLLING_BACK' || c.state === 'ROLLBACK_PENDING')
      .map(c => c.cluster);
  }
  return [];
}
