import type { Knex } from 'knex';
import { isPostgres, typedPlaceholder } from './dialect';

/*
 * Lease expiry is decided by the database's clock, never a replica's: replicas' clocks drift
 * apart, and one whose clock runs ahead would take a lease its holder still renews, one whose
 * clock runs behind would keep writing under a lease that has run out. Every lease time is
 * written and compared here, in SQL, against the one clock all replicas share.
 *
 * `expires_at` is a timestamp with time zone on PostgreSQL; on SQLite, knex stores a Date as
 * milliseconds since the epoch (an integer), so the time now is written the same way there.
 */

/** SQLite's time now in epoch milliseconds ('now' has millisecond precision). */
const SQLITE_NOW_MS =
  "CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER)";

/** The database's time now, plus `offsetMs`, as the lease columns hold times. */
export function databaseNowPlus(
  db: Knex | Knex.Transaction,
  offsetMs: number,
): Knex.Raw {
  const offset = Math.round(offsetMs);
  return isPostgres(db)
    ? db.raw(
        `(now() + ${typedPlaceholder(
          db,
          'double precision',
        )} * interval '1 millisecond')`,
        [offset],
      )
    : db.raw(`(${SQLITE_NOW_MS} + ?)`, [offset]);
}

/** The database's time now, as the lease columns hold times. */
export function databaseNow(db: Knex | Knex.Transaction): Knex.Raw {
  return isPostgres(db) ? db.raw('now()') : db.raw(SQLITE_NOW_MS);
}

/**
 * An SQL expression: how many milliseconds the time in `column` is ahead of the database's time
 * now (negative once it has passed).
 */
export function millisecondsUntil(
  db: Knex | Knex.Transaction,
  column: string,
): Knex.Raw {
  return isPostgres(db)
    ? db.raw('(EXTRACT(EPOCH FROM (?? - now())) * 1000)', [column])
    : db.raw(`(?? - ${SQLITE_NOW_MS})`, [column]);
}
