import { PollSchedule, SIGNAL_COALESCE_MS } from './pollSchedule';

/*
 * The schedule on Jest's fake timers: signals spread over the coalescing window make one fetch,
 * whatever the machine's speed.
 */

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

function schedule() {
  let calls = 0;
  const fetch = jest.fn(async () => ++calls);
  const s = new PollSchedule<number>({
    fetch,
    onValue: () => undefined,
    onError: () => undefined,
    intervalMs: 0,
    maxIntervalMs: 60_000,
  });
  return { s, fetch };
}

describe('PollSchedule', () => {
  it('makes one fetch of signals spread over the coalescing window, and another for a signal after it', async () => {
    const { s, fetch } = schedule();
    s.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(fetch).toHaveBeenCalledTimes(1);

    // Six signals, 25 ms apart: all within the window the first one opened.
    for (let i = 0; i < 6; i++) {
      s.changed();
      await jest.advanceTimersByTimeAsync(25);
    }
    expect(5 * 25).toBeLessThan(SIGNAL_COALESCE_MS);
    await jest.advanceTimersByTimeAsync(SIGNAL_COALESCE_MS);
    expect(fetch).toHaveBeenCalledTimes(2);

    // Later, one more signal: one more fetch, a window after it.
    await jest.advanceTimersByTimeAsync(1_000);
    s.changed();
    await jest.advanceTimersByTimeAsync(SIGNAL_COALESCE_MS - 1);
    expect(fetch).toHaveBeenCalledTimes(2);
    await jest.advanceTimersByTimeAsync(1);
    expect(fetch).toHaveBeenCalledTimes(3);
    s.stop();
  });
});
