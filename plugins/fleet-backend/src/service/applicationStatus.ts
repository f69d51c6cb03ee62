import {
  imageVersion,
  SYNC_STATUSES,
  versionsSummary,
  type Application,
  type ApplicationFleetStatus,
  type Deployment,
} from '@cnp/plugin-fleet-common';

/** One application across the fleet: each cluster's revision, image and statuses, and totals. */
export function applicationFleetStatus(
  application: Application,
  deployments: Deployment[],
): ApplicationFleetStatus {
  const bySyncStatus = Object.fromEntries(
    SYNC_STATUSES.map(s => [s, 0]),
  ) as ApplicationFleetStatus['totals']['bySyncStatus'];
  const images = new Map<string, number>();
  for (const d of deployments) {
    bySyncStatus[d.syncStatus] += 1;
    if (d.image) images.set(d.image, (images.get(d.image) ?? 0) + 1);
  }
  const byImage = [...images.entries()]
    .map(([image, clusters]) => ({ image, clusters }))
    .sort((a, b) => b.clusters - a.clusters || a.image.localeCompare(b.image));
  const versions = versionsSummary(
    deployments.flatMap(d => (d.image ? [imageVersion(d.image)] : [])),
  );
  const summary = deployments.length
    ? `${bySyncStatus.SYNCED} of ${deployments.length} SYNCED${
        versions ? `; ${versions}` : ''
      }`
    : 'not deployed';
  return {
    applicationId: application.id,
    entityRef: application.entityRef,
    clusters: deployments.map(d => ({
      cluster: d.cluster,
      deploymentId: d.id,
      revision: d.revision,
      image: d.image ?? null,
      status: d.status,
      syncStatus: d.syncStatus,
      placed: d.placed,
    })),
    totals: { deployments: deployments.length, bySyncStatus, byImage },
    summary,
  };
}
