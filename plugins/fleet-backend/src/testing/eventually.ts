/** The bound `eventually` waits by default: for a loaded machine, not a measure of speed. */
export const EVENTUALLY_TIMEOUT_MS = 30_000;

/**
 * Calls `fn` until it returns without throwing (an `expect` that holds, a value read), and
 * answers what it returned. After `timeoutMs` (default 30 s) it throws `fn`'s last error, so a
 * test that waits for something that never comes fails saying what was last seen. A generous
 * bound costs nothing when the thing comes early: it only turns a slow machine from a failure
 * into a pass, never a wrong result into a right one.
 */
export async function eventually<T>(
  fn: () => T | Promise<T>,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const { timeoutMs = EVENTUALLY_TIMEOUT_MS, intervalMs = 20 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (Date.now() >= deadline) {
        if (error instanceof Error) {
          error.message = `not so within ${timeoutMs} ms: ${error.message}`;
        }
        throw error;
      }
    }
    await new Promise(resolve => setTimeout(resolve, intervalMs));
  }
}
