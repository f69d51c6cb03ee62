import { CLUSTER_STATUSES } from '@cnp/plugin-fleet-common';
import { z } from 'zod';
import { pageQueryShape } from './paging';
import { checkQuery } from './specValidation';
import { entityRef, parseOrThrow } from './validation';

/*
 * Query parameters: checked by the OpenAPI spec's parameters (./specValidation), then turned
 * into what the routes use (a query parameter is text: `limit` becomes a number here).
 */

/**
 * Each list's query once the spec accepted it: `limit` as a number, `entityRef` trimmed. Each
 * keeps only its own list's parameters: another list's (`/applications?status=`) is ignored, as
 * any parameter a list does not know.
 */
const listQuerySchemas = {
  '/clusters': z.object({
    status: z.enum(CLUSTER_STATUSES).optional(),
    ...pageQueryShape(),
  }),
  '/applications': z.object({
    entityRef: entityRef.optional(),
    ...pageQueryShape(),
  }),
  '/deployments': z.object({
    entityRef: entityRef.optional(),
    cluster: z.string().optional(),
    ...pageQueryShape(),
  }),
};

/**
 * The paged lists' queries: the spec's parameters, then `limit` as a number (a query parameter
 * is text; the spec says its digits, the range is checked as a number).
 */
export function parseListQuery(
  path: '/clusters' | '/applications' | '/deployments',
  query: unknown,
) {
  checkQuery('get', path, query);
  const parsed: {
    status?: (typeof CLUSTER_STATUSES)[number];
    entityRef?: string;
    cluster?: string;
    cursor?: string;
    limit?: number;
  } = parseOrThrow(listQuerySchemas[path], query, 'query');
  return parsed;
}

/** The query of the lists of one deployment or application (revisions, releases). */
export function parsePageQuery(
  path: '/deployments/{id}/revisions' | '/applications/{id}/releases',
  query: unknown,
) {
  checkQuery('get', path, query);
  return parseOrThrow(z.object(pageQueryShape()), query, 'query');
}

/**
 * `GET /releases`'s query: the spec's, a comma-separated list of the statuses to list (the
 * waiting ones when absent).
 */
export function parseOpenReleasesQuery(query: unknown): {
  statuses?: string[];
} {
  checkQuery('get', '/releases', query);
  const { status } = query as { status?: string };
  return { statuses: status ? [...new Set(status.split(','))] : undefined };
}

/** `DELETE /deployments/:id`'s query: the spec's; `force` as a boolean. */
export function parseUndeployQuery(query: unknown): { force?: boolean } {
  checkQuery('delete', '/deployments/{id}', query);
  const { force } = query as { force?: 'true' | 'false' };
  return { force: force === undefined ? undefined : force === 'true' };
}

/**
 * `GET /events`'s `limit`: any text Number() reads as an integer from 1 to 500, as it always
 * was (`50`, ` 50`, `5e1`): a coercion, which a schema of a text parameter cannot say.
 */
export const eventListQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(500).optional(),
});
