/*
 * Kubernetes label selectors, as Fleet reads them: from a request, an application's placement or
 * a component's `cnp.io/cluster-selector` annotation.
 */

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
