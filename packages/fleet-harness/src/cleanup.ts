/*
 * Cleanup that runs whatever happens: at the normal end (runCleanup), on Ctrl-C / SIGTERM, and
 * when an overall time bound is exceeded. Child processes and temporary databases register here.
 */
/** What a task returns (a stopped process's exit, say) is not used. */
const tasks: Array<() => unknown> = [];
let running: Promise<void> | undefined;

export function onCleanup(task: () => unknown): void {
  tasks.push(task);
}

export function runCleanup(): Promise<void> {
  if (!running) {
    running = (async () => {
      // Last registered first: children stop before the databases they use are dropped.
      for (const task of tasks.reverse()) {
        try {
          await task();
        } catch (error) {
          process.stderr.write(`cleanup: ${(error as Error).message}\n`);
        }
      }
    })();
  }
  return running;
}

/** Runs `fn`, then the cleanup tasks registered while it ran (last first), whatever happens. */
export async function runScoped<T>(fn: () => Promise<T>): Promise<T> {
  const mark = tasks.length;
  try {
    return await fn();
  } finally {
    const scoped = tasks.splice(mark).reverse();
    for (const task of scoped) {
      try {
        await task();
      } catch (error) {
        process.stderr.write(`cleanup: ${(error as Error).message}\n`);
      }
    }
  }
}

/** Runs `main` with cleanup on exit, on signals, and after `maxMs` (exit code 3 then). */
export function runMain(main: () => Promise<number>, maxMs: number): void {
  const bail = (code: number, why: string) => {
    process.stderr.write(`${why}: cleaning up\n`);
    const force = setTimeout(() => process.exit(code), 30_000);
    force.unref();
    runCleanup().finally(() => process.exit(code));
  };
  process.once('SIGINT', () => bail(130, 'interrupted'));
  process.once('SIGTERM', () => bail(143, 'terminated'));
  const limit = setTimeout(
    () => bail(3, `time bound of ${Math.round(maxMs / 1000)} s exceeded`),
    maxMs,
  );
  limit.unref();
  main().then(
    async code => {
      await runCleanup();
      clearTimeout(limit);
      process.exit(code);
    },
    async error => {
      process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
      await runCleanup();
      process.exit(1);
    },
  );
}
