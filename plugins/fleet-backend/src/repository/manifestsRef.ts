import { InputError } from '@backstage/errors';
import { FLEET_ANNOTATION_MANIFESTS_REF } from '@cnp/plugin-fleet-common';

/** The catalog's annotation for where an entity's source lives (`url:<location>`). */
export const SOURCE_LOCATION_ANNOTATION = 'backstage.io/source-location';

/**
 * Where a component's own manifests are read: the URL of a folder (read as a tree) or of one
 * `.yaml`/`.yml` file. Undefined for a component without `cnp.io/manifests-ref`, which keeps
 * Fleet's generated workload.
 *
 * - `url:<url>` is taken as it is.
 * - `dir:<path>` is resolved against the entity's `backstage.io/source-location` (`url:<url>`),
 *   as TechDocs resolves `backstage.io/techdocs-ref`; the location is taken as a folder, so
 *   `…/tree/main` and `…/tree/main/` both resolve `./deploy` to `…/tree/main/deploy`.
 *
 * A malformed annotation is an `InputError` naming it.
 */
export function manifestsUrlOf(
  entityRef: string,
  annotations: Record<string, string>,
): string | undefined {
  const ref = annotations[FLEET_ANNOTATION_MANIFESTS_REF]?.trim();
  if (!ref) return undefined;
  const refused = (why: string) =>
    new InputError(
      `The ${FLEET_ANNOTATION_MANIFESTS_REF} annotation of '${entityRef}' (${ref}) ${why}`,
    );
  const colon = ref.indexOf(':');
  const type = colon < 0 ? '' : ref.slice(0, colon);
  const target = ref.slice(colon + 1).trim();
  if (type === 'url') return absoluteUrl(target, refused);
  if (type !== 'dir') {
    throw refused(
      "must be 'dir:<path relative to the source location>' or 'url:<url>'",
    );
  }
  const location = annotations[SOURCE_LOCATION_ANNOTATION]?.trim();
  if (!location?.startsWith('url:')) {
    throw refused(
      `is relative to the entity's ${SOURCE_LOCATION_ANNOTATION}, which ${
        location ? `is not a url: location (${location})` : 'it has none'
      }`,
    );
  }
  const base = absoluteUrl(location.slice('url:'.length).trim(), refused);
  const folder = base.endsWith('/') ? base : `${base}/`;
  const resolved = new URL(target || '.', folder);
  if (!resolved.href.startsWith(folder)) {
    throw refused(`leaves its source location ${folder}`);
  }
  return checkedPath(resolved, refused).replace(/\/+$/, '');
}

function absoluteUrl(text: string, refused: (why: string) => Error): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refused(`names no absolute URL ('${text}')`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw refused(`must be an http(s) URL, not ${url.protocol}`);
  }
  return checkedPath(url, refused);
}

/**
 * What is checked (a project's `sources`) must be what is read: a reader decodes escapes, so an
 * escaped slash, backslash or dot in the path could name another repository than the one
 * checked; a fragment or credentials have no place in it either.
 */
function checkedPath(url: URL, refused: (why: string) => Error): string {
  if (url.hash || url.username || url.password) {
    throw refused('must name a folder or a file: no fragment or credentials');
  }
  if (/%(2f|5c|2e)|\\/i.test(url.pathname)) {
    throw refused(
      'must not escape a slash, a backslash or a dot in its path: write them as they are',
    );
  }
  return url.href;
}

/** True for a URL that names one file rather than a folder. */
export function isFileUrl(url: string): boolean {
  return /\.ya?ml$/i.test(new URL(url).pathname);
}

/** What a version may be made of (the API's `ManifestVersion`). */
const VERSION = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/;

/**
 * The manifests' URL at `version` (a branch, a tag or a commit): the ref segment that follows
 * `/tree/` or `/blob/` (the form of GitHub, GitLab's `/-/tree/`, Gitea and Fleet's example Git
 * host) is replaced. A URL without one takes `/tree/<version>` after a `.git` repository path;
 * any other URL cannot be versioned (an `InputError`).
 */
export function atVersion(url: string, version: string | undefined): string {
  if (!version) return url;
  // As the API's ManifestVersion: no '%', backslash, '?' or '#' that the URL would read as another path.
  if (!VERSION.test(version)) {
    throw new InputError(
      `Invalid version '${version}': a branch, a tag or a commit is letters, digits, '.', '_', '/' and '-'`,
    );
  }
  if (
    version
      .split('/')
      .some(part => part === '' || part === '.' || part === '..')
  ) {
    throw new InputError(
      `Invalid version '${version}': a branch, a tag or a commit has no empty, '.' or '..' part`,
    );
  }
  const parsed = new URL(url);
  const segments = parsed.pathname.split('/');
  const at = segments.findIndex(s => s === 'tree' || s === 'blob');
  if (at >= 0 && at + 1 < segments.length) {
    segments[at + 1] = version;
  } else if (segments[segments.length - 1]?.endsWith('.git')) {
    segments.push('tree', version);
  } else {
    throw new InputError(
      `Cannot read version '${version}' of ${url}: the URL names no ref (…/tree/<ref>/… or …/blob/<ref>/…) to replace`,
    );
  }
  parsed.pathname = segments.join('/');
  return parsed.href;
}
