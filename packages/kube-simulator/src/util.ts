/** Small helpers shared by the store, the patchers and the router. */

export type JsonObject = { [key: string]: unknown };

export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function clone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => deepEqual(v, b[i]));
  }
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false;
    const ka = Object.keys(a).filter(k => a[k] !== undefined);
    const kb = Object.keys(b).filter(k => b[k] !== undefined);
    if (ka.length !== kb.length) return false;
    return ka.every(k => deepEqual(a[k], b[k]));
  }
  return false;
}

/** RFC 3339 with second precision, as metav1.Time serialises. */
export function rfc3339(ms: number = Date.now()): string {
  return new Date(Math.floor(ms / 1000) * 1000)
    .toISOString()
    .replace('.000Z', 'Z');
}

/** Reads a nested object, creating the missing levels. */
export function ensureObject(parent: JsonObject, key: string): JsonObject {
  const existing = parent[key];
  if (isPlainObject(existing)) return existing;
  const created: JsonObject = {};
  parent[key] = created;
  return created;
}

export function asObject(value: unknown): JsonObject | undefined {
  return isPlainObject(value) ? value : undefined;
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
