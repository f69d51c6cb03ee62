import type { ClusterLabelSelector, ClusterSelector } from './types';

/*
 * Kubernetes label selectors, as Fleet reads them: from a request, an application's placement or
 * a component's `cnp.io/cluster-selector` annotation. A selector is a label map (`env=prod`) or,
 * with set-based requirements, `{ matchLabels, matchExpressions }` as in Kubernetes.
 */

const KEY = '[A-Za-z0-9][-A-Za-z0-9_./]*';
const VALUE = '[-A-Za-z0-9_.]*';
const EQUALS = new RegExp(`^(${KEY})\\s*(==?|!=)\\s*(${VALUE})$`);
const SET = new RegExp(`^(${KEY})\\s+(in|notin)\\s*\\(([^()]*)\\)$`);
const EXISTS = new RegExp(`^(!?)\\s*(${KEY})$`);
const VALUE_ONLY = new RegExp(`^${VALUE}$`);

/** The requirements of a selector's text, split on the commas outside parentheses. */
function requirements(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of text) {
    if (char === '(') depth += 1;
    if (char === ')') depth -= 1;
    if (depth < 0) return [''];
    if (char === ',' && depth === 0) {
      parts.push(current.trim());
      current = '';
    } else {
      current += char;
    }
  }
  parts.push(current.trim());
  return parts;
}

/**
 * Parses a label selector's text, as `kubectl -l` takes it: `env=prod,tier=web` (also `==`),
 * `env!=dev`, `env in (prod,staging)`, `env notin (dev)`, `canary`, `!canary`. Equalities alone
 * give a label map; anything set-based gives `{ matchLabels, matchExpressions }`. Returns
 * undefined for anything it cannot read, so that a typo never selects every cluster.
 *
 * @public
 */
export function parseLabelSelector(
  text: string | undefined,
): ClusterSelector | undefined {
  if (!text || !text.trim()) return undefined;
  const matchLabels: Record<string, string> = {};
  const matchExpressions: ClusterLabelSelector['matchExpressions'] = [];
  for (const part of requirements(text)) {
    let match = EQUALS.exec(part);
    if (match) {
      if (match[2] === '!=') {
        matchExpressions.push({
          key: match[1],
          operator: 'NotIn',
          values: [match[3]],
        });
      } else {
        matchLabels[match[1]] = match[3];
      }
      continue;
    }
    match = SET.exec(part);
    if (match) {
      const values = match[3].split(',').map(v => v.trim());
      if (values.some(v => !v || !VALUE_ONLY.test(v))) return undefined;
      matchExpressions.push({
        key: match[1],
        operator: match[2] === 'in' ? 'In' : 'NotIn',
        values,
      });
      continue;
    }
    match = EXISTS.exec(part);
    if (match) {
      matchExpressions.push({
        key: match[2],
        operator: match[1] ? 'DoesNotExist' : 'Exists',
      });
      continue;
    }
    return undefined;
  }
  return matchExpressions.length === 0
    ? matchLabels
    : {
        ...(Object.keys(matchLabels).length ? { matchLabels } : {}),
        matchExpressions,
      };
}

/** Whether a selector is the structured form rather than a plain label map. @public */
export function isStructuredSelector(
  selector: ClusterSelector,
): selector is ClusterLabelSelector {
  return (
    Array.isArray((selector as ClusterLabelSelector).matchExpressions) ||
    (typeof (selector as ClusterLabelSelector).matchLabels === 'object' &&
      (selector as ClusterLabelSelector).matchLabels !== null)
  );
}

/** Whether the selector says anything at all (an empty one selects nothing). @public */
export function isEmptySelector(
  selector: ClusterSelector | undefined,
): boolean {
  if (!selector) return true;
  if (!isStructuredSelector(selector))
    return Object.keys(selector).length === 0;
  return (
    Object.keys(selector.matchLabels ?? {}).length === 0 &&
    (selector.matchExpressions ?? []).length === 0
  );
}

/**
 * True when the labels meet every requirement of the selector, as Kubernetes matches them: an
 * equality or `In` needs the label with one of the values; `NotIn` and `!=` hold when the label
 * is absent too; `Exists` / `DoesNotExist` look at the key only. An empty selector: never.
 *
 * @public
 */
export function matchesSelector(
  labels: Record<string, string>,
  selector: ClusterSelector,
): boolean {
  if (isEmptySelector(selector)) return false;
  const structured: ClusterLabelSelector = isStructuredSelector(selector)
    ? selector
    : { matchLabels: selector };
  const has = (key: string) =>
    Object.prototype.hasOwnProperty.call(labels, key);
  return (
    Object.entries(structured.matchLabels ?? {}).every(
      ([key, value]) => has(key) && labels[key] === value,
    ) &&
    (structured.matchExpressions ?? []).every(({ key, operator, values }) => {
      switch (operator) {
        case 'In':
          return has(key) && (values ?? []).includes(labels[key]);
        case 'NotIn':
          return !has(key) || !(values ?? []).includes(labels[key]);
        case 'Exists':
          return has(key);
        case 'DoesNotExist':
          return !has(key);
        default:
          return false;
      }
    })
  );
}
