/** Polls `fn` every `everyMs` (250 ms) until it answers a value (not undefined; a throw counts as none). */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs: number,
  everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await fn().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise(r => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}`);
}
