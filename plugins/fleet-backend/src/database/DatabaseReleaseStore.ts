import type { Knex } from 'knex';
import { afterSortKey, toIso } from './dialect';
import { EventLoggingStore, type EventLogOptions } from './eventLog';
import { parseJson } from './tables';
import type { ReleaseProgress } from '@cnp/plugin-fleet-common';
import type {
  NewEvent,
  PageRequest,
  ReleaseChange,
  ReleaseRecord,
  ReleaseStore,
} from './types';

interface ReleaseRow {
  id: string;
  application_id: string;
  created_by: string;
  created_at: Date | string | number;
  /** JSON */
  request: string;
  /** JSON */
  strategy: string | null;
  phase: string | null;
  /** JSON */
  targets: string;
  /** JSON */
  skipped: string;
  /** JSON */
  progress: string | null;
  stage?: string | null;
  /** JSON */
  gate?: string | null;
  version: number;
  updated_at?: Date | string | number | null;
}

/** The phases of a progressive release still running. */
const ACTIVE_PHASES = ['PROGRESSING', 'PAUSED', 'ABORTING'];

/** The phases of a release waiting before it starts. */
const WAITING_PHASES = ['WAITING_FOR_APPROVAL', 'WAITING_FOR_WINDOW'];

function toRelease(row: ReleaseRow): ReleaseRecord {
  return {
    id: row.id,
    applicationId: row.application_id,
    createdBy: row.created_by,
    createdAt: toIso(row.created_at)!,
    request: parseJson(row.request, {}),
    strategy: row.strategy ? parseJson(row.strategy, undefined) : undefined,
    phase: row.phase ?? undefined,
    targets: parseJson(row.targets, []),
    skipped: parseJson(row.skipped, []),
    progress: row.progress ? parseJson(row.progress, undefined) : undefined,
    stage: row.stage ?? undefined,
    gate: row.gate ? parseJson(row.gate, undefined) : undefined,
    version: Number(row.version ?? 0),
  };
}

/** The knex implementation of {@link ReleaseStore}, on SQLite and PostgreSQL. */
export class DatabaseReleaseStore
  extends EventLoggingStore
  implements ReleaseStore
{
  static create(db: Knex, options: EventLogOptions = {}): DatabaseReleaseStore {
    return new DatabaseReleaseStore(db, options);
  }

  async insertRelease(
    release: Omit<ReleaseRecord, 'createdAt' | 'version'>,
    events: NewEvent[] = [],
  ): Promise<ReleaseRecord> {
    await this.db.transaction(async tx => {
      await tx<ReleaseRow>('fleet_releases').insert({
        id: release.id,
        application_id: release.applicationId,
        created_by: release.createdBy.slice(0, 255),
        created_at: new Date(),
        request: JSON.stringify(release.request),
        strategy:
          release.strategy === undefined
            ? null
            : JSON.stringify(release.strategy),
        phase: release.phase ?? null,
        targets: JSON.stringify(release.targets),
        skipped: JSON.stringify(release.skipped),
        progress: release.progress ? JSON.stringify(release.progress) : null,
        stage: release.stage ?? null,
        gate: release.gate ? JSON.stringify(release.gate) : null,
        version: 0,
        updated_at: new Date(),
      });
      await this.log.write(tx, events, new Date());
    });
    return (await this.getRelease(release.id))!;
  }

  async getRelease(id: string): Promise<ReleaseRecord | undefined> {
    const row = await this.db<ReleaseRow>('fleet_releases')
      .where({ id })
      .first();
    return row ? toRelease(row) : undefined;
  }

  async listReleases(
    applicationId: string,
    page?: PageRequest,
  ): Promise<ReleaseRecord[]> {
    const query = this.db<ReleaseRow>('fleet_releases')
      .where({ application_id: applicationId })
      .orderBy('created_at', 'desc')
      .orderBy('id');
    if (page) {
      // The key is the release's createdAt (ISO, as answered) and id.
      afterSortKey(
        query,
        [
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'asc' },
        ],
        page.after && [new Date(page.after[0]), page.after[1]],
      ).limit(page.limit);
    }
    return (await query).map(toRelease);
  }

  async listActiveReleases(): Promise<ReleaseRecord[]> {
    const rows = await this.db<ReleaseRow>('fleet_releases')
      .whereIn('phase', ACTIVE_PHASES)
      .orderBy('created_at')
      .orderBy('id');
    return rows.map(toRelease);
  }

  async listOpenReleases(
    options: { phases?: string[]; limit?: number } = {},
  ): Promise<ReleaseRecord[]> {
    const phases = (options.phases ?? WAITING_PHASES).filter(
      p => WAITING_PHASES.includes(p) || ACTIVE_PHASES.includes(p),
    );
    const rows = await this.db<ReleaseRow>('fleet_releases')
      .whereIn('phase', phases)
      .orderBy('created_at')
      .orderBy('id')
      .limit(options.limit ?? 500);
    return rows.map(toRelease);
  }

  async updateRelease(
    id: string,
    expectedVersion: number,
    change: ReleaseChange,
    events: NewEvent[] = [],
  ): Promise<boolean> {
    return this.db.transaction(async tx => {
      const changed = await tx<ReleaseRow>('fleet_releases')
        .where({ id, version: expectedVersion })
        .update({
          version: expectedVersion + 1,
          updated_at: new Date(),
          ...(change.phase !== undefined ? { phase: change.phase } : {}),
          ...(change.gate ? { gate: JSON.stringify(change.gate) } : {}),
          ...(change.progress
            ? { progress: JSON.stringify(change.progress) }
            : {}),
          ...(change.targets
            ? { targets: JSON.stringify(change.targets) }
            : {}),
          ...(change.skipped
            ? { skipped: JSON.stringify(change.skipped) }
            : {}),
        });
      if (changed !== 1) return false;
      if (events.length) {
        await this.log.write(tx, events, new Date());
      }
      return true;
    });
  }

  async countReleasesByPhase(): Promise<Record<string, number>> {
    const rows: Array<{ phase: string | null; n: number | string }> =
      await this.db<ReleaseRow>('fleet_releases')
        .select('phase')
        .count({ n: '*' })
        .groupBy('phase');
    const counts: Record<string, number> = {};
    for (const row of rows) {
      const phase = row.phase ?? 'IMMEDIATE';
      counts[phase] = (counts[phase] ?? 0) + Number(row.n);
    }
    return counts;
  }

  async updateProgress(
    id: string,
    expectedVersion: number,
    progress: ReleaseProgress,
    extra: { targets?: ReleaseRecord['targets']; events?: NewEvent[] } = {},
  ): Promise<boolean> {
    return this.db.transaction(async tx => {
      const changed = await tx<ReleaseRow>('fleet_releases')
        .where({ id, version: expectedVersion })
        .update({
          progress: JSON.stringify(progress),
          phase: progress.phase,
          version: expectedVersion + 1,
          updated_at: new Date(),
          ...(extra.targets ? { targets: JSON.stringify(extra.targets) } : {}),
        });
      if (changed !== 1) return false;
      if (extra.events?.length) {
        await this.log.write(tx, extra.events, new Date());
      }
      return true;
    });
  }
}
