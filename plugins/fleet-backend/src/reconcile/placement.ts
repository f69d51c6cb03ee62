import type { ApplicationPlacement, Cluster } from '@cnp/plugin-fleet-common';

/**
 * Parses an equality label selector such as `env=prod,tier=web` (also `env==prod`); returns
 * undefined for anything else, so that a typo never selects every cluster.
 */
export function parseLabelSelector(
  text: string | undefined,
): Record<string, string> | undefined {
  if (!text || !text.trim()) return undefined;
  const selector: Record<string, string> = {};
  for (const part of text.split(',')) {
    const match =
      /^\s*([A-Za-z0-9][-A-Za-z0-9_./]*)\s*==?\s*([-A-Za-z0-9_.]*)\s*$/.exec(
        part,
      );
    if (!match) return undefined;
    selector[match[1]] = match[2];
  }
  return selector;
}

/** True when every key of the selector has that value in the labels (an empty selector: never). */
export function matchesSelector(
  labels: Record<string, string>,
  selector: Record<string, string>,
): boolean {
  const entries = Object.entries(selector);
  return (
    entries.length > 0 && entries.every(([key, value]) => labels[key] === value)
  );
}

/** The placement a component's annotations give (`cnp.io/clusters`, `cnp.io/cluster-selector`). */
export interface AnnotatedPlacement {
  clusters?: string[];
  clusterSelector?: Record<string, string>;
}

/**
 * The clusters an application should run on: those its placement names (else those its
 * component's cnp.io/clusters names), and those whose labels match its selector (from the
 * placement, else from the component's cnp.io/cluster-selector). Names of clusters Fleet does not
 * know are ignored.
 */
export function placementTargets(
  placement: ApplicationPlacement | undefined,
  annotated: AnnotatedPlacement,
  clusters: Cluster[],
): string[] {
  const named = new Set(
    placement?.clusters && placement.clusters.length > 0
      ? placement.clusters
      : annotated.clusters ?? [],
  );
  const selector =
    placement?.clusterSelector &&
    Object.keys(placement.clusterSelector).length > 0
      ? placement.clusterSelector
      : annotated.clusterSelector;
  return clusters
    .filter(
      c =>
        named.has(c.name) ||
        (selector !== undefined && matchesSelector(c.labels, selector)),
    )
    .map(c => c.name);
}
