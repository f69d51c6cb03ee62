import type { Cluster, Deployment } from '@cnp/plugin-fleet-common';
import type { FleetApi } from '../../api';
import { loadReleases } from '../ReleasePanel/loadReleases';

/** A cluster name: a DNS-1123 label. */
const CLUSTER_NAME = /^(?=.{1,63}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** What the deployments card shows, read in one poll. */
export type DeploymentsCardData = {
  deployments: Deployment[];
  /** The clusters the card shows: those the entity names and those it is deployed to. */
  clusters: Cluster[];
} & Awaited<ReturnType<typeof loadReleases>>;

/**
 * The clusters the card shows a chip or a row for: those the entity names (`cnp.io/clusters`),
 * then those its deployments are on.
 */
export function shownClusterNames(
  named: string[],
  deployments: Deployment[],
): string[] {
  return [...new Set([...named, ...deployments.map(d => d.cluster)])];
}

/**
 * One poll of the deployments card: the entity's deployments, then, side by side, the clusters
 * it shows (asked for by name, not the whole fleet: a card's poll stays the size of the
 * component, whatever the size of the fleet) and its application's releases.
 */
export async function loadDeploymentsCard(
  api: FleetApi,
  options: { entityRef: string; named: string[] },
): Promise<DeploymentsCardData> {
  const { entityRef, named } = options;
  const deployments = await api.listDeployments({ entityRef });
  // A name that is no cluster name (a typo in the annotation) names no cluster: it is shown as
  // unknown, never asked for, so that it cannot fail the whole card.
  const names = shownClusterNames(named, deployments).filter(name =>
    CLUSTER_NAME.test(name),
  );
  const [clusters, releases] = await Promise.all([
    names.length > 0 ? api.listClusters({ names }) : [],
    loadReleases(api, entityRef, deployments),
  ]);
  return { deployments, clusters, ...releases };
}
