import type { Cluster } from '@cnp/plugin-fleet-common';

const collator = new Intl.Collator('en', {
  numeric: true,
  sensitivity: 'base',
});

/** The words of a filter, lower-cased: every one must match (name or a `key=value` label). */
export function queryTerms(query: string): string[] {
  return query.toLowerCase().split(/\s+/).filter(Boolean);
}

/** A cluster's labels as `key=value`, in the table's order. */
export function labelText(labels: Record<string, string>): string[] {
  return Object.entries(labels).map(([k, v]) => `${k}=${v}`);
}

/** Whether a cluster's name or one of its `key=value` labels contains every term. */
export function matchesTerms(cluster: Cluster, terms: string[]): boolean {
  if (terms.length === 0) return true;
  const haystacks = [cluster.name, ...labelText(cluster.labels)].map(s =>
    s.toLowerCase(),
  );
  return terms.every(term => haystacks.some(h => h.includes(term)));
}

/** The clusters that match the filter, by name in natural order (sim-2 before sim-10). */
export function filterAndSortClusters(
  clusters: readonly Cluster[],
  query: string,
): Cluster[] {
  const terms = queryTerms(query);
  return clusters
    .filter(c => matchesTerms(c, terms))
    .sort((a, b) => collator.compare(a.name, b.name));
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (
    typeof a !== 'object' ||
    typeof b !== 'object' ||
    a === null ||
    b === null
  )
    return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every(k =>
      Object.is(
        (a as Record<string, unknown>)[k],
        (b as Record<string, unknown>)[k],
      ),
    )
  );
}

/** Whether two answers for the same cluster are equal, field by field (labels one level deep). */
export function sameCluster(a: Cluster, b: Cluster): boolean {
  const ka = Object.keys(a) as Array<keyof Cluster>;
  return (
    ka.length === Object.keys(b).length && ka.every(k => sameValue(a[k], b[k]))
  );
}

/**
 * `next`, with every cluster that did not change replaced by the object of `previous`; `previous`
 * itself when nothing changed. A poll that brings the same fleet thus keeps the same objects, and
 * memoized lists and rows do not render again.
 */
export function reuseUnchanged(
  previous: readonly Cluster[],
  next: readonly Cluster[],
): readonly Cluster[] {
  const byName = new Map(previous.map(c => [c.name, c]));
  let changed = previous.length !== next.length;
  const merged = next.map((c, i) => {
    const old = byName.get(c.name);
    if (old && sameCluster(old, c)) {
      if (previous[i] !== old) changed = true;
      return old;
    }
    changed = true;
    return c;
  });
  return changed ? merged : previous;
}
