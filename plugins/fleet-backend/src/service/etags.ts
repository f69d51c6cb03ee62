import type { Application } from '@cnp/plugin-fleet-common';

/*
 * Optimistic concurrency on applications: the ETag is the application's version (strong, bumped
 * on every write of its spec or placement), and a PATCH with If-Match writes only over a version
 * it names.
 */

/** The strong ETag of an application: its version, quoted. */
export function applicationETag(application: Pick<Application, 'version'>) {
  return `"${application.version}"`;
}

/**
 * The versions an `If-Match` header accepts: undefined when there is no condition (no header, or
 * `*` on a resource that exists), else the versions of its strong ETags. A weak or foreign ETag
 * never matches (If-Match compares strongly), so a header naming none of ours gives an empty
 * list: the write is refused with 412.
 */
export function ifMatchVersions(
  header: string | undefined,
): number[] | undefined {
  if (header === undefined || header.trim() === '*') return undefined;
  const versions: number[] = [];
  for (const tag of header.split(',')) {
    const match = /^"(\d{1,15})"$/.exec(tag.trim());
    if (match) versions.push(Number(match[1]));
  }
  return versions;
}
