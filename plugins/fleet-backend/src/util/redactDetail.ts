import os from 'node:os';

/** What stands in for a detail only cluster admins may see. */
export const HIDDEN_DETAIL = 'the details are shown to cluster admins';

/** The system's error codes (`ENOENT`, `EACCES`, ...) and the resolver's. */
const ERROR_CODES = new Set([
  ...Object.keys(os.constants.errno),
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NODATA',
  'EAI_NONAME',
]);

/**
 * Where a text first says something of the backend host's files: a kubeconfig (its path, or
 * why it cannot be used: missing, unreadable, not a file, malformed...), an absolute path, or a
 * system error code. -1 when it says nothing of them.
 */
function firstHostDetail(text: string): number {
  const found: number[] = [];
  const kubeconfig = text.search(/kubeconfig/i);
  if (kubeconfig >= 0) found.push(kubeconfig);
  // A path starts a word or a quotation; the path of a URL follows its host.
  const absolutePath = /(^|[\s'"(=:,])\/[^\s/]/.exec(text);
  if (absolutePath) found.push(absolutePath.index + absolutePath[1].length);
  for (const match of text.matchAll(/\b[A-Z][A-Z0-9_]{2,}\b/g)) {
    if (ERROR_CODES.has(match[0])) {
      found.push(match.index!);
      break;
    }
  }
  return found.length ? Math.min(...found) : -1;
}

/**
 * A status reason or message as those who are not cluster admins see it: the part that says
 * something of the backend host's files (a kubeconfig path, `ENOENT` rather than `EACCES`, which
 * would let a user probe which files exist) is replaced, from the clause it starts in, by a
 * generic sentence. `NOT_PROBEABLE: kubeconfig file '/k/a.yaml' is not readable (EACCES)` becomes
 * `NOT_PROBEABLE: the details are shown to cluster admins`; a text without such a detail is kept.
 */
export function redactDetail(text: string): string;
export function redactDetail(text: string | null): string | null;
export function redactDetail(
  text: string | null | undefined,
): string | null | undefined;
export function redactDetail(
  text: string | null | undefined,
): string | null | undefined {
  if (!text) return text;
  const at = firstHostDetail(text);
  if (at < 0) return text;
  const clause = text.lastIndexOf(': ', at);
  return clause >= 0
    ? `${text.slice(0, clause)}: ${HIDDEN_DETAIL}`
    : HIDDEN_DETAIL;
}
