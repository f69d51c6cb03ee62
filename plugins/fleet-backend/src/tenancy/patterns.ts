import type { FleetProject } from './projects';

/** `*` matches any run of characters (none included); anything else matches itself. */
export function matchesPattern(value: string, pattern: string): boolean {
  const source = pattern
    .split('*')
    .map(part => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`).test(value);
}

/** A pattern with `{app}` replaced by the application's name. */
export function expand(pattern: string, appName: string): string {
  return pattern.split('{app}').join(appName);
}

/**
 * Why the project refuses manifests read from `url`: its `sources` list no pattern the URL (or a
 * folder above it: `https://git.example.com/acme/payments` holds `…/payments/tree/main/deploy`)
 * matches. A project without `sources` takes any URL the portal can read.
 */
export function sourceRefusal(
  project: FleetProject,
  url: string,
  appName: string,
): string | undefined {
  if (!project.sources) return undefined;
  const patterns = project.sources.map(p => expand(p, appName));
  // The place, as URLs compare: host in lower case, no default port, no query (which could fill
  // a pattern's tail) and no fragment.
  let place: string;
  try {
    const parsed = new URL(url);
    place = `${parsed.origin}${parsed.pathname}`;
  } catch {
    return `manifests from ${url}: not a URL`;
  }
  const matches = (pattern: string) =>
    matchesPattern(place, pattern) ||
    (!pattern.endsWith('*') &&
      matchesPattern(place, `${pattern.replace(/\/+$/, '')}/*`));
  if (patterns.some(matches)) return undefined;
  return `manifests from ${url} are not among project ${
    project.name
  }'s sources (${patterns.length ? patterns.join(', ') : 'it names none'})`;
}

/** Why the project refuses an Ingress host: a wildcard, or one outside its hosts. */
export function hostRefusal(
  project: FleetProject,
  host: string,
): string | undefined {
  if (host.startsWith('*')) {
    return `Ingress host '${host}' is a wildcard: Fleet applies Ingresses for one host only`;
  }
  if (!project.ingressHosts.some(p => matchesPattern(host, p))) {
    return `Ingress host '${host}' is not in project ${project.name} (${
      project.ingressHosts.length
        ? `its hosts: ${project.ingressHosts.join(', ')}`
        : 'it allows no Ingress host'
    })`;
  }
  return undefined;
}
