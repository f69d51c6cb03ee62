import { InputError } from '@backstage/errors';

/** A URL of the Git host taken apart, see {@link parseGitHostUrl}. */
export interface GitHostUrl {
  /** The repository path without `.git`, e.g. `inventory` or `team/inventory`. */
  repository: string;
  /** Where the repository clones from: `<base>/<repository>.git`. */
  cloneUrl: string;
  /** `blob` for a file, `tree` for a folder; both are accepted by both reads. */
  kind: 'blob' | 'tree';
  /**
   * The decoded segments after `blob/` or `tree/`: a ref (which may hold
   * slashes, like `release/1.0`) followed by a path. Empty for the default
   * branch's root.
   */
  refAndPath: string[];
}

/** `base` as origin and path, with no trailing slash, query or fragment. */
export function normalizeBaseUrl(base: string): string {
  const url = new URL(base);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** True when `url` lies under the normalized `base` (same origin, and below its path). */
export function isUnderBaseUrl(url: URL, base: string): boolean {
  return `${url.origin}${url.pathname}`.startsWith(`${base}/`);
}

/**
 * Takes apart a URL of the form
 * `<base>/<repository>.git/blob/<ref>/<path>` (a file) or
 * `<base>/<repository>.git/tree/<ref>/<path>` (a folder), as GitHub and Gitea
 * spell theirs but with `.git` marking where the repository name ends.
 * `<base>/<repository>.git` alone is the default branch's root folder.
 */
export function parseGitHostUrl(target: string, baseUrl: string): GitHostUrl {
  const base = normalizeBaseUrl(baseUrl);
  const url = new URL(target);
  if (!isUnderBaseUrl(url, base)) {
    throw new InputError(`${target} is not a URL under the Git host ${base}`);
  }
  const rest = `${url.origin}${url.pathname}`.slice(base.length + 1).split('/');
  const end = rest.findIndex(segment => segment.endsWith('.git'));
  if (end < 0) {
    throw new InputError(
      `${target} names no repository: expected <base>/<repository>.git/tree/<ref>/<path>`,
    );
  }
  const repository = rest
    .slice(0, end + 1)
    .join('/')
    .replace(/\.git$/, '');
  const after = rest.slice(end + 1).filter(segment => segment !== '');
  const kind = after[0] ?? 'tree';
  if (kind !== 'blob' && kind !== 'tree') {
    throw new InputError(
      `${target} must continue after the repository with /blob/<ref>/<path> or /tree/<ref>/<path>`,
    );
  }
  let refAndPath: string[];
  try {
    refAndPath = after.slice(1).map(segment => decodeURIComponent(segment));
  } catch {
    throw new InputError(`${target} holds a malformed percent-escape`);
  }
  const pieces = refAndPath.flatMap(segment => segment.split('/'));
  if (pieces.some(piece => piece === '..' || piece === '.')) {
    throw new InputError(`${target} must not hold '.' or '..' segments`);
  }
  return {
    repository,
    cloneUrl: `${base}/${repository}.git`,
    kind,
    refAndPath,
  };
}
