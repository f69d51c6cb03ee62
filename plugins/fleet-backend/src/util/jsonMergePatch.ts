/** A plain JSON object (not an array, not null). */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `patch` laid over `target` as a JSON merge patch (RFC 7386): an object merges key by key, a
 * `null` member removes that key, anything else (arrays included) replaces. Neither argument is
 * changed.
 */
export function jsonMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const result: Record<string, unknown> = isObject(target)
    ? structuredClone(target)
    : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = jsonMergePatch(result[key], value);
  }
  return result;
}
