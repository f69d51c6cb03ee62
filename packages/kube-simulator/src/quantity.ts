/**
 * Resource quantities as the API server reads and writes them
 * (k8s.io/apimachinery/pkg/api/resource): a quantity is decoded when the
 * request body is, and stored in canonical form, so "0.5" comes back as
 * "500m", "1024Mi" as "1Gi" and "1000k" as "1M". Exact, with BigInt: the
 * value is kept as `n * 10^e`.
 *
 * The rules ported from quantity.go:
 * - the suffix picks the format: DecimalSI (n u m "" k M G T P E), BinarySI
 *   (Ki Mi Gi Ti Pi Ei) or DecimalExponent (e3, E-6, ...);
 * - values finer than a nano are rounded away from zero to one ("0.9n" is
 *   "1n"), and a BinarySI value is capped at 2^63-1;
 * - the canonical form has no fraction, the largest suffix of its format
 *   that keeps it exact, and a sign only when negative; a BinarySI value below
 *   1024 or not a whole number falls back to the decimal form ("0.5Ki" is
 *   "512", "1.5" bytes is "1500m");
 * - text that the parser's fast path finds canonical is kept as written, quirks
 *   included ("+1Ki", "1.500" and "01" come back unchanged).
 */
import { ResourceDef } from './resourceDef';
import { asArray, asObject, JsonObject } from './util';

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

/** A parsed quantity: the value `n * 10^e`, and how to write it. */
export interface Quantity {
  n: bigint;
  e: number;
  format: QuantityFormat;
  /** The text as written, when the API server keeps it. */
  text?: string;
}

const SPLIT_RE = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';
const FORMAT_WRONG = `quantities must match the regular expression '${SPLIT_RE}'`;
const NUMERIC = 'unable to parse numeric part of quantity';
const SUFFIX = "unable to parse quantity's suffix";

/** Why a quantity does not parse, in the words of quantity.go. */
export class QuantityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'QuantityError';
  }
}

const DECIMAL_SI = new Map<string, number>([
  ['n', -9],
  ['u', -6],
  ['m', -3],
  ['', 0],
  ['k', 3],
  ['M', 6],
  ['G', 9],
  ['T', 12],
  ['P', 15],
  ['E', 18],
]);
const DECIMAL_SUFFIX = new Map([...DECIMAL_SI].map(([s, e]) => [e, s]));
const BINARY_SI = new Map<string, number>([
  ['Ki', 10],
  ['Mi', 20],
  ['Gi', 30],
  ['Ti', 40],
  ['Pi', 50],
  ['Ei', 60],
]);
const BINARY_SUFFIX = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const SUFFIX_CHARS = 'eEinumkKMGTP';
const MAX_BINARY = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

const isDigit = (c: string | undefined) =>
  c !== undefined && c >= '0' && c <= '9';
const abs = (n: bigint) => (n < 0n ? -n : n);
/** -1, 0 or 1, as `a` is below, equal to or above `b`. */
const order = (a: bigint, b: bigint) => Number(a > b) - Number(a < b);
const pow10 = (k: number) => 10n ** BigInt(k);

interface Scanned {
  positive: boolean;
  /** The number as written, sign included, for the slow path. */
  value: string;
  /** Digits before the point, leading zeros stripped ("0" when none). */
  num: string;
  denom: string;
  suffix: string;
}

/** parseQuantityString: splits sign, digits, fraction and suffix. */
function scan(str: string): Scanned {
  const end = str.length;
  let pos = 0;
  let positive = true;
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') pos++;
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end)
    return { positive, value: '0', num: '0', denom: '', suffix: '' };
  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  const num = str.slice(pos, i) || '0';
  if (i >= end) return { positive, value: str, num, denom: '', suffix: '' };
  pos = i;
  let denom = '';
  if (str[pos] === '.') {
    let j = ++pos;
    while (j < end && isDigit(str[j])) j++;
    denom = str.slice(pos, j);
    if (j >= end) return { positive, value: str, num, denom, suffix: '' };
    pos = j;
  }
  const value = str.slice(0, pos);
  const suffixStart = pos;
  while (pos < end && SUFFIX_CHARS.includes(str[pos])) pos++;
  if (pos < end && (str[pos] === '-' || str[pos] === '+')) pos++;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos < end) throw new QuantityError(FORMAT_WRONG);
  return { positive, value, num, denom, suffix: str.slice(suffixStart) };
}

/** The base-10 or base-2 exponent and the format a suffix stands for. */
function interpret(suffix: string): {
  exponent: number;
  format: QuantityFormat;
} {
  const decimal = DECIMAL_SI.get(suffix);
  if (decimal !== undefined) return { exponent: decimal, format: 'DecimalSI' };
  const binary = BINARY_SI.get(suffix);
  if (binary !== undefined) return { exponent: binary, format: 'BinarySI' };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) {
    const digits = suffix.slice(1);
    if (/^[+-]?[0-9]+$/.test(digits)) {
      const parsed = BigInt(digits);
      // strconv.ParseInt(64 bits), then an int32 conversion
      if (parsed >= INT64_MIN && parsed <= MAX_BINARY)
        return {
          exponent: Number(BigInt.asIntN(32, parsed)),
          format: 'DecimalExponent',
        };
    }
  }
  throw new QuantityError(SUFFIX);
}

/** `n * 10^e` rounded away from zero to a whole number of nanos. */
function roundToNano(n: bigint, e: number): { n: bigint; e: number } {
  if (e >= -9 || n === 0n) return { n, e };
  const shift = -9 - e;
  const magnitude = abs(n);
  let rounded: bigint;
  if (shift > magnitude.toString().length) rounded = 1n;
  else {
    const divisor = pow10(shift);
    rounded = (magnitude + divisor - 1n) / divisor;
  }
  return { n: n < 0n ? -rounded : rounded, e: -9 };
}

/** ParseQuantity. Throws a QuantityError for text the API server rejects. */
export function parseQuantity(str: string): Quantity {
  if (str.length === 0) throw new QuantityError(FORMAT_WRONG);
  if (str === '0') return { n: 0n, e: 0, format: 'DecimalSI', text: str };
  const { positive, value, num, denom, suffix } = scan(str);
  const { exponent, format } = interpret(suffix);

  // The int64 fast path: exact, and it keeps a canonical-looking text.
  const shifted = num + denom;
  let fast: boolean;
  let keep: boolean;
  if (format === 'BinarySI') {
    fast = denom === '' && 15 - num.length - (exponent * 3) / 10 - 1 >= 0;
    keep = fast && (BigInt(num) & 7n) !== 0n;
  } else {
    const scale = exponent - denom.length;
    fast = 18 - shifted.length >= 0 && scale >= -9;
    keep =
      fast && scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
  }
  if (!fast && !/[0-9]/.test(value)) throw new QuantityError(NUMERIC);

  const digits = BigInt(shifted);
  const signed = positive ? digits : -digits;
  let { n, e } =
    format === 'BinarySI'
      ? roundToNano(signed << BigInt(exponent), -denom.length)
      : roundToNano(signed, exponent - denom.length);
  let effective = format;
  if (format === 'BinarySI') {
    // e <= 0 here: the value is n / 10^-e
    const one = pow10(-e);
    if (abs(n) > MAX_BINARY * one) {
      n = positive ? MAX_BINARY : -MAX_BINARY;
      e = 0;
    } else if (n !== 0n && abs(n) < one) effective = 'DecimalSI';
  }
  return { n, e, format: effective, text: keep ? str : undefined };
}

/** The text the API server writes for a quantity (Quantity.String). */
export function formatQuantity(q: Quantity): string {
  if (q.text !== undefined) return q.text;
  if (q.n === 0n) return '0';
  if (q.format === 'BinarySI') {
    const binary = formatBinary(q.n, q.e);
    if (binary !== undefined) return binary;
    return formatDecimal(q.n, q.e, 'DecimalSI');
  }
  return formatDecimal(q.n, q.e, q.format);
}

/** Base 1024, or undefined when the value is below 1024 or has a fraction. */
function formatBinary(n: bigint, e: number): string | undefined {
  let whole: bigint;
  if (e >= 0) whole = n * pow10(e);
  else {
    const divisor = pow10(-e);
    if (n % divisor !== 0n) return undefined;
    whole = n / divisor;
  }
  if (abs(whole) < 1024n) return undefined;
  let times = 0;
  while (abs(whole) >= 1024n && whole % 1024n === 0n) {
    whole /= 1024n;
    times++;
  }
  return `${whole}${BINARY_SUFFIX[times]}`;
}

function formatDecimal(n: bigint, e: number, format: QuantityFormat): string {
  let mantissa = n;
  let exponent = e;
  while (mantissa !== 0n && mantissa % 10n === 0n) {
    mantissa /= 10n;
    exponent++;
  }
  // the largest multiple of 3 not above the exponent
  while (exponent % 3 !== 0) {
    mantissa *= 10n;
    exponent--;
  }
  const si = format === 'DecimalSI' ? DECIMAL_SUFFIX.get(exponent) : undefined;
  if (si !== undefined) return `${mantissa}${si}`;
  return exponent === 0 ? `${mantissa}` : `${mantissa}e${exponent}`;
}

/** -1, 0 or 1 as `a` is below, equal to or above `b`. */
export function compareQuantities(a: Quantity, b: Quantity): number {
  const sa = order(a.n, 0n);
  const sb = order(b.n, 0n);
  if (sa !== sb || sa === 0) return Math.sign(sa - sb);
  // same sign, both non-zero: compare magnitudes, aligning exponents only
  // when the orders of magnitude are close
  const digitsA = abs(a.n).toString().length + a.e;
  const digitsB = abs(b.n).toString().length + b.e;
  let magnitude: number;
  if (digitsA !== digitsB) magnitude = Math.sign(digitsA - digitsB);
  else {
    const e = Math.min(a.e, b.e);
    const x = abs(a.n) * pow10(a.e - e);
    const y = abs(b.n) * pow10(b.e - e);
    magnitude = order(x, y);
  }
  return sa * magnitude;
}

/**
 * One quantity from a decoded JSON body, in canonical form: a string as the
 * decoder reads it (surrounding spaces trimmed), a number by its text, null
 * as zero. Anything else fails as it does in Quantity.UnmarshalJSON.
 *
 * A JSON number arrives here already parsed, so `1.500` or `1e3` are seen as
 * 1.5 and 1000 and come out as "1500m" and "1k", where a real API server,
 * reading the raw text, would keep "1.500" and "1e3".
 */
export function canonicalQuantity(value: unknown): string {
  if (value === null) return '0';
  if (typeof value === 'string')
    return formatQuantity(parseQuantity(value.trim()));
  if (typeof value === 'number')
    return formatQuantity(parseQuantity(String(value)));
  throw new QuantityError(FORMAT_WRONG);
}

/** The ResourceLists of a pod spec: requests and limits of every container. */
function resourceLists(podSpec: JsonObject | undefined): JsonObject[] {
  const lists: JsonObject[] = [];
  for (const container of [
    ...asArray(podSpec?.containers),
    ...asArray(podSpec?.initContainers),
  ]) {
    const resources = asObject(asObject(container)?.resources);
    for (const key of ['limits', 'requests']) {
      const list = asObject(resources?.[key]);
      if (list) lists.push(list);
    }
  }
  return lists;
}

/** The built-in kinds with a pod template at `spec.template`. */
const TEMPLATE_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet', 'Job'];

/** The pod spec of a kind's template, for the kinds whose quantities are typed. */
export function podSpecOf(
  def: ResourceDef,
  obj: JsonObject,
): JsonObject | undefined {
  // A custom resource (an Argo Rollout) is stored as sent: only built-in
  // kinds have typed quantities.
  const spec = asObject(obj.spec);
  if (def.kind === 'CronJob')
    return asObject(
      asObject(asObject(asObject(spec?.jobTemplate)?.spec)?.template)?.spec,
    );
  if (!TEMPLATE_KINDS.includes(def.kind)) return undefined;
  return asObject(asObject(spec?.template)?.spec);
}

/** The storage requests and limits of a claim, or of a StatefulSet's claim templates. */
function claimResourceLists(def: ResourceDef, obj: JsonObject): JsonObject[] {
  let specs: unknown[] = [];
  if (def.kind === 'PersistentVolumeClaim') specs = [obj.spec];
  if (def.kind === 'StatefulSet')
    specs = asArray(asObject(obj.spec)?.volumeClaimTemplates).map(
      t => asObject(t)?.spec,
    );
  const lists: JsonObject[] = [];
  for (const spec of specs) {
    const resources = asObject(asObject(spec)?.resources);
    for (const key of ['limits', 'requests']) {
      const list = asObject(resources?.[key]);
      if (list) lists.push(list);
    }
  }
  return lists;
}

/**
 * Rewrites, in place, the container requests and limits of `obj` in canonical
 * form, as decoding the body does. Returns the decoder's message for the
 * first quantity that does not parse, and then leaves `obj` half-rewritten.
 */
export function canonicalizeQuantities(
  def: ResourceDef,
  obj: JsonObject,
): string | undefined {
  for (const list of [
    ...resourceLists(podSpecOf(def, obj)),
    ...claimResourceLists(def, obj),
  ]) {
    for (const [name, value] of Object.entries(list)) {
      try {
        list[name] = canonicalQuantity(value);
      } catch (error) {
        if (error instanceof QuantityError) return error.message;
        throw error;
      }
    }
  }
  return undefined;
}
