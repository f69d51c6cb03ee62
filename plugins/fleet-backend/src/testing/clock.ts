/**
 * Holds `Date` at a time the test sets, and only `Date`: timers, I/O and the database run as
 * ever. A window of a few seconds in the code under test (a grace period, a pause, a minimum
 * interval) is then measured on this clock, not on how fast a loaded machine runs the test.
 * Use it inside a test and call `restore` in a `finally`.
 */
export function holdDate(at: number = Date.now()): {
  /** Sets the time to `ms` (epoch milliseconds); it stays there until set again. */
  set(ms: number): void;
  /** Moves the time on by `ms`. */
  advance(ms: number): void;
  /** Puts the real clock back. */
  restore(): void;
} {
  jest.useFakeTimers({
    doNotFake: [
      'hrtime',
      'nextTick',
      'performance',
      'queueMicrotask',
      'requestAnimationFrame',
      'cancelAnimationFrame',
      'requestIdleCallback',
      'cancelIdleCallback',
      'setImmediate',
      'clearImmediate',
      'setInterval',
      'clearInterval',
      'setTimeout',
      'clearTimeout',
    ],
    now: at,
  });
  return {
    set: ms => jest.setSystemTime(ms),
    advance: ms => jest.setSystemTime(Date.now() + ms),
    restore: () => jest.useRealTimers(),
  };
}
