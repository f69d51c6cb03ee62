/*
 * Beyond the issue's list: finding F2 (docs/benchmarks.md), fixed. Discovery used to follow a
 * symlink and read the kubeconfig with client-node's synchronous loadFromFile whatever the
 * target: a symlink to a FIFO blocked the whole backend's event loop, and one to /dev/zero read
 * without end. It now reads regular files of bounded size only. Each case runs in a throw-away
 * process that is killed when it blocks or grows past 1 GiB, so a regression cannot hang the suite.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import {
  DISCOVER_CHILD_SCRIPT,
  forkTs,
  processMemory,
} from '@cnp/fleet-harness';
import type { Scenario } from '../lib';

/**
 * Watches a discovery child: `limitMs` counts from the child's 'started' message (its modules are
 * loaded and discovery begins), not from the fork, so a slow start on a loaded machine is not
 * mistaken for a blocked event loop. Starting gets its own, generous, limit.
 */
async function watch(child: ChildProcess, limitMs: number, maxRssMiB: number) {
  const startLimitMs = 120_000;
  let ticks = 0;
  let done: any;
  let startedAt: number | undefined;
  let peak = 0;
  child.on('message', (m: any) => {
    if (m?.type === 'started') startedAt = Date.now();
    if (m?.type === 'tick') ticks += 1;
    if (m?.type === 'done' || m?.type === 'error') done = m;
  });
  const forkedAt = Date.now();
  let killedFor: string | undefined;
  const timedOut = () =>
    startedAt === undefined
      ? Date.now() - forkedAt > startLimitMs
      : Date.now() - startedAt > limitMs;
  while (!done && !timedOut() && child.exitCode === null) {
    await new Promise(r => setTimeout(r, 100));
    try {
      const { rssMiB } = await processMemory(child.pid!);
      // An exited child (a zombie until reaped) has a status file without VmRSS.
      if (Number.isFinite(rssMiB)) peak = Math.max(peak, rssMiB);
    } catch {
      break;
    }
    if (peak > maxRssMiB) {
      killedFor = `RSS passed ${maxRssMiB} MiB`;
      break;
    }
  }
  if (!done && child.exitCode === null) {
    killedFor ??=
      startedAt === undefined
        ? `did not start within ${startLimitMs / 1000} s`
        : `no answer within ${limitMs / 1000} s of starting`;
    child.kill('SIGKILL');
  }
  if (Number.isFinite(done?.maxRssMiB)) peak = Math.max(peak, done.maxRssMiB);
  return {
    done,
    ticks,
    peak,
    killedFor,
    ms: Date.now() - (startedAt ?? forkedAt),
  };
}

/**
 * The warning discovery gave for skipping `file`: one that names the file and says it was
 * skipped. Undefined when there is none, or when discovery did not finish.
 */
function skipWarning(done: any, file: string): string | undefined {
  const warnings: unknown[] = done?.type === 'done' ? done.warnings ?? [] : [];
  return warnings.find(
    (w): w is string =>
      typeof w === 'string' && w.includes(file) && /\bskipp/i.test(w),
  );
}

export const specialFiles: Scenario = {
  id: 'special-files',
  title: 'Special files in the kubeconfig directory',
  tried:
    'a symlink to a FIFO, and a symlink to /dev/zero, in the discovery directory (each discovered in a throw-away process)',
  timeoutMs: 60_000,
  async run({ checks, tmp, log }) {
    const child = (dir: string) => forkTs(DISCOVER_CHILD_SCRIPT, [dir]);

    const fifoDir = path.join(tmp, 'fifo');
    mkdirSync(fifoDir);
    execFileSync('mkfifo', [path.join(tmp, 'a-fifo')]);
    symlinkSync(path.join(tmp, 'a-fifo'), path.join(fifoDir, 'fifo.yaml'));
    const fifo = await watch(child(fifoDir), 5_000, 1024);
    log(
      `FIFO: ${
        fifo.done
          ? `finished in ${fifo.ms} ms: ${JSON.stringify(fifo.done.warnings)}`
          : `killed (${fifo.killedFor}); event-loop ticks meanwhile: ${fifo.ticks}`
      }`,
    );
    // A blocked event loop would never answer 'done' (the child is killed at 5 s instead).
    const fifoWarning = skipWarning(fifo.done, 'fifo.yaml');
    checks.ok(
      fifo.done?.type === 'done' &&
        fifo.done.clusters === 0 &&
        !!fifoWarning?.includes('not a regular file'),
      'a symlink to a FIFO is skipped with a warning, without blocking the event loop',
      fifo.killedFor ?? fifo.done,
    );

    const zeroDir = path.join(tmp, 'zero');
    mkdirSync(zeroDir);
    symlinkSync('/dev/zero', path.join(zeroDir, 'zero.yaml'));
    const zero = await watch(child(zeroDir), 15_000, 1024);
    log(
      `/dev/zero: ${
        zero.done
          ? `finished in ${zero.ms} ms, peak RSS ${zero.peak.toFixed(
              0,
            )} MiB (the FIFO child's: ${fifo.peak.toFixed(
              0,
            )} MiB): ${JSON.stringify(zero.done.warnings)}`
          : `killed (${zero.killedFor}) after ${
              zero.ms
            } ms, RSS ${zero.peak.toFixed(0)} MiB`
      }`,
    );
    // The bound is relative to the FIFO child's peak: the same discovery process reading
    // nothing (its RSS is the runtime and the loaded modules, which grow with the code). Reading
    // /dev/zero through the old path grew without end; 64 MiB over that baseline is far below it.
    const baseline = fifo.done?.type === 'done' ? fifo.peak : 256;
    const zeroBound = baseline + 64;
    checks.ok(
      zero.done?.type === 'done' &&
        zero.done.clusters === 0 &&
        !!skipWarning(zero.done, 'zero.yaml') &&
        zero.peak < zeroBound,
      'a symlink to /dev/zero is skipped with a warning, reading a bounded amount',
      zero.killedFor ?? {
        peakMiB: Math.round(zero.peak),
        boundMiB: Math.round(zeroBound),
        clusters: zero.done?.clusters,
        warnings: zero.done?.warnings,
        message: zero.done?.message,
      },
    );
  },
};
