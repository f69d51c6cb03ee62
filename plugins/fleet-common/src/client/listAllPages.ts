import { FLEET_LIST_LIMITS } from '../constants';
import type { ListResponse } from '../types';

/**
 * The query of one page of a walk over a paged list: the largest page size, and after the first
 * page the cursor the page before gave.
 *
 * @public
 */
export type FleetPageQuery = { limit: string; cursor?: string };

/**
 * Every item of a paged Fleet list (clusters, applications, deployments), asked in pages of the
 * largest size: the first page, then each next page asked with the cursor the one before gave,
 * until none is given. A cursor seen
 * before ends the walk, since following it again would only loop.
 *
 * @public
 */
export async function listAllPages<T>(
  page: (query: FleetPageQuery) => Promise<ListResponse<T>>,
): Promise<T[]> {
  const limit = String(FLEET_LIST_LIMITS.max);
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  do {
    const answer = await page({ limit, cursor });
    items.push(...answer.items);
    cursor = answer.nextCursor;
    if (cursor && seen.has(cursor)) break;
    if (cursor) seen.add(cursor);
  } while (cursor);
  return items;
}
