import type {
  HealthCycleSummary,
  MassOutageWarning,
} from '@cnp/plugin-fleet-common';
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { isUniqueViolation, toIso } from './dialect';
import { parseJson, type LockRow, type StateRow } from './tables';
import { fenced } from './leaseFence';
import {
  databaseNow,
  databaseNowPlus,
  millisecondsUntil,
} from './databaseClock';
import type { FleetStateStore, LeaseFence, LeaseRecord } from './types';

/** The keys of `fleet_state`: known to this store only. */
const MASS_OUTAGE_KEY = 'massOutage';
const LAST_CYCLE_KEY = 'lastCycle';
const CURSOR_KEY = 'cursorSigningKey';

/** The knex implementation of {@link FleetStateStore}, on SQLite and PostgreSQL. */
export class DatabaseFleetStateStore implements FleetStateStore {
  private constructor(private readonly db: Knex) {}

  static create(db: Knex): DatabaseFleetStateStore {
    return new DatabaseFleetStateStore(db);
  }

  getMassOutage(): Promise<MassOutageWarning | undefined> {
    return this.get<MassOutageWarning>(MASS_OUTAGE_KEY);
  }

  setMassOutage(warning: MassOutageWarning, fence?: LeaseFence): Promise<void> {
    return this.set(MASS_OUTAGE_KEY, warning, fence);
  }

  getLastCycle(): Promise<HealthCycleSummary | undefined> {
    return this.get<HealthCycleSummary>(LAST_CYCLE_KEY);
  }

  setLastCycle(summary: HealthCycleSummary, fence?: LeaseFence): Promise<void> {
    return this.set(LAST_CYCLE_KEY, summary, fence);
  }

  async cursorSigningKey(): Promise<Buffer> {
    const stored = await this.get<string>(CURSOR_KEY);
    if (stored) return Buffer.from(stored, 'base64');
    // The first replica's key wins: a concurrent insert of another is ignored, and both read
    // back the one that was written.
    await this.db<StateRow>('fleet_state')
      .insert({
        key: CURSOR_KEY,
        value: JSON.stringify(randomBytes(32).toString('base64')),
        updated_at: new Date(),
      })
      .onConflict('key')
      .ignore();
    return Buffer.from((await this.get<string>(CURSOR_KEY))!, 'base64');
  }

  async tryAcquireLease(
    name: string,
    holder: string,
    ttlMs: number,
  ): Promise<boolean> {
    return (await this.takeLease(name, holder, ttlMs)) !== undefined;
  }

  async takeLease(
    name: string,
    holder: string,
    ttlMs: number,
  ): Promise<LeaseFence | undefined> {
    // The database's clock, not this replica's: see `databaseClock.ts`.
    const now = databaseNow(this.db);
    const expiresAt = databaseNowPlus(this.db, ttlMs);
    // Take over an expired lease, moving its token on, or renew our own, keeping it ...
    const taken = await this.db<LockRow>('fleet_locks')
      .where({ name })
      .andWhere(q => q.where('expires_at', '<', now).orWhere({ holder }))
      .update({
        token: this.db.raw(
          'CASE WHEN holder = ? THEN token ELSE token + 1 END',
          [holder],
        ),
        holder,
        expires_at: expiresAt,
      });
    if (taken === 0) {
      // ... or create it when nobody ever held it.
      try {
        await this.db<LockRow>('fleet_locks').insert({
          name,
          holder,
          expires_at: expiresAt,
          token: 1,
        });
      } catch (error) {
        if (isUniqueViolation(error)) return undefined;
        throw error;
      }
    }
    const row = await this.db<LockRow>('fleet_locks').where({ name }).first();
    return row?.holder === holder
      ? { name, holder, token: Number(row.token) }
      : undefined;
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    // Expired rather than deleted: the token is kept, so the next holder's take moves it on and
    // never hands out a token an earlier holder had.
    await this.db<LockRow>('fleet_locks')
      .where({ name, holder })
      .update({ expires_at: new Date(0) });
  }

  async deleteExpiredLeases(
    prefix: string,
    expiredForMs: number,
  ): Promise<number> {
    const expired = (await this.listLeases(prefix)).filter(
      lease => lease.remainingMs < -expiredForMs,
    );
    if (expired.length === 0) return 0;
    // Each row only while it is still expired: a holder that renewed it meanwhile keeps it.
    return this.db<LockRow>('fleet_locks')
      .whereIn(
        'name',
        expired.map(lease => lease.name),
      )
      .andWhere('expires_at', '<', databaseNowPlus(this.db, -expiredForMs))
      .delete();
  }

  async listLeases(prefix: string): Promise<LeaseRecord[]> {
    const rows: Array<LockRow & { remaining_ms: number | string }> =
      await this.db<LockRow>('fleet_locks')
        .where('name', 'like', `${prefix}%`)
        .select(
          '*',
          this.db.raw('? as remaining_ms', [
            millisecondsUntil(this.db, 'expires_at'),
          ]),
        )
        .orderBy('name');
    // LIKE's wildcards (`_`, `%`) in the prefix match more than it: only names that start with it.
    return rows
      .filter(row => row.name.startsWith(prefix))
      .map(row => ({
        name: row.name,
        holder: row.holder,
        token: Number(row.token),
        expiresAt: toIso(row.expires_at) ?? new Date(0).toISOString(),
        remainingMs: Math.round(Number(row.remaining_ms)),
      }));
  }

  private async get<T>(key: string): Promise<T | undefined> {
    const row = await this.db<StateRow>('fleet_state').where({ key }).first();
    return row ? parseJson<T | undefined>(row.value, undefined) : undefined;
  }

  private async set<T>(
    key: string,
    value: T,
    fence?: LeaseFence,
  ): Promise<void> {
    await fenced(this.db, fence, tx =>
      tx<StateRow>('fleet_state')
        .insert({ key, value: JSON.stringify(value), updated_at: new Date() })
        .onConflict('key')
        .merge(['value', 'updated_at']),
    );
  }
}
