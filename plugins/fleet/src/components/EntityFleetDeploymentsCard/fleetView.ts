import {
  imageVersion,
  versionsSummary,
  type Deployment,
} from '@cnp/plugin-fleet-common';

/**
 * The fleet view of one component, from its deployments: which version runs on how many
 * clusters, most first, and how many are SYNCED, e.g.
 * "1.4.2 on 3 clusters, 1.4.1 on 1; 3 of 4 SYNCED". Deployments being removed are counted apart.
 */
export function fleetView(deployments: Deployment[]): string | undefined {
  const kept = deployments.filter(d => d.status !== 'REMOVING');
  const removing = deployments.length - kept.length;
  const parts: string[] = [];
  if (kept.length > 0) {
    const versions = versionsSummary(
      kept.map(d => (d.image ? imageVersion(d.image) : 'no image')),
    );
    const synced = kept.filter(d => d.syncStatus === 'SYNCED').length;
    parts.push(versions, `${synced} of ${kept.length} SYNCED`);
  }
  if (removing > 0) parts.push(`${removing} being removed`);
  return parts.length > 0 ? parts.join('; ') : undefined;
}
