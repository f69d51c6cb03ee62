import { LoggerService, SchedulerService } from '@backstage/backend-plugin-api';
import { ForwardedError } from '@backstage/errors';
import type { FleetConfig } from '../config/FleetConfig';
import type { EventStore } from '../database/types';

export const EVENT_RETENTION_TASK_ID = 'fleet-events-retention';
/** Events deleted per statement: each one stays short, so it never holds the table for long. */
const BATCH_SIZE = 1000;

export interface EventRetentionOptions {
  store: Pick<EventStore, 'deleteEventsBefore'>;
  logger: LoggerService;
  scheduler?: SchedulerService;
  events: FleetConfig['events'];
  /** Events deleted per statement (default 1000). */
  batchSize?: number;
}

/**
 * Keeps the events table from growing forever: once a day, removes the events older than
 * `fleet.events.retention`, a bounded batch at a time.
 */
export class EventRetention {
  private constructor(private readonly options: EventRetentionOptions) {}

  static create(options: EventRetentionOptions): EventRetention {
    return new EventRetention(options);
  }

  /** Schedules the clean-up: once a day, on one replica, first a few minutes after startup. */
  async start(): Promise<void> {
    const { scheduler } = this.options;
    if (!scheduler) throw new Error('EventRetention.start needs a scheduler');
    await scheduler.scheduleTask({
      id: EVENT_RETENTION_TASK_ID,
      scope: 'global',
      frequency: { hours: 24 },
      timeout: { hours: 1 },
      initialDelay: { minutes: 5 },
      fn: async signal => {
        try {
          await this.runOnce(signal);
        } catch (error) {
          throw new ForwardedError('Fleet event retention failed', error);
        }
      },
    });
  }

  /**
   * Removes the events older than the retention, batch after batch until none is left or
   * `signal` aborts (the task timed out or the backend stops); returns how many it removed.
   */
  async runOnce(signal?: AbortSignal): Promise<number> {
    const { store, logger, events } = this.options;
    const batchSize = this.options.batchSize ?? BATCH_SIZE;
    const cutoff = new Date(Date.now() - events.retentionMs);
    let removed = 0;
    for (;;) {
      const count = await store.deleteEventsBefore(cutoff, batchSize);
      removed += count;
      if (count < batchSize) break;
      if (signal?.aborted) {
        logger.warn(
          'Event retention stopped before it finished; the next run removes the rest',
        );
        break;
      }
    }
    logger.info(
      `Removed ${removed} Fleet event(s) created before ${cutoff.toISOString()}`,
      { removed, cutoff: cutoff.toISOString() },
    );
    return removed;
  }
}
