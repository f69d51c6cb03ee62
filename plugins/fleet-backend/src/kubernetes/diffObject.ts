/*
 * Drift detection: compares the live objects with the desired ones on the fields Fleet manages.
 * Fleet applies by server-side apply as field manager `fleet`, and the fields it manages are
 * those of the configuration it applies: every field the desired object sets must be equal in
 * the live object; fields only the live object has (server defaults, status, other managers'
 * fields such as an injected sidecar container or another controller's annotations) never
 * count. Lists keyed by a field in Kubernetes (containers, env, ports, volumes, spread
 * constraints, ...) compare item by item by that key, so another manager's item is not drift;
 * other lists are atomic and compare whole. Container requests and limits compare by value, as
 * the API server rewrites them ("0.5" is stored as "500m").
 */

/** One field that differs, as a JSON pointer (RFC 6901) into the object. */
export interface Difference {
  kind: string;
  name: string;
  /** `/spec/template/spec/containers/0/image`, or `/` when the object is missing. */
  path: string;
}

type Json = unknown;

const escapePointer = (key: string) =>
  key.replace(/~/g, '~0').replace(/\//g, '~1');

function isPlainObject(value: Json): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An empty list or map: what an API server leaves out of what it returns (omitempty). */
function isEmpty(value: Json): boolean {
  return (
    value === undefined ||
    value === null ||
    (Array.isArray(value) && value.length === 0) ||
    (isPlainObject(value) && Object.keys(value).length === 0)
  );
}

/** A container's request or limit, `.../resources/requests/cpu`: a resource quantity. */
const QUANTITY_PATH = /\/resources\/(requests|limits)\/[^/]+$/;

/** Decimal and binary suffixes, as [power of ten, power of two]. */
const QUANTITY_SUFFIXES: Record<string, [number, number]> = {
  n: [-9, 0],
  u: [-6, 0],
  m: [-3, 0],
  '': [0, 0],
  k: [3, 0],
  M: [6, 0],
  G: [9, 0],
  T: [12, 0],
  P: [15, 0],
  E: [18, 0],
  Ki: [0, 10],
  Mi: [0, 20],
  Gi: [0, 30],
  Ti: [0, 40],
  Pi: [0, 50],
  Ei: [0, 60],
};

/**
 * A resource quantity ("0.5", "500m", "1Gi", 2) as the exact value `n * 10^e`, rounded up to
 * whole nanos as an API server does; undefined when it is not a quantity.
 */
function quantityValue(value: Json): { n: bigint; e: number } | undefined {
  let text: string;
  if (typeof value === 'number') text = String(value);
  else if (typeof value === 'string') text = value.trim();
  else return undefined;
  const match =
    /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,3})|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?$/.exec(
      text,
    );
  if (!match) return undefined;
  const [, sign, whole = '', fraction = '', exponent, suffix = ''] = match;
  if (!whole && !fraction) return undefined;
  const [ten, two] = QUANTITY_SUFFIXES[suffix];
  let n = BigInt(`${sign}${whole}${fraction}`) * 2n ** BigInt(two);
  let e = ten + Number(exponent ?? 0) - fraction.length;
  if (e < -9 && n !== 0n) {
    const unit = 10n ** BigInt(-9 - e);
    const magnitude = n < 0n ? -n : n;
    const nanos = (magnitude + unit - 1n) / unit;
    n = n < 0n ? -nanos : nanos;
    e = -9;
  }
  return { n, e };
}

/**
 * True when both are quantities of the same value. An API server stores quantities in canonical
 * form: "0.5" comes back as "500m", "1024Mi" as "1Gi".
 */
function sameQuantity(desired: Json, live: Json): boolean {
  const a = quantityValue(desired);
  const b = quantityValue(live);
  if (!a || !b) return false;
  const e = Math.min(a.e, b.e);
  return a.n * 10n ** BigInt(a.e - e) === b.n * 10n ** BigInt(b.e - e);
}

/** Keys of the Kubernetes lists of type `map` Fleet's objects use, by field name. */
const LIST_KEYS: Record<string, string[]> = {
  containers: ['name'],
  initContainers: ['name'],
  env: ['name'],
  volumes: ['name'],
  volumeMounts: ['mountPath'],
  imagePullSecrets: ['name'],
  hostAliases: ['ip'],
  topologySpreadConstraints: ['topologyKey', 'whenUnsatisfiable'],
};

/** The key fields of the list at `path`, or undefined when the list is atomic. */
function listKeys(path: string): string[] | undefined {
  const field = path.slice(path.lastIndexOf('/') + 1);
  if (field === 'ports') {
    if (/\/containers\/\d+\/ports$/.test(path))
      return ['containerPort', 'protocol'];
    return path === '/spec/ports' ? ['port', 'protocol'] : undefined;
  }
  return LIST_KEYS[field];
}

function sameKey(a: Json, b: Json, keys: string[]): boolean {
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  return keys.every(k =>
    k === 'protocol'
      ? (a[k] ?? 'TCP') === (b[k] ?? 'TCP')
      : a[k] !== undefined && a[k] === b[k],
  );
}

/** Collects the pointers where `live` does not hold what `desired` sets. */
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
  const keys = Array.isArray(desired) ? listKeys(path) : undefined;
  if (Array.isArray(desired) && keys && Array.isArray(live)) {
    desired.forEach((item, i) => {
      const match = live.find(l => sameKey(item, l, keys));
      if (match === undefined) out.push(`${path}/${i}`);
      else collect(item, match, `${path}/${i}`, out);
    });
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
  if (desired === live) return;
  if (QUANTITY_PATH.test(path) && sameQuantity(desired, live)) return;
  out.push(path || '/');
}

/** True when `path` is `prefix` or lies under it. */
function isUnder(path: string, prefix: string): boolean {
  return (
    path === prefix ||
    path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`)
  );
}

/** Top-level fields never compared: the type, the metadata (but labels and annotations) and the status. */
const NOT_COMPARED = new Set(['apiVersion', 'kind', 'metadata', 'status']);

/**
 * The fields of `desired` that `live` does not match (its labels, annotations and every
 * top-level field but the status: a Deployment's `spec`, a ConfigMap's `data`, a Role's
 * `rules`), leaving out those under an ignored pointer. A missing live object is one difference
 * at `/`.
 */
export function diffObject(
  desired: {
    kind?: string;
    metadata?: { name?: string; labels?: unknown; annotations?: unknown };
  },
  live: object | undefined,
  ignore: string[] = [],
): Difference[] {
  const kind = desired.kind ?? 'Object';
  const name = desired.metadata?.name ?? '';
  if (!live) return [{ kind, name, path: '/' }];
  const liveFields = live as {
    metadata?: { labels?: unknown; annotations?: unknown };
  } & Record<string, unknown>;
  const paths: string[] = [];
  collect(
    desired.metadata?.labels,
    liveFields.metadata?.labels,
    '/metadata/labels',
    paths,
  );
  collect(
    desired.metadata?.annotations,
    liveFields.metadata?.annotations,
    '/metadata/annotations',
    paths,
  );
  for (const [field, value] of Object.entries(desired)) {
    if (NOT_COMPARED.has(field)) continue;
    collect(
      value,
      (live as Record<string, unknown>)[field],
      `/${field}`,
      paths,
    );
  }
  return paths
    .filter(path => !ignore.some(prefix => isUnder(path, prefix)))
    .map(path => ({ kind, name, path }));
}
