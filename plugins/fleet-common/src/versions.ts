/**
 * The version an image reference names: its tag (`1.4.2` of `ghcr.io/acme/pay:1.4.2@sha256:…`),
 * or the whole reference when it has none (a registry port is not a tag).
 *
 * @public
 */
export function imageVersion(image: string): string {
  const name = image.split('@')[0];
  const lastPart = name.slice(name.lastIndexOf('/') + 1);
  const colon = lastPart.lastIndexOf(':');
  return colon > 0 ? lastPart.slice(colon + 1) : image;
}

/**
 * Which versions run on how many clusters, most first: "1.4.2 on 3 clusters, 1.4.1 on 1". One
 * entry per cluster; empty when there is none.
 *
 * @public
 */
export function versionsSummary(versions: string[]): string {
  const perVersion = new Map<string, number>();
  for (const version of versions) {
    perVersion.set(version, (perVersion.get(version) ?? 0) + 1);
  }
  return [...perVersion]
    .sort(([a, m], [b, n]) => n - m || a.localeCompare(b))
    .map(
      ([version, n], i) =>
        `${version} on ${n}${i === 0 ? ` cluster${n === 1 ? '' : 's'}` : ''}`,
    )
    .join(', ');
}
