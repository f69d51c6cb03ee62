import type { Knex } from 'knex';
import { eventRow, type EventRow } from './tables';
import type { NewEvent } from './types';

/**
 * An event as it was committed, with its component (deployments and releases, when the
 * application still exists) and a deployment's cluster resolved.
 */
export interface LoggedEvent extends NewEvent {
  createdAt: string;
  entityRef?: string;
  cluster?: string;
}

/** Hears the events of `fleet_events` once their transaction committed. */
export type EventsCommittedListener = (events: LoggedEvent[]) => void;

/** Ids per `whereIn`: under SQLite's bound-variable limit, whatever its build. */
const CHUNK = 500;

type Db = Knex | Knex.Transaction;

/**
 * Every write of `fleet_events` goes through here. The rows are inserted with the caller's
 * transaction; once that transaction commits (at once, outside of one) the listener hears them,
 * in this process only: the replica that wrote a change is the one that announces it, so each
 * change is announced once however many replicas run, and a rolled-back change never is.
 */
export class EventLog {
  private constructor(private readonly listener?: EventsCommittedListener) {}

  static create(listener?: EventsCommittedListener): EventLog {
    return new EventLog(listener);
  }

  async write(db: Db, events: NewEvent[], now: Date): Promise<void> {
    if (events.length === 0) return;
    await db<EventRow>('fleet_events').insert(
      events.map(event => eventRow(event, now)),
    );
    const listener = this.listener;
    if (!listener) return;
    // Resolved inside the transaction, where a deployment removed by it can still be read.
    const logged = await describe(db, events, now);
    const transaction = outermost(db);
    if (!transaction) {
      listener(logged);
      return;
    }
    // Resolves when COMMIT returned; rejects on a rollback (the error that caused it).
    transaction.executionPromise.then(
      () => listener(logged),
      () => undefined,
    );
  }
}

function outermost(db: Db): Knex.Transaction | undefined {
  if (!('isTransaction' in db) || !db.isTransaction) return undefined;
  let tx = db as Knex.Transaction;
  while (tx.parentTransaction) tx = tx.parentTransaction;
  return tx;
}

async function describe(
  db: Db,
  events: NewEvent[],
  now: Date,
): Promise<LoggedEvent[]> {
  const deploymentIds = unique(events, 'deployment');
  const releaseIds = unique(events, 'release');
  const deployments = new Map<string, { entityRef: string; cluster: string }>();
  const releases = new Map<string, string>();
  for (let at = 0; at < deploymentIds.length; at += CHUNK) {
    const rows: Array<{ id: string; cluster: string; entity_ref: string }> =
      await db('fleet_deployments as d')
        .join('fleet_applications as a', 'a.id', 'd.application_id')
        .whereIn('d.id', deploymentIds.slice(at, at + CHUNK))
        .select('d.id', 'd.cluster', 'a.entity_ref');
    for (const row of rows)
      deployments.set(row.id, {
        entityRef: row.entity_ref,
        cluster: row.cluster,
      });
  }
  for (let at = 0; at < releaseIds.length; at += CHUNK) {
    const rows: Array<{ id: string; entity_ref: string }> = await db(
      'fleet_releases as r',
    )
      .join('fleet_applications as a', 'a.id', 'r.application_id')
      .whereIn('r.id', releaseIds.slice(at, at + CHUNK))
      .select('r.id', 'a.entity_ref');
    for (const row of rows) releases.set(row.id, row.entity_ref);
  }
  const createdAt = now.toISOString();
  return events.map(event => {
    if (event.subjectKind === 'deployment') {
      return { ...event, createdAt, ...deployments.get(event.subject) };
    }
    if (event.subjectKind === 'release') {
      return { ...event, createdAt, entityRef: releases.get(event.subject) };
    }
    return { ...event, createdAt };
  });
}

function unique(events: NewEvent[], kind: NewEvent['subjectKind']): string[] {
  return [
    ...new Set(events.filter(e => e.subjectKind === kind).map(e => e.subject)),
  ];
}

/** What a store that writes events is made with. */
export type EventLogOptions = {
  /** The log its events go through; a log of its own, heard by no one, without one. */
  eventLog?: EventLog;
};

/** A knex store that writes events, each through its {@link EventLog}. */
export abstract class EventLoggingStore {
  protected readonly log: EventLog;

  protected constructor(protected readonly db: Knex, options: EventLogOptions) {
    this.log = options.eventLog ?? EventLog.create();
  }
}
