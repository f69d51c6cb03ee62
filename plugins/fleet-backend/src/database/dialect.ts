import type { Knex } from 'knex';

/**
 * What differs between the databases Fleet runs on (SQLite and PostgreSQL): one place for every
 * check of the dialect, so that no query guesses it its own way.
 */

/** Whether `db` talks to PostgreSQL (knex's `pg` client). */
export function isPostgres(db: Knex | Knex.Transaction): boolean {
  return db.client.dialect === 'postgresql';
}

/**
 * Locks the selected rows until the transaction ends (PostgreSQL), so that a check and the write
 * that depends on it cannot interleave with another writer. SQLite runs one write transaction at
 * a time, so it needs (and supports) no row locks.
 */
export function forUpdate<T extends Knex.QueryBuilder>(
  query: T,
  db: Knex | Knex.Transaction,
): T {
  return isPostgres(db) ? (query.forUpdate() as T) : query;
}

/**
 * Serializes the transactions that take the same named lock, until each ends (a PostgreSQL
 * transaction-level advisory lock): for a check that no row lock can cover, such as a count.
 * SQLite runs one write transaction at a time, so it needs no lock.
 */
export async function lockForTransaction(
  tx: Knex.Transaction,
  name: string,
): Promise<void> {
  if (isPostgres(tx))
    await tx.raw('select pg_advisory_xact_lock(hashtext(?))', [name]);
}

/**
 * Keeps the rows after `after` in the order of the unique key `columns` (keyset paging): the
 * rows whose key compares greater, column by column.
 */
export function afterKey<T extends Knex.QueryBuilder>(
  query: T,
  columns: string[],
  after: string[] | undefined,
): T {
  return afterSortKey(
    query,
    columns.map(column => ({ column, order: 'asc' as const })),
    after,
  );
}

/**
 * Keeps the rows after `after` in the order of `columns`, each ascending or descending, which
 * together are unique (keyset paging): (c1 beyond v1) or (c1 = v1 and c2 beyond v2) or ...
 * Values are bound as given (a number for a number column, a Date for a timestamp).
 */
export function afterSortKey<T extends Knex.QueryBuilder>(
  query: T,
  columns: Array<{ column: string; order: 'asc' | 'desc' }>,
  after: unknown[] | undefined,
): T {
  if (!after) return query;
  if (after.length !== columns.length) {
    throw new Error(
      `A page key has ${columns.length} part(s), not ${after.length}`,
    );
  }
  return query.where(outer => {
    columns.forEach(({ column, order }, i) => {
      outer.orWhere(inner => {
        for (let j = 0; j < i; j++)
          inner.where(columns[j].column, after[j] as Knex.Value);
        inner.where(
          column,
          order === 'asc' ? '>' : '<',
          after[i] as Knex.Value,
        );
      });
    });
  }) as T;
}

interface DriverError {
  code?: string;
  message?: string;
}

/** A write refused because a unique key (or the primary key) already holds the value. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as DriverError | undefined;
  return (
    e?.code === '23505' || // PostgreSQL
    e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    e?.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    e?.code === 'ER_DUP_ENTRY' || // MySQL
    /UNIQUE constraint failed|duplicate key/i.test(e?.message ?? '')
  );
}

/** A write refused because a foreign key points at a row that is not (or no longer) there. */
export function isForeignKeyViolation(error: unknown): boolean {
  const e = error as DriverError | undefined;
  return (
    e?.code === '23503' || // PostgreSQL
    e?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY' ||
    /FOREIGN KEY constraint failed|violates foreign key constraint/i.test(
      e?.message ?? '',
    )
  );
}

const ISO_UTC_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Turns what a driver gives back for a timestamp column into ISO 8601. */
export function toIso(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (value instanceof Date) return value.toISOString();
  // Already as `toISOString` writes it (PostgreSQL's reads of deployments format it so).
  if (typeof value === 'string' && ISO_UTC_MS.test(value)) return value;
  if (typeof value === 'number') return new Date(value).toISOString();
  const text = String(value);
  if (/^\d+$/.test(text)) return new Date(Number(text)).toISOString();
  // SQLite's CURRENT_TIMESTAMP style: '2026-11-29 10:00:00' (UTC)
  const normalized = /[zZ]|[+-]\d\d:?\d\d$/.test(text)
    ? text
    : `${text.replace(' ', 'T')}Z`;
  return new Date(normalized).toISOString();
}

/**
 * A parameter placeholder with its type spelled out where the database needs it: PostgreSQL
 * cannot infer the type of a bare `?` inside a `CASE` arm.
 */
export function typedPlaceholder(
  db: Knex | Knex.Transaction,
  type: string,
): string {
  return isPostgres(db) ? `CAST(? AS ${type})` : '?';
}
