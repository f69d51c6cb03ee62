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
    return this.withContext(rows.map(toEvent));
  }

  async listRecentEvents(limit: number): Promise<FleetEvent[]> {
    const rows = await this.db<EventRow>('fleet_events')
      .orderBy('id', 'desc')
      .limit(limit);
    return this.withContext(rows.map(toEvent));
  }

  /** The events with the component and cluster each is about (null: none, or not known). */
  private async withContext(events: FleetEvent[]): Promise<FleetEvent[]> {
    const ids = (kind: FleetEvent['subjectKind']) => [
      ...new Set(
        events.filter(e => e.subjectKind === kind).map(e => e.subject),
      ),
    ];
    const [deployments, releases] = await Promise.all([
      this.deploymentContext(ids('deployment')),
      this.releaseContext(ids('release')),
    ]);
    return events.map(event => {
      switch (event.subjectKind) {
        case 'cluster':
          return { ...event, entityRef: null, cluster: event.subject };
        case 'deployment': {
          const context = deployments.get(event.subject);
          return {
            ...event,
            entityRef: context?.entityRef ?? null,
            cluster: context?.cluster ?? null,
          };
        }
        default:
          return {
            ...event,
            entityRef: releases.get(event.subject) ?? null,
            cluster: null,
          };
      }
    });
  }

  /** Each deployment's component and cluster: from the deployment, or its revisions once undeployed. */
  private async deploymentContext(
    ids: string[],
  ): Promise<Map<string, { entityRef: string | null; cluster: string }>> {
    const context = new Map<
      string,
      { entityRef: string | null; cluster: string }
    >();
    // A deployment's own row while it exists; once undeployed, its revisions.
    const sources = [
      ['fleet_deployments', 'id'],
      ['fleet_revisions', 'deployment_id'],
    ] as const;
    for (const [table, idColumn] of sources) {
      const missing = ids.filter(id => !context.has(id));
      if (missing.length === 0) break;
      const rows = await this.db(`${table} as t`)
        .leftJoin('fleet_applications as a', 'a.id', 't.application_id')
        .whereIn(`t.${idColumn}`, missing)
        .distinct(
          `t.${idColumn} as id`,
          't.cluster as cluster',
          'a.entity_ref as entityRef',
        );
      for (const row of rows) {
        context.set(row.id, {
          entityRef: row.entityRef ?? null,
          cluster: row.cluster,
        });
      }
    }
    return context;
  }

  /** Each release's component. */
  private async releaseContext(ids: string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db('fleet_releases as r')
      .join('fleet_applications as a', 'a.id', 'r.application_id')
      .whereIn('r.id', ids)
      .select('r.id as id', 'a.entity_ref as entityRef');
    return new Map(rows.map(row => [row.id, row.entityRef]));
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
