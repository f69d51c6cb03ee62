import type { LoggerService } from '@backstage/backend-plugin-api';
import { asError } from '../util/errors';
import type { ObjectChange } from './ClusterWatches';

export interface DriftChecksOptions {
  /** Checks the deployments the changed objects belong to. */
  check: (changes: ObjectChange[]) => Promise<unknown>;
  logger: LoggerService;
  /** How long changes are gathered before one check runs for all of them (default 200 ms). */
  debounceMs?: number;
}

/**
 * Turns object changes into drift checks: changes that come together (a rollout touches a
 * Deployment many times, a kubectl apply several objects) are gathered for `debounceMs` and
 * checked once, one batch at a time; changes that come in while a batch runs make the next one.
 */
export class DriftChecks {
  private readonly pending = new Map<string, ObjectChange>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  private constructor(private readonly options: DriftChecksOptions) {}

  static create(options: DriftChecksOptions): DriftChecks {
    return new DriftChecks(options);
  }

  changed(change: ObjectChange): void {
    if (this.stopped) return;
    this.pending.set(
      `${change.cluster}\u0000${change.namespace}\u0000${change.name}`,
      change,
    );
    this.schedule();
  }

  /** Resolves once no change is waiting and no check runs (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.timer || this.running) {
      await (this.running ??
        new Promise(resolve => setTimeout(resolve, 20).unref?.()));
    }
  }

  /** Takes no more changes; resolves once the check under way, if any, has ended (shutdown). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending.clear();
    await this.running;
  }

  private schedule() {
    if (this.timer || this.running) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.runBatch().finally(() => {
        this.running = undefined;
        if (this.pending.size > 0 && !this.stopped) this.schedule();
      });
    }, this.options.debounceMs ?? 200);
    this.timer.unref?.();
  }

  private async runBatch(): Promise<void> {
    const batch = [...this.pending.values()];
    this.pending.clear();
    try {
      await this.options.check(batch);
    } catch (error) {
      this.options.logger.warn(
        `Drift check of ${batch.length} changed object(s) failed`,
        asError(error),
      );
    }
  }
}
