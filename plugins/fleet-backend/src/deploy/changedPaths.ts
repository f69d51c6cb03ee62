import { isDeepStrictEqual } from 'node:util';

/** What every write moves, whatever it changes: the server's bookkeeping, and the status. */
const BOOKKEEPING = new Set([
  '/metadata/managedFields',
  '/metadata/resourceVersion',
  '/metadata/generation',
  '/metadata/uid',
  '/metadata/creationTimestamp',
  '/status',
]);

const escapePointer = (key: string) =>
  key.replace(/~/g, '~0').replace(/\//g, '~1');

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The fields a write changed, as JSON pointers (RFC 6901), from the object before it (`live`)
 * to the server's answer (`after`, a dry run's): a field set, changed or removed. Maps compare
 * key by key, lists of one length item by item, a list that grew or shrank whole. Both sides are
 * the server's, with its defaults and canonical forms, so only what the write does differs.
 */
export function changedPaths(
  after: unknown,
  live: unknown,
  path = '',
): string[] {
  if (BOOKKEEPING.has(path) || isDeepStrictEqual(after, live)) return [];
  if (isPlainObject(after) && isPlainObject(live)) {
    const keys = [...new Set([...Object.keys(live), ...Object.keys(after)])];
    return keys.flatMap(key =>
      changedPaths(after[key], live[key], `${path}/${escapePointer(key)}`),
    );
  }
  if (
    Array.isArray(after) &&
    Array.isArray(live) &&
    after.length === live.length
  ) {
    return after.flatMap((item, i) =>
      changedPaths(item, live[i], `${path}/${i}`),
    );
  }
  return [path || '/'];
}
