import type {
  HealthCycleSummary,
  MassOutageWarning,
} from '@cnp/plugin-fleet-common';
import type { Knex } from 'knex';
import { isUniqueViolation } from './dialect';
import { parseJson, type LockRow, type StateRow } from './tables';
import type { FleetStateStore } from './types';

/** The keys of `fleet_state`: known to this store only. */
const MASS_OUTAGE_KEY = 'massOutage';
const LAST_CYCLE_KEY = 'lastCycle';

/** The knex implementation of {@link FleetStateStore}, on SQLite and PostgreSQL. */
export class DatabaseFleetStateStore implements FleetStateStore {
  private constructor(private readonly db: Knex) {}

  static create(db: Knex): DatabaseFleetStateStore {
    return new DatabaseFleetStateStore(db);
  }

  getMassOutage(): Promise<MassOutageWarning | undefined> {
    return this.get<MassOutageWarning>(MASS_OUTAGE_KEY);
  }

  setMassOutage(warning: MassOutageWarning): Promise<void> {
    return this.set(MASS_OUTAGE_KEY, warning);
  }

  getLastCycle(): Promise<HealthCycleSummary | undefined> {
    return this.get<HealthCycleSummary>(LAST_CYCLE_KEY);
  }

  setLastCycle(summary: HealthCycleSummary): Promise<void> {
    return this.set(LAST_CYCLE_KEY, summary);
  }

  async tryAcquireLease(
    name: string,
    holder: string,
    ttlMs: number,
  ): Promise<boolean> {
    const now = new Date();
    const expiresAt = new Date(now.getTime() + ttlMs);
    // Take over an expired lease (or renew our own) ...
    const taken = await this.db<LockRow>('fleet_locks')
      .where({ name })
      .andWhere(q => q.where('expires_at', '<', now).orWhere({ holder }))
      .update({ holder, expires_at: expiresAt });
    if (taken > 0) return true;
    // ... or create it when nobody holds it.
    try {
      await this.db<LockRow>('fleet_locks').insert({
        name,
        holder,
        expires_at: expiresAt,
      });
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    await this.db<LockRow>('fleet_locks').where({ name, holder }).delete();
  }

  private async get<T>(key: string): Promise<T | undefined> {
    const row = await this.db<StateRow>('fleet_state').where({ key }).first();
    return row ? parseJson<T | undefined>(row.value, undefined) : undefined;
  }

  private async set<T>(key: string, value: T): Promise<void> {
    await this.db<StateRow>('fleet_state')
      .insert({ key, value: JSON.stringify(value), updated_at: new Date() })
      .onConflict('key')
      .merge(['value', 'updated_at']);
  }
}
