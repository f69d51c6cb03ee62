/** Signals that arrive together (a cascade, a release's steps) make one fetch. */
export const SIGNAL_COALESCE_MS = 150;

const hidden = () =>
  typeof document !== 'undefined' && document.visibilityState === 'hidden';

/**
 * When `usePolling` fetches: now, every `intervalMs` (0: never on a timer), soon after a signal
 * (a burst of signals makes one fetch), again once a running fetch ends if a signal came during
 * it (its answer may predate the change), and, after a failure, after a doubled wait up to
 * `maxIntervalMs` (a failure is retried even without polling, so that it does not stick). A
 * hidden tab fetches nothing; it catches up when shown again. Free of React: the hook gives it
 * the fetch and what to do with an answer or a failure.
 */
export class PollSchedule<T> {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private delay: number;
  private running = false;
  /** Asked again while a fetch ran. */
  private again = false;
  private missedWhileHidden = false;
  /** A signal's fetch is set: the next signals of the burst join it. */
  private signalPending = false;
  private stopped = false;

  constructor(
    private readonly options: {
      fetch: () => Promise<T>;
      onValue: (value: T) => void;
      onError: (error: Error) => void;
      intervalMs: number;
      maxIntervalMs: number;
    },
  ) {
    this.delay = options.intervalMs;
  }

  /** Fetches now, or once the tab is shown. */
  start(): void {
    if (hidden()) this.missedWhileHidden = true;
    else this.run();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** A signal said the data changed. */
  changed(): void {
    if (this.deferred()) return;
    if (this.signalPending) return;
    this.signalPending = true;
    this.schedule(SIGNAL_COALESCE_MS);
  }

  /** The tab's visibility changed: catch up on what was missed while hidden. */
  visibilityChanged(): void {
    if (!hidden() && this.missedWhileHidden) {
      this.missedWhileHidden = false;
      this.schedule(0);
      this.run();
    }
  }

  /** Not now: hidden (fetch when shown again) or running (fetch again once it is done). */
  private deferred(): boolean {
    if (hidden()) this.missedWhileHidden = true;
    else if (this.running) this.again = true;
    else return false;
    return true;
  }

  private readonly run = async () => {
    const { intervalMs, maxIntervalMs } = this.options;
    this.timer = undefined;
    this.signalPending = false;
    if (this.deferred()) return;
    this.running = true;
    try {
      const value = await this.options.fetch();
      if (this.stopped) return;
      this.options.onValue(value);
      this.delay = intervalMs;
    } catch (error) {
      if (this.stopped) return;
      this.options.onError(error as Error);
      this.delay = Math.min(Math.max(this.delay, 1_000) * 2, maxIntervalMs);
      if (intervalMs <= 0) {
        this.schedule(this.delay);
        return;
      }
    } finally {
      this.running = false;
    }
    if (this.again) {
      this.again = false;
      this.schedule(SIGNAL_COALESCE_MS);
    } else {
      this.schedule(this.delay);
    }
  };

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.stopped) return;
    if (ms > 0) this.timer = setTimeout(this.run, ms);
  }
}
