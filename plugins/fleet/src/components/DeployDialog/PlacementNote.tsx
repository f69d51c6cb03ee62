import {
  hasPlacement,
  isEmptySelector,
  parseLabelSelector,
  placementTargets,
  type Application,
  type Cluster,
} from '@cnp/plugin-fleet-common';
import Alert from '@material-ui/lab/Alert';

/** Where a component's placement takes it, and what said so. */
export interface PlacementReading {
  /** Whether anything places it: names or a selector, the application's or the component's. */
  placed: boolean;
  /** The registered clusters the placement selects. */
  targets: string[];
  /** What put a cluster in `targets`, in words: `the component's cnp.io/clusters`… */
  sourceOf: (cluster: string) => string;
  /** The application's placement prunes what it stops selecting. */
  prune: boolean;
}

/**
 * The placement the reconciler reads (see `placementTargets`): the application's names, else
 * the component's `cnp.io/clusters`; the application's selector, else the component's
 * `cnp.io/cluster-selector`. Before a first deploy there is no application: the component's
 * annotations are what its registration will place.
 */
export function readPlacement(options: {
  application?: Application;
  annotatedClusters: string[];
  annotatedSelector?: string;
  clusters: Pick<Cluster, 'name' | 'labels'>[];
}): PlacementReading {
  const placement = options.application?.placement;
  const annotated = {
    clusters: options.annotatedClusters,
    clusterSelector: parseLabelSelector(options.annotatedSelector),
  };
  const ownNames = (placement?.clusters?.length ?? 0) > 0;
  const names = new Set(ownNames ? placement!.clusters : annotated.clusters);
  const ownSelector = !isEmptySelector(placement?.clusterSelector);
  const selectorSource = ownSelector
    ? "the application's placement selector"
    : `the component's cnp.io/cluster-selector ${
        options.annotatedSelector ?? ''
      }`.trim();
  return {
    placed: hasPlacement(placement, annotated),
    targets: placementTargets(placement, annotated, options.clusters),
    sourceOf: cluster => {
      if (names.has(cluster))
        return ownNames
          ? "the application's placement"
          : "the component's cnp.io/clusters";
      return selectorSource;
    },
    prune: placement?.prune === true,
  };
}

/** `a`, `a and b`, `a, b and c`. */
function listed(names: string[]): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

/** Cluster names a group shows at most; a selector may place a component on thousands. */
const NAMES_SHOWN = 5;

/** `a, b, c, d, e and 995 other clusters` past `NAMES_SHOWN` names, else `listed`. */
function listedNames(names: string[]): string {
  if (names.length <= NAMES_SHOWN + 1) return listed(names);
  const rest = names.length - NAMES_SHOWN;
  return `${names.slice(0, NAMES_SHOWN).join(', ')} and ${rest.toLocaleString(
    'en-US',
  )} other clusters`;
}

/** The other clusters, grouped by what placed them: `sim-1 (from …) and sim-4 (from …)`. */
function withSources(names: string[], reading: PlacementReading): string {
  const bySource = new Map<string, string[]>();
  for (const name of names) {
    const source = reading.sourceOf(name);
    const group = bySource.get(source);
    if (group) group.push(name);
    else bySource.set(source, [name]);
  }
  return listed(
    [...bySource].map(
      ([source, clusters]) => `${listedNames(clusters)} (from ${source})`,
    ),
  );
}

/**
 * What the placement does around a deploy to `cluster`: the other clusters it places the
 * component on (the reconcile deploys it there too, unasked), and, for a cluster outside the
 * placement, what the next reconcile does to this deployment (marks it no longer placed, never
 * healed again; or undeploys it when the placement prunes). Nothing when nothing places it.
 */
export function placementText(
  componentName: string,
  cluster: string,
  reading: PlacementReading,
): { severity: 'info' | 'warning'; text: string } | undefined {
  if (!reading.placed || !cluster) return undefined;
  const others = reading.targets.filter(name => name !== cluster);
  const also =
    others.length > 0
      ? `${componentName} is also placed on ${withSources(
          others,
          reading,
        )}: Fleet deploys it there too at its next reconcile, unless it runs there already.`
      : '';
  if (reading.targets.includes(cluster)) {
    if (!also) return undefined;
    return { severity: 'info', text: also };
  }
  const fate = reading.prune
    ? 'its next reconcile undeploys it again (the placement prunes what it does not select)'
    : 'its next reconcile marks the deployment "no longer placed": it stays, but Fleet never heals it again';
  const outside =
    reading.targets.length > 0
      ? `${cluster} is outside ${componentName}'s placement (${withSources(
          reading.targets,
          reading,
        )})`
      : `${cluster} is outside ${componentName}'s placement, which selects no registered cluster`;
  return {
    severity: 'warning',
    text: `${outside}: Fleet deploys it, then ${fate}.${
      also ? ` ${also}` : ''
    }`,
  };
}

/** The placement's word on a deploy to `cluster`, under the cluster picker. */
export function PlacementNote(props: {
  componentName: string;
  cluster: string;
  reading: PlacementReading;
}) {
  const note = placementText(props.componentName, props.cluster, props.reading);
  if (!note) return null;
  return (
    <Alert
      severity={note.severity}
      role="status"
      aria-label="Placement"
      style={{ marginTop: 8 }}
    >
      {note.text}
    </Alert>
  );
}
