import { createHmac, timingSafeEqual } from 'node:crypto';
import { InputError } from '@backstage/errors';
import { FLEET_LIST_LIMITS, type ListResponse } from '@cnp/plugin-fleet-common';
import { z } from 'zod';
import type { PageRequest } from '../database/types';

/**
 * The lists the API pages, each with its path (for messages) and the parts of its sort key:
 * clusters by name, applications by entity ref, deployments by entity ref and cluster, a
 * deployment's revisions by number (newest first), an application's releases by creation time
 * and id (newest first).
 */
const LISTS = {
  clusters: { parts: 1, path: 'GET /clusters' },
  applications: { parts: 1, path: 'GET /applications' },
  deployments: { parts: 2, path: 'GET /deployments' },
  revisions: { parts: 1, path: 'GET /deployments/:id/revisions' },
  releases: { parts: 2, path: 'GET /applications/:id/releases' },
} as const;
export type PagedList = keyof typeof LISTS;

/** A part of a key is a name, an entity ref, a number or a time: short. */
const MAX_KEY_PART = 512;
/** The longest cursor a list hands out (a key of two parts of 512 characters, and a MAC). */
const MAX_CURSOR = 4096;

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

/**
 * `cursor`: its shape only (base64url, two parts, bounded); whether a list gave it is checked
 * with the key, by {@link PageCursors.read}.
 */
const cursorSchema = z
  .string()
  .max(MAX_CURSOR, 'invalid cursor')
  .regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'invalid cursor');

/** The `limit` and `cursor` query parameters of a paged list. */
export function pageQueryShape() {
  return {
    limit: limitSchema.optional(),
    cursor: cursorSchema.optional(),
  };
}

const payloadSchema = z
  .object({
    l: z.string(),
    /** The list's scope: the deployment of revisions, the application of releases. */
    s: z.string().max(64).optional(),
    k: z.array(z.string().min(1).max(MAX_KEY_PART)),
  })
  .strict();

/**
 * The cursors of the API's lists: opaque and signed. A cursor is the key of the last item of a
 * page, with its list (and the deployment or application the list is of), and an HMAC-SHA256 of
 * them under a key every replica shares (kept in the database, made on the first start). So a
 * cursor is only ever one a list handed out: one changed by hand, or taken to another list, is a
 * 400 `invalid cursor`, and no key a caller makes up reaches the database.
 */
export class PageCursors {
  private constructor(private readonly key: Buffer) {}

  static create(key: Buffer): PageCursors {
    if (key.length < 32) throw new Error('A cursor key has at least 32 bytes');
    return new PageCursors(key);
  }

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.key).update(payload).digest();
  }

  /** The cursor of a page that ends at `key`. */
  encode(list: PagedList, key: string[], scope?: string): string {
    const payload = Buffer.from(
      JSON.stringify({ l: list, ...(scope ? { s: scope } : {}), k: key }),
      'utf8',
    ).toString('base64url');
    return `${payload}.${this.mac(payload).toString('base64url')}`;
  }

  /** The key a cursor of `list` (of `scope`) carries; a 400 for anything else. */
  decode(list: PagedList, cursor: string, scope?: string): string[] {
    const invalid = () =>
      new InputError(
        `Invalid query: cursor: invalid cursor (pass nextCursor from an answer of ${LISTS[list].path} as it is)`,
      );
    const [payload, mac, ...rest] = cursor.split('.');
    if (rest.length || !payload || !mac) throw invalid();
    const given = Buffer.from(mac, 'base64url');
    const expected = this.mac(payload);
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw invalid();
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalid();
    }
    const parsed = payloadSchema.safeParse(decoded);
    if (
      !parsed.success ||
      parsed.data.l !== list ||
      parsed.data.s !== scope ||
      parsed.data.k.length !== LISTS[list].parts
    ) {
      throw invalid();
    }
    return parsed.data.k;
  }

  /**
   * The page to read for a request: one row more than asked, which tells whether more remain
   * without a count; after the key of its cursor.
   */
  read(
    list: PagedList,
    query: { limit?: number; cursor?: string },
    scope?: string,
  ): PageRequest {
    return {
      limit: (query.limit ?? FLEET_LIST_LIMITS.default) + 1,
      after:
        query.cursor !== undefined
          ? this.decode(list, query.cursor, scope)
          : undefined,
    };
  }

  /**
   * The answer for one page read by {@link PageCursors.read}: its items, and `nextCursor` (the
   * key of the last item shown) when more remain.
   */
  answer<R, T>(
    list: PagedList,
    read: PageRequest,
    rows: R[],
    keyOf: (row: R) => string[],
    toItem: (row: R) => T,
    scope?: string,
  ): ListResponse<T> {
    const limit = read.limit - 1;
    const shown = rows.slice(0, limit);
    return {
      items: shown.map(toItem),
      ...(rows.length > limit
        ? {
            nextCursor: this.encode(
              list,
              keyOf(shown[shown.length - 1]),
              scope,
            ),
          }
        : {}),
    };
  }
}
