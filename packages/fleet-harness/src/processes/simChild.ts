/*
 * The kube simulator in a child process of its own, driven over IPC by simProcess.ts, so that at
 * fleet scale the simulated API servers get their own event loop (and CPU core) instead of
 * sharing the prober's, as remote clusters would.
 */
import {
  KubeSimulator,
  type DriftChange,
  type WatchOptions,
  type Fault,
} from '@cnp/kube-simulator';

type Request =
  | {
      id: number;
      op: 'start';
      clusters: number | string[];
      readyDelayMs?: number;
      outDir?: string;
      port?: number;
      watch?: WatchOptions;
    }
  | { id: number; op: 'setFault'; names: string[]; fault: Fault }
  | {
      id: number;
      op: 'drift';
      changes: Array<{ cluster: string } & DriftChange>;
    }
  | { id: number; op: 'openWatches'; names?: string[] }
  | { id: number; op: 'requestCounts'; names?: string[] }
  | { id: number; op: 'cpu' }
  | { id: number; op: 'stop' };

let sim: KubeSimulator | undefined;

async function handle(message: Request): Promise<unknown> {
  switch (message.op) {
    case 'start': {
      const started = performance.now();
      sim = await KubeSimulator.start({
        clusters: message.clusters,
        readyDelayMs: message.readyDelayMs,
        outDir: message.outDir,
        port: message.port,
        watch: message.watch,
      });
      return {
        url: sim.url,
        kubeconfigDir: sim.kubeconfigDir,
        names: sim.clusterNames(),
        startMs: performance.now() - started,
        rssMiB: process.memoryUsage().rss / 2 ** 20,
      };
    }
    case 'setFault':
      for (const name of message.names) sim!.setFault(name, message.fault);
      return { ok: true };
    case 'requestCounts': {
      const names = message.names ?? sim!.clusterNames();
      return Object.fromEntries(names.map(n => [n, sim!.requestCount(n)]));
    }
    case 'drift':
      for (const { cluster, ...change } of message.changes)
        sim!.drift(cluster, change);
      return { ok: true };
    case 'openWatches': {
      const names = message.names ?? sim!.clusterNames();
      return names.reduce((n, name) => n + sim!.openWatches(name), 0);
    }
    case 'cpu':
      return process.cpuUsage();
    case 'stop':
      await sim?.stop();
      sim = undefined;
      return { ok: true };
    default:
      return undefined;
  }
}

process.on('message', (message: Request) => {
  handle(message).then(
    result => process.send!({ id: message.id, result }),
    error =>
      process.send!({
        id: message.id,
        error: String((error as Error)?.message ?? error),
      }),
  );
});
process.on('disconnect', () => {
  // The parent went away: stop serving.
  Promise.resolve(sim?.stop()).finally(() => process.exit(0));
});
