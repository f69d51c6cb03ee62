/*
 * Parent side of backendChild.ts: a Backstage backend with the Fleet plugin in a process of its
 * own, on 127.0.0.1, authenticated callers via a static token.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { harnessScript } from './scripts';
import { forkTs } from './simProcess';

/** How a backend process ended. */
export interface BackendExit {
  /** The exit code, when it exited by itself (0: it stopped cleanly). */
  code: number | null;
  /** The signal that ended it, when one did (SIGKILL when `forced`). */
  signal: NodeJS.Signals | null;
  /** True when it did not exit within the bound and was killed with SIGKILL. */
  forced: boolean;
  /** From the stop request to the exit. */
  ms: number;
}

export interface BackendProcess {
  pid: number;
  port: number;
  startMs: number;
  /** http://127.0.0.1:PORT/api/fleet */
  base: string;
  /**
   * Graceful stop: SIGTERM, on which Backstage stops the backend (backend.stop()) and exits 0, or
   * 1 when stopping failed; SIGKILL after 20 s. Says how the process ended.
   */
  stop(): Promise<BackendExit>;
  /** Kills the process at once (SIGKILL), like a crash or an OOM kill. Says how it ended. */
  kill(): Promise<BackendExit>;
  exited(): boolean;
  /** process.memoryUsage() of the backend after a full GC, in bytes. */
  liveMemory(): Promise<NodeJS.MemoryUsage | undefined>;
  /** Writes a V8 heap snapshot of the child to `file` (a .heapsnapshot); false when it could not. */
  heapSnapshot(file: string): Promise<boolean>;
  /**
   * What Fleet's cluster agents hold (secure contexts, agents, sockets) in the backend, when its
   * code can tell (older code cannot, nor a backend without Fleet).
   */
  poolStats(): Promise<Record<string, number> | undefined>;
  /** Starts a V8 CPU profile of the backend; false when its code cannot (older code). */
  profileStart(): Promise<boolean>;
  /** Stops the profile started by `profileStart` and writes it (`.cpuprofile` JSON) to `file`. */
  profileStop(file: string): Promise<boolean>;
}

/**
 * Env: FLEET_BENCH_DB (connection string), FLEET_BENCH_KUBECONFIG_DIR, FLEET_BENCH_TOKEN,
 * FLEET_BENCH_HEALTH (JSON merged into fleet.health), FLEET_BENCH_FLEET (JSON merged into fleet),
 * FLEET_BENCH_NO_FLEET, LOG_LEVEL; FLEET_BENCH_GUEST_TOKEN (a token for a caller allowed only to
 * deploy, not to administer clusters); FLEET_BENCH_CATALOG_FILE (the catalog backend reading that
 * file); FLEET_BENCH_CONFIG (JSON merged into the config at the top level) and
 * FLEET_BENCH_FEATURES (JSON list of module specifiers of more backend features to add).
 */
export async function startBackendProcess(
  env: NodeJS.ProcessEnv,
  options: {
    logFile?: string;
    startTimeoutMs?: number;
    /**
     * The checkout whose backend runs (its own backendChild.ts, plugins and node_modules), to
     * measure older code side by side; this one by default.
     */
    checkout?: string;
  } = {},
): Promise<BackendProcess> {
  const script = options.checkout
    ? path.join(
        options.checkout,
        'packages/fleet-harness/src/processes/backendChild.ts',
      )
    : harnessScript('backendChild.ts');
  const child = forkTs(script, [], env, {
    logFile: options.logFile,
    // FLEET_BENCH_CPU_PROF=<dir>: a V8 CPU profile of the backend, written when it stops.
    // FLEET_BENCH_NODE_ARGS: more of Node's flags, space-separated (e.g. --trace-gc).
    execArgv: [
      '--expose-gc',
      ...(process.env.FLEET_BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
      ...(process.env.FLEET_BENCH_CPU_PROF
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.FLEET_BENCH_CPU_PROF}`]
        : []),
    ],
  });
  const ready = await new Promise<{ port: number; startMs: number }>(
    (resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error('backend did not start in time')),
        options.startTimeoutMs ?? 180_000,
      );
      child.on('message', (m: any) => {
        if (m?.type === 'ready') {
          clearTimeout(timer);
          resolve(m);
        }
      });
      child.once('exit', code => {
        clearTimeout(timer);
        reject(
          new Error(
            `backend exited with ${code} before it was ready${logTail(
              options.logFile,
            )}`,
          ),
        );
      });
    },
  );
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  /** Waits for the exit, at most `ms`, then SIGKILLs and waits for that exit. */
  const waitExit = (ms: number) =>
    new Promise<BackendExit>(resolve => {
      const started = Date.now();
      let forced = false;
      const done = () =>
        resolve({
          code: child.exitCode,
          signal: child.signalCode,
          forced,
          ms: Date.now() - started,
        });
      if (exited()) {
        done();
        return;
      }
      const force = setTimeout(() => {
        forced = true;
        child.kill('SIGKILL');
      }, ms);
      child.once('exit', () => {
        clearTimeout(force);
        done();
      });
    });
  /** One IPC question to the child: its answer's `field`, or undefined after `timeoutMs`. */
  const ask = <T>(
    op: string,
    field: string,
    timeoutMs = 10_000,
    extra: Record<string, unknown> = {},
  ) =>
    new Promise<T | undefined>(resolve => {
      if (!child.connected) {
        resolve(undefined);
        return;
      }
      const id = Math.random();
      const waiting: { timer?: NodeJS.Timeout } = {};
      const onMessage = (m: any) => {
        if (m?.type === op && m.id === id) {
          clearTimeout(waiting.timer);
          child.off('message', onMessage);
          resolve(m[field]);
        }
      };
      waiting.timer = setTimeout(() => {
        child.off('message', onMessage);
        resolve(undefined);
      }, timeoutMs);
      child.on('message', onMessage);
      child.send({ ...extra, op, id });
    });
  return {
    pid: child.pid!,
    port: ready.port,
    startMs: ready.startMs,
    base: `http://127.0.0.1:${ready.port}/api/fleet`,
    stop: async () => {
      if (!exited()) child.kill('SIGTERM');
      return waitExit(20_000);
    },
    kill: async () => {
      if (!exited()) child.kill('SIGKILL');
      return waitExit(5_000);
    },
    exited,
    liveMemory: () => ask<NodeJS.MemoryUsage>('memory', 'usage'),
    // Older code's child does not answer it.
    poolStats: () => ask<Record<string, number>>('pool', 'stats', 3_000),
    profileStart: async () =>
      (await ask<boolean>('profileStart', 'done', 10_000)) === true,
    heapSnapshot: async (file: string) =>
      (await ask<boolean>('heapSnapshot', 'done', 300_000, { file })) === true,
    profileStop: async (file: string) =>
      (await ask<boolean>('profileStop', 'done', 60_000, { file })) === true,
  };
}

/** The last lines of a backend's log, to say why it exited (empty without a log). */
function logTail(logFile: string | undefined, lines = 15): string {
  if (!logFile || !existsSync(logFile)) return '';
  const tail = readFileSync(logFile, 'utf8')
    .trimEnd()
    .split('\n')
    .slice(-lines);
  return tail.length ? `; its log ends:\n${tail.join('\n')}` : '';
}
