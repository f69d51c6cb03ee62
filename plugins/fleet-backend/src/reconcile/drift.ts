/*
 * Drift detection: compares the live objects with the desired ones on the fields Fleet owns.
 * Fleet owns what it applies, so the desired object itself says which fields count: every field
 * it sets must be equal in the live object; fields only the live object has (server defaults,
 * status, other controllers' annotations) are not Fleet's and never count.
 */

/** One field that differs, as a JSON pointer (RFC 6901) into the object. */
export interface Difference {
  kind: string;
  name: string;
  /** `/spec/template/spec/containers/0/image`, or `/` when the object is missing. */
  path: string;
}

type Json = unknown;

const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

function isPlainObject(value: Json): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Collects the pointers where `live` does not hold what `desired` sets. */
/** An empty list or map: what an API server leaves out of what it returns (omitempty). */
function isEmpty(value: Json): boolean {
  return (
    value === undefined ||
    value === null ||
    (Array.isArray(value) && value.length === 0) ||
    (isPlainObject(value) && Object.keys(value).length === 0)
  );
}

function collect(desired: Json, live: Json, path: string, out: string[]): void {
  if (desired === undefined) return;
  // Missing and empty are the same to an API server: `env: []` comes back absent.
  if (isEmpty(desired) && isEmpty(live)) return;
  if (isPlainObject(desired)) {
    if (!isPlainObject(live)) {
      out.push(path || '/');
      return;
    }
    for (const key of Object.keys(desired)) {
      collect(desired[key], live[key], `${path}/${escapePointer(key)}`, out);
    }
    return;
  }
  if (Array.isArray(desired)) {
    if (!Array.isArray(live) || live.length !== desired.length) {
      out.push(path || '/');
      return;
    }
    desired.forEach((item, i) => collect(item, live[i], `${path}/${i}`, out));
    return;
  }
  if (desired !== live) out.push(path || '/');
}

/** True when `path` is `prefix` or lies under it. */
function isUnder(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`);
}

/**
 * The fields of `desired` that `live` does not match, leaving out those under an ignored
 * pointer. A missing live object is one difference at `/`.
 */
export function diffObject(
  desired: { kind?: string; metadata?: { name?: string; labels?: unknown; annotations?: unknown }; spec?: unknown },
  live: { metadata?: { labels?: unknown; annotations?: unknown }; spec?: unknown } | undefined,
  ignore: string[] = [],
): Difference[] {
  const kind = desired.kind ?? 'Object';
  const name = desired.metadata?.name ?? '';
  if (!live) return [{ kind, name, path: '/' }];
  const paths: string[] = [];
  collect(desired.metadata?.labels, live.metadata?.labels, '/metadata/labels', paths);
  collect(desired.metadata?.annotations, live.metadata?.annotations, '/metadata/annotations', paths);
  collect(desired.spec, live.spec, '/spec', paths);
  return paths
    .filter(path => !ignore.some(prefix => isUnder(path, prefix)))
    .map(path => ({ kind, name, path }));
}
