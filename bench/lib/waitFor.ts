import type { Knex } from 'knex';

/**
 * Polls `fn` every `everyMs` (250 ms) until it answers a value (not undefined or false; a throw
 * counts as none).
 */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs: number,
  everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await fn().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    await new Promise(r => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * The summary of the backend's first health cycle (stored in `fleet_state` as `lastCycle`) that
 * started at or after `since` (ms since the epoch): the cycle the scheduler runs at startup.
 */
export async function waitForStartupCycle(
  knex: Knex,
  since: number,
  timeoutMs: number,
): Promise<any> {
  return waitFor(
    'the startup health cycle',
    async () => {
      const row = await knex('fleet_state').where({ key: 'lastCycle' }).first();
      const cycle = row ? JSON.parse(row.value) : undefined;
      return cycle && Date.parse(cycle.startedAt) >= since ? cycle : undefined;
    },
    timeoutMs,
  );
}
