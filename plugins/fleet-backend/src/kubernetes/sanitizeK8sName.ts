import { createHash } from 'node:crypto';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const MAX_LENGTH = 63;
const HASH_LENGTH = 8;

function shortHash(input: string): string {
  return createHash('sha256').update(input).digest('hex').slice(0, HASH_LENGTH);
}

/** True when `name` is a DNS-1123 label: what Kubernetes accepts as an object or cluster name. */
export function isDns1123Label(name: string): boolean {
  return name.length <= MAX_LENGTH && DNS1123_LABEL.test(name);
}

/**
 * Turns any text into a Kubernetes-safe name: lower case, `[a-z0-9-]` only, starting and ending
 * alphanumeric, at most 63 characters, never empty. A name that is already valid is kept as it
 * is; the result is stable; a name that had to be cut keeps a short hash of the whole input so
 * that two long names sharing a prefix do not collide.
 */
export function sanitizeK8sName(input: string): string {
  if (isDns1123Label(input)) return input;
  const cleaned = input
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '');
  if (cleaned === '') return `x-${shortHash(input)}`;
  // A long input keeps a hash even when cleaning shortened it enough: two long names that differ
  // only in characters cleaning drops must still get different names.
  if (cleaned.length <= MAX_LENGTH && input.length <= MAX_LENGTH)
    return cleaned;
  const head = cleaned
    .slice(0, MAX_LENGTH - HASH_LENGTH - 1)
    .replace(/-+$/, '');
  return `${head}-${shortHash(input)}`;
}

/** A stable suffix for a name that collides with another one. */
export function withStableSuffix(name: string, seed: string): string {
  const head = name.slice(0, MAX_LENGTH - HASH_LENGTH - 1).replace(/-+$/, '');
  return `${head}-${shortHash(seed)}`;
}
