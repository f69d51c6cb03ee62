import type { ListResponse } from '../types';

/**
 * Every item of a paged Fleet list (clusters, applications, deployments): the first page, then
 * each next page asked with the cursor the one before gave, until none is given. A cursor seen
 * before ends the walk, since following it again would only loop.
 *
 * @public
 */
export async function listAllPages<T>(
  page: (cursor: string | undefined) => Promise<ListResponse<T>>,
): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  do {
    const answer = await page(cursor);
    items.push(...answer.items);
    cursor = answer.nextCursor;
    if (cursor && seen.has(cursor)) break;
    if (cursor) seen.add(cursor);
  } while (cursor);
  return items;
}
