/*
 * Parent side of simChild.ts: starts the simulator in a child process and forwards calls to it.
 */
import type { DriftChange, Fault, WatchOptions } from '@cnp/kube-simulator';
import { fork, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { onCleanup } from '../cleanup';
import { harnessScript } from './scripts';

const NODE_TRANSFORM = require.resolve(
  '@backstage/cli/config/nodeTransform.cjs',
);

/** Forks a TypeScript file of this repo with the Backstage CLI's node transform. */
export function forkTs(
  file: string,
  args: string[] = [],
  env: NodeJS.ProcessEnv = {},
  options: { logFile?: string; execArgv?: string[] } = {},
): ChildProcess {
  const out = options.logFile ? openSync(options.logFile, 'a') : 'inherit';
  const child = fork(file, args, {
    execArgv: ['-r', NODE_TRANSFORM, ...(options.execArgv ?? [])],
    env: { ...process.env, ...env },
    stdio: ['ignore', out, out, 'ipc'],
  });
  if (typeof out === 'number') closeSync(out);
  onCleanup(
    () =>
      new Promise<void>(resolve => {
        if (child.exitCode !== null || child.signalCode !== null) {
          resolve();
          return;
        }
        const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(force);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  );
  return child;
}

/** Request/answer over IPC with a time bound. */
export function rpc(child: ChildProcess, timeoutMs = 120_000) {
  let next = 1;
  const waiting = new Map<
    number,
    { resolve: (v: any) => void; reject: (e: Error) => void }
  >();
  child.on('message', (message: any) => {
    const entry = waiting.get(message?.id);
    if (!entry) return;
    waiting.delete(message.id);
    if (message.error) entry.reject(new Error(message.error));
    else entry.resolve(message.result);
  });
  child.on('exit', code => {
    for (const entry of waiting.values())
      entry.reject(new Error(`child exited (${code})`));
    waiting.clear();
  });
  return <T>(request: Record<string, unknown>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(
          new Error(
            `no answer to ${String(request.op)} within ${timeoutMs} ms`,
          ),
        );
      }, timeoutMs);
      waiting.set(id, {
        resolve: v => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: e => {
          clearTimeout(timer);
          reject(e);
        },
      });
      child.send({ id, ...request });
    });
}

export interface SimProcess {
  pid: number;
  url: string;
  kubeconfigDir: string;
  names: string[];
  startMs: number;
  rssMiB: number;
  setFault(names: string[], fault: Fault): Promise<void>;
  requestCounts(names?: string[]): Promise<Record<string, number>>;
  /** Changes objects behind Fleet's back (`KubeSimulator.drift`), each on its cluster. */
  drift(changes: Array<{ cluster: string } & DriftChange>): Promise<void>;
  /** Watches open on these clusters (all by default), summed. */
  openWatches(names?: string[]): Promise<number>;
  /** CPU time the simulator process used so far (process.cpuUsage(), microseconds). */
  cpuUsage(): Promise<NodeJS.CpuUsage>;
  stop(): Promise<void>;
}

export async function startSimProcess(options: {
  clusters: number | string[];
  readyDelayMs?: number;
  outDir?: string;
  /** Default: any free port. */
  port?: number;
  /** The simulator's watch settings (bookmarks, timeouts, controller ticks). */
  watch?: WatchOptions;
}): Promise<SimProcess> {
  const child = forkTs(harnessScript('simChild.ts'));
  const call = rpc(child);
  const started = await call<{
    url: string;
    kubeconfigDir: string;
    names: string[];
    startMs: number;
    rssMiB: number;
  }>({
    op: 'start',
    ...options,
  });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await call({ op: 'stop' }).catch(() => undefined);
    child.kill('SIGTERM');
  };
  onCleanup(stop);
  return {
    pid: child.pid!,
    ...started,
    setFault: async (names, fault) => {
      await call({ op: 'setFault', names, fault });
    },
    requestCounts: names => call({ op: 'requestCounts', names }),
    drift: async changes => {
      await call({ op: 'drift', changes });
    },
    openWatches: names => call({ op: 'openWatches', names }),
    cpuUsage: () => call({ op: 'cpu' }),
    stop,
  };
}
