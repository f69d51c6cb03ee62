import pLimit from 'p-limit';

const SKIPPED = Symbol('skipped');

/**
 * Runs `task` on each item, at most `concurrency` at a time. After a failure no task starts
 * any more; the first failure is thrown once the running ones have ended, so nothing is still
 * writing when the caller answers.
 */
export async function eachBounded<T, R>(
  items: readonly T[],
  concurrency: number,
  task: (item: T) => Promise<R>,
): Promise<R[]> {
  const limit = pLimit(concurrency);
  let first: { error: unknown } | undefined;
  const settled = await Promise.allSettled(
    items.map(item =>
      limit(async () => {
        if (first) throw SKIPPED;
        try {
          return await task(item);
        } catch (error) {
          first ??= { error };
          throw error;
        }
      }),
    ),
  );
  if (first) throw first.error;
  return settled.map(s => (s as PromiseFulfilledResult<R>).value);
}
