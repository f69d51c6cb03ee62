import type { FleetEvent } from '@cnp/plugin-fleet-common';
import type { Knex } from 'knex';
import { toEvent, type EventRow } from './tables';
import type { EventStore } from './types';

/** The knex implementation of {@link EventStore}, on SQLite and PostgreSQL. */
export class DatabaseEventStore implements EventStore {
  private constructor(private readonly db: Knex) {}

  static create(db: Knex): DatabaseEventStore {
    return new DatabaseEventStore(db);
  }

  async listEvents(filter: {
    subjectKind: FleetEvent['subjectKind'];
    subject: string;
    limit?: number;
  }): Promise<FleetEvent[]> {
    const rows = await this.db<EventRow>('fleet_events')
      .where({ subject_kind: filter.subjectKind, subject: filter.subject })
      .orderBy('id', 'desc')
      .limit(filter.limit ?? 100);
    return rows.map(toEvent);
  }

  async listRecentEvents(limit: number): Promise<FleetEvent[]> {
    const rows = await this.db<EventRow>('fleet_events')
      .orderBy('id', 'desc')
      .limit(limit);
    return rows.map(toEvent);
  }

  async deleteEventsBefore(cutoff: Date, limit: number): Promise<number> {
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new Error(
        `deleteEventsBefore needs a positive integer limit, got ${limit}`,
      );
    }
    // DELETE ... LIMIT is not portable; a bounded subquery is, on SQLite and PostgreSQL alike.
    const oldest = this.db<EventRow>('fleet_events')
      .select('id')
      .where('created_at', '<', cutoff)
      .orderBy('created_at')
      .limit(limit);
    return this.db<EventRow>('fleet_events').whereIn('id', oldest).delete();
  }
}
