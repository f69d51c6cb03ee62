import type { Deployment } from '@cnp/plugin-fleet-common';

/** The tag of an image reference (`…/payments:1.4.2` → `1.4.2`); the whole reference without one. */
export function imageVersion(image: string): string {
  const name = image.split('@')[0];
  const lastPart = name.slice(name.lastIndexOf('/') + 1);
  const colon = lastPart.lastIndexOf(':');
  return colon > 0 ? lastPart.slice(colon + 1) : image;
}

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
    const perVersion = new Map<string, number>();
    for (const d of kept) {
      const version = d.image ? imageVersion(d.image) : 'no image';
      perVersion.set(version, (perVersion.get(version) ?? 0) + 1);
    }
    const versions = [...perVersion]
      .sort(([a, m], [b, n]) => n - m || a.localeCompare(b))
      .map(
        ([version, n], i) =>
          `${version} on ${n}${i === 0 ? ` cluster${n === 1 ? '' : 's'}` : ''}`,
      )
      .join(', ');
    const synced = kept.filter(d => d.syncStatus === 'SYNCED').length;
    parts.push(versions, `${synced} of ${kept.length} SYNCED`);
  }
  if (removing > 0) parts.push(`${removing} being removed`);
  return parts.length > 0 ? parts.join('; ') : undefined;
}
