import { FLEET_LIST_LIMITS, type ListResponse } from '@cnp/plugin-fleet-common';
import { z } from 'zod';
import type { PageRequest } from '../database/types';

/** The lists the API pages, each with the number of parts of its sort key. */
const KEY_PARTS = { clusters: 1, applications: 1, deployments: 2 } as const;
type PagedList = keyof typeof KEY_PARTS;

/** A part of a key is a name or an entity ref: short. */
const MAX_KEY_PART = 512;

/** `limit`: an integer from 1 to 1,000, in decimal digits only (no `1e3`, `0x10`, ` 5`). */
const limitSchema = z
  .string()
  .regex(
    /^[0-9]{1,7}$/,
    `must be an integer from 1 to ${FLEET_LIST_LIMITS.max}`,
  )
  .transform(Number)
  .refine(
    n => n >= 1 && n <= FLEET_LIST_LIMITS.max,
    `must be an integer from 1 to ${FLEET_LIST_LIMITS.max}`,
  );

function encodeCursor(list: PagedList, key: string[]): string {
  return Buffer.from(JSON.stringify({ l: list, k: key }), 'utf8').toString(
    'base64url',
  );
}

/** A cursor of this list, as it handed it out; anything else is not a cursor (400). */
function cursorSchema(list: PagedList) {
  return z
    .string()
    .max(4096, 'is not a cursor this list gave')
    .transform((cursor, ctx) => {
      let decoded: unknown;
      try {
        if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('not base64url');
        decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
      } catch {
        decoded = undefined;
      }
      const parsed = z
        .object({
          l: z.literal(list),
          k: z
            .array(z.string().min(1).max(MAX_KEY_PART))
            .length(KEY_PARTS[list]),
        })
        .strict()
        .safeParse(decoded);
      if (!parsed.success) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          message: `is not a cursor this list gave (pass nextCursor from an answer of GET /${list} as it is)`,
        });
        return z.NEVER;
      }
      return parsed.data.k;
    });
}

/** The `limit` and `cursor` query parameters of a paged list. */
export function pageQueryShape(list: PagedList) {
  return {
    limit: limitSchema.optional(),
    cursor: cursorSchema(list).optional(),
  };
}

/**
 * The page to read for a request: one row more than asked, which tells whether more remain
 * without a count.
 */
export function pageToRead(query: {
  limit?: number;
  cursor?: string[];
}): PageRequest {
  return {
    limit: (query.limit ?? FLEET_LIST_LIMITS.default) + 1,
    after: query.cursor,
  };
}

/**
 * The answer for one page read by {@link pageToRead}: its items, and `nextCursor` (the key of
 * the last item shown) when more remain.
 */
export function pageAnswer<R, T>(
  list: PagedList,
  read: PageRequest,
  rows: R[],
  keyOf: (row: R) => string[],
  toItem: (row: R) => T,
): ListResponse<T> {
  const limit = read.limit - 1;
  const shown = rows.slice(0, limit);
  return {
    items: shown.map(toItem),
    ...(rows.length > limit
      ? { nextCursor: encodeCursor(list, keyOf(shown[shown.length - 1])) }
      : {}),
  };
}
