import type { LeaseFence } from '../database/types';

/**
 * One run under a lease: the lease (its fencing token goes with every write) and whether it was
 * lost, after which nothing more is written under it.
 */
export interface LeaseRun {
  lease: LeaseFence;
  lost: boolean;
}

/**
 * The clusters this replica holds, as its shard leases say: the reconcile and the watches follow
 * the same split as the health cycle.
 */
export interface ShardOwnership {
  /** The shards held now, as one view: a run judges all its clusters by the same one. */
  current(): { holdsCluster(cluster: string): boolean };
}
