import type { ApplicationPlacement, Cluster, ClusterSelector } from './types';
import { isEmptySelector, matchesSelector } from './labelSelector';

/*
 * Placement, in one reading for the reconciler that places applications and for the Deploy
 * dialog that says where the placement takes a component.
 */

/**
 * The placement a component's annotations give (`cnp.io/clusters`, `cnp.io/cluster-selector`).
 *
 * @public
 */
export interface AnnotatedPlacement {
  /** The cluster names of `cnp.io/clusters`. */
  clusters?: string[];
  /** `cnp.io/cluster-selector`, parsed. */
  clusterSelector?: ClusterSelector;
}

/**
 * The clusters an application should run on: those its placement names (else those its
 * component's cnp.io/clusters names), and those whose labels match its selector (from the
 * placement, else from the component's cnp.io/cluster-selector). Names of clusters Fleet does not
 * know are ignored.
 *
 * @public
 */
export function placementTargets(
  placement: ApplicationPlacement | undefined,
  annotated: AnnotatedPlacement,
  clusters: Pick<Cluster, 'name' | 'labels'>[],
): string[] {
  const named = new Set(
    placement?.clusters && placement.clusters.length > 0
      ? placement.clusters
      : annotated.clusters ?? [],
  );
  const selector = !isEmptySelector(placement?.clusterSelector)
    ? placement?.clusterSelector
    : annotated.clusterSelector;
  return clusters
    .filter(
      c =>
        named.has(c.name) ||
        (selector !== undefined && matchesSelector(c.labels, selector)),
    )
    .map(c => c.name);
}

/**
 * Whether the application is placed at all: by names or a selector, its own or its component's.
 *
 * @public
 */
export function hasPlacement(
  placement: ApplicationPlacement | undefined,
  annotated: AnnotatedPlacement,
): boolean {
  return (
    (placement?.clusters?.length ?? 0) > 0 ||
    !isEmptySelector(placement?.clusterSelector) ||
    (annotated.clusters?.length ?? 0) > 0 ||
    !isEmptySelector(annotated.clusterSelector)
  );
}
