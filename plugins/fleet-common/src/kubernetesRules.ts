/**
 * Rules of the Kubernetes API server that its OpenAPI schema cannot say, for the values Fleet's
 * API takes and writes into objects: Ingress hosts and paths, Secret and ConfigMap keys,
 * resource quantities (a request may not exceed its limit) and node field selectors. Each
 * function answers the API server's message for a bad value, or undefined for a good one; the
 * simulated API server and Fleet's request validation both use them, so both refuse the same
 * input with the same words.
 */

const DNS1123_SUBDOMAIN =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

const WILDCARD_MESSAGE =
  "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/**
 * Whether Go's net.ParseIP (as the API server calls it, leading zeros allowed) reads an IP.
 *
 * @public
 */
export function isIpAddress(value: string): boolean {
  const v4 = IPV4.exec(value);
  if (v4) return v4.slice(1).every(part => Number(part) <= 255);
  if (!value.includes(':') || !/^[0-9A-Fa-f:.]+$/.test(value)) return false;
  const halves = value.split('::');
  if (halves.length > 2) return false;
  const groups = halves.flatMap(h => (h === '' ? [] : h.split(':')));
  const last = groups[groups.length - 1] ?? '';
  const v4Tail = last.includes('.');
  if (v4Tail && !isIpAddress(last)) return false;
  const hextets = v4Tail ? groups.length + 1 : groups.length;
  if (
    groups.some(
      (g, i) =>
        !(v4Tail && i === groups.length - 1) && !/^[0-9A-Fa-f]{1,4}$/.test(g),
    )
  )
    return false;
  return halves.length === 2 ? hextets < 8 : hextets === 8;
}

/**
 * The problems of an Ingress rule's host (or a TLS host): not an IP address, a DNS-1123
 * subdomain of at most 253 characters, or `*.` followed by one (a wildcard only as the whole
 * first label).
 *
 * @public
 */
export function ingressHostProblems(host: string): string[] {
  const out: string[] = [];
  if (isIpAddress(host)) out.push('must be a DNS name, not an IP address');
  if (host.includes('*')) {
    if (
      host.length > 253 ||
      !host.startsWith('*.') ||
      !DNS1123_SUBDOMAIN.test(host.slice(2))
    )
      out.push(WILDCARD_MESSAGE);
    return out;
  }
  if (host.length > 253) out.push('must be no more than 253 characters');
  if (!DNS1123_SUBDOMAIN.test(host)) out.push(SUBDOMAIN_MESSAGE);
  return out;
}

/**
 * The problems of an Ingress path for its pathType: an `Exact` or `Prefix` path is absolute
 * and holds no `//`, `/./`, `/../` or encoded slash, nor ends in `/.` or `/..`; an
 * `ImplementationSpecific` one, if given, is absolute.
 *
 * @public
 */
export function ingressPathProblems(
  path: string | undefined,
  pathType: string,
): string[] {
  const out: string[] = [];
  const value = path ?? '';
  if (pathType === 'ImplementationSpecific') {
    if (value && !value.startsWith('/')) out.push('must be an absolute path');
    return out;
  }
  if (pathType !== 'Exact' && pathType !== 'Prefix') return out;
  if (!value.startsWith('/')) out.push('must be an absolute path');
  for (const sequence of ['//', '/./', '/../', '%2f', '%2F']) {
    if (value.includes(sequence)) out.push(`must not contain '${sequence}'`);
  }
  for (const suffix of ['/..', '/.']) {
    if (value.endsWith(suffix)) out.push(`cannot end with '${suffix}'`);
  }
  return out;
}

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

/**
 * The problems of a Secret's or ConfigMap's key (`data`, `stringData`, a key reference).
 *
 * @public
 */
export function configKeyProblems(key: string): string[] {
  const out: string[] = [];
  if (key.length > 253) out.push('must be no more than 253 characters');
  if (!CONFIG_KEY.test(key))
    out.push(
      "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
    );
  if (key === '.') out.push("must not be '.'");
  else if (key === '..') out.push("must not be '..'");
  else if (key.startsWith('..')) out.push("must not start with '..'");
  return out;
}

const QUANTITY =
  /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/;
const BINARY: Record<string, bigint> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};
const DECIMAL: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

/** A quantity as `digits × 10^exp10`, exactly; undefined if it is not one. */
function exactQuantity(
  value: string,
): { digits: bigint; exp10: number } | undefined {
  const m = QUANTITY.exec(value.trim());
  if (!m) return undefined;
  const [, sign, number, suffix = ''] = m;
  const [whole, fraction = ''] = number.split('.');
  let digits = BigInt(`${whole || '0'}${fraction}`);
  let exp10 = -fraction.length;
  if (suffix in BINARY) digits *= BINARY[suffix];
  else if (suffix in DECIMAL) exp10 += DECIMAL[suffix];
  else exp10 += Number(suffix.slice(1));
  return { digits: sign === '-' ? -digits : digits, exp10 };
}

/**
 * Compares two Kubernetes quantities exactly (-1, 0, 1); undefined if either is not one.
 *
 * @public
 */
export function compareQuantities(a: string, b: string): number | undefined {
  const x = exactQuantity(a);
  const y = exactQuantity(b);
  if (!x || !y) return undefined;
  const low = Math.min(x.exp10, y.exp10);
  const left = x.digits * 10n ** BigInt(x.exp10 - low);
  const right = y.digits * 10n ** BigInt(y.exp10 - low);
  if (left === right) return 0;
  return left < right ? -1 : 1;
}

/**
 * The requests above their limit (`cpu`, `memory` and the other resources that may be
 * overcommitted), each with the API server's message, keyed by resource name.
 *
 * @public
 */
export function requestsAboveLimits(resources: {
  requests?: Record<string, unknown>;
  limits?: Record<string, unknown>;
}): Array<{ name: string; request: string; message: string }> {
  const out: Array<{ name: string; request: string; message: string }> = [];
  for (const [name, request] of Object.entries(resources.requests ?? {})) {
    const limit = resources.limits?.[name];
    const native = !name.includes('/') || name.includes('kubernetes.io/');
    if (!native || name.startsWith('hugepages-')) continue;
    if (typeof request !== 'string' || typeof limit !== 'string') continue;
    if ((compareQuantities(request, limit) ?? 0) > 0)
      out.push({
        name,
        request,
        message: `must be less than or equal to ${name} limit of ${limit}`,
      });
  }
  return out;
}

/**
 * The problems of a node selector term's field requirement (`matchFields`): key
 * `metadata.name`, operator `In` or `NotIn`, exactly one value. Keyed by the sub-field
 * (`key`, `operator`, `values`).
 *
 * @public
 */
export function nodeFieldSelectorProblems(requirement: {
  key?: unknown;
  operator?: unknown;
  values?: unknown;
}): Array<{ field: 'key' | 'operator' | 'values'; message: string }> {
  const out: Array<{ field: 'key' | 'operator' | 'values'; message: string }> =
    [];
  const values = Array.isArray(requirement.values) ? requirement.values : [];
  if (requirement.operator === 'In' || requirement.operator === 'NotIn') {
    if (values.length !== 1)
      out.push({
        field: 'values',
        message:
          "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
      });
  } else {
    out.push({ field: 'operator', message: 'not a valid selector operator' });
  }
  if (requirement.key !== 'metadata.name')
    out.push({ field: 'key', message: 'not a valid field selector key' });
  return out;
}
