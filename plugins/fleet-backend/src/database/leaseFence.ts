import type { Knex } from 'knex';
import { LeaseLostError } from './conflicts';
import { forUpdate } from './dialect';
import { millisecondsUntil } from './databaseClock';
import type { LockRow } from './tables';
import type { LeaseFence } from './types';

/**
 * Refuses (`LeaseLostError`) the writes of `tx` unless `fence` is still the lease as it stands:
 * the same holder, the same fencing token, not expired. The lease's row stays locked until `tx`
 * ends (PostgreSQL), so nobody takes the lease over between this check and the writes.
 */
export async function assertLeaseHeld(
  tx: Knex.Transaction,
  fence: LeaseFence,
): Promise<void> {
  // Expired or not by the database's clock, never this replica's (see `databaseClock.ts`).
  const [row]: Array<LockRow & { remaining_ms: number | string }> =
    await forUpdate(
      tx<LockRow>('fleet_locks')
        .where({ name: fence.name })
        .select(
          '*',
          tx.raw('? as remaining_ms', [millisecondsUntil(tx, 'expires_at')]),
        )
        .limit(1),
      tx,
    );
  if (
    !row ||
    row.holder !== fence.holder ||
    Number(row.token) !== fence.token ||
    !(Number(row.remaining_ms) > 0)
  ) {
    throw new LeaseLostError(
      `The '${fence.name}' lease (token ${fence.token}) is no longer held by ${
        fence.holder
      }: ${
        row
          ? `it is at token ${row.token}, held by ${row.holder}`
          : 'it is gone'
      }; the write is refused`,
    );
  }
}

/** Runs `fn` in one transaction, fenced by `fence` when given. */
export function fenced<T>(
  db: Knex,
  fence: LeaseFence | undefined,
  fn: (tx: Knex.Transaction) => Promise<T>,
): Promise<T> {
  return db.transaction(async tx => {
    if (fence) await assertLeaseHeld(tx, fence);
    return fn(tx);
  });
}
