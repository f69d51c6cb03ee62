import { FLEET_ANNOTATION_CLUSTERS } from './constants';

/**
 * The cluster names of a component's `cnp.io/clusters` annotation: comma-separated, blanks
 * dropped. One reading for the Deploy dialog's picker and the reconciler's placement.
 *
 * @public
 */
export function annotatedClusters(
  annotations: Record<string, string> | undefined,
): string[] {
  return (annotations?.[FLEET_ANNOTATION_CLUSTERS] ?? '')
    .split(',')
    .map(name => name.trim())
    .filter(Boolean);
}
