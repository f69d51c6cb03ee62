import os from 'node:os';

export function median(values: number[]): number {
  return percentile(values, 50);
}

/** Nearest-rank percentile of `values` (p in 0..100). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export function ms(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (value >= 10_000) return `${(value / 1000).toFixed(1)} s`;
  if (value >= 1000) return `${(value / 1000).toFixed(2)} s`;
  return `${value.toFixed(value < 10 ? 1 : 0)} ms`;
}

export function sleep(msToWait: number): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, msToWait));
}

/** One line about the machine and its load, printed next to every figure. */
export function machineLine(): string {
  const cpus = os.cpus();
  const load = os
    .loadavg()
    .map(l => l.toFixed(2))
    .join(' ');
  return `${cpus.length} × ${cpus[0]?.model.trim() ?? 'cpu'}, ${Math.round(
    os.totalmem() / 2 ** 30,
  )} GiB RAM, ${os.type()} ${os.release()}, Node ${
    process.version
  }; load average ${load}`;
}

export function loadAverage(): string {
  return os
    .loadavg()
    .map(l => l.toFixed(2))
    .join(' ');
}

/** A plain text table with a header row. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) =>
    Math.max(h.length, ...rows.map(r => (r[i] ?? '').length)),
  );
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (c ?? '').padEnd(widths[i])).join(' | ')} |`;
  return [
    line(header),
    `| ${widths.map(w => '-'.repeat(w)).join(' | ')} |`,
    ...rows.map(line),
  ].join('\n');
}

/** Reads VmRSS and VmHWM (peak resident set) of a process from /proc, in MiB. */
export async function processMemory(
  pid: number,
): Promise<{ rssMiB: number; peakMiB: number }> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string) =>
    Number(status.match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN);
  return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
}

/** Machine-wide CPU counters from /proc/stat (all cores), to tell how busy the machine was. */
export async function machineCpu(): Promise<{ busy: number; total: number }> {
  const { readFile } = await import('node:fs/promises');
  const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0];
  const fields = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3] + (fields[4] ?? 0);
  const total = fields.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

/**
 * CPU seconds (user + system) of each of a process's threads, by thread id, with its name, from
 * /proc/<pid>/task/<tid>/stat. `threadCpuDelta` groups them: `main` is Node's main thread
 * (JavaScript, TLS, HTTP/2, the garbage collector's own share), the others are the garbage
 * collector's and compiler's helpers and libuv's thread pool (file system, DNS, zlib), by the
 * name the kernel has for them.
 */
export async function threadCpuSeconds(
  pid: number,
): Promise<Map<string, { name: string; seconds: number }>> {
  const { readFile, readdir } = await import('node:fs/promises');
  const threads = new Map<string, { name: string; seconds: number }>();
  let tids: string[] = [];
  try {
    tids = await readdir(`/proc/${pid}/task`);
  } catch {
    return threads;
  }
  for (const tid of tids) {
    try {
      const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      threads.set(tid, {
        name: tid === String(pid) ? 'main' : `other threads (${comm})`,
        seconds: (Number(fields[11]) + Number(fields[12])) / 100,
      });
    } catch {
      // the thread ended meanwhile
    }
  }
  return threads;
}

/**
 * What each group of threads used between two `threadCpuSeconds` readings: threads present in
 * both, and those started in between (from 0); one that ended in between is not counted.
 */
export function threadCpuByGroup(
  before: Map<string, { name: string; seconds: number }>,
  after: Map<string, { name: string; seconds: number }>,
): Map<string, number> {
  const groups = new Map<string, number>();
  for (const [tid, { name, seconds }] of after) {
    const used = seconds - (before.get(tid)?.seconds ?? 0);
    groups.set(name, (groups.get(name) ?? 0) + used);
  }
  return groups;
}

/** `threadCpuByGroup` as "main 1.23 s, other threads (node) 0.45 s". */
export function threadCpuDelta(
  before: Map<string, { name: string; seconds: number }>,
  after: Map<string, { name: string; seconds: number }>,
): string {
  return [...threadCpuByGroup(before, after)]
    .sort((a, b) => b[1] - a[1])
    .map(([name, s]) => `${name} ${s.toFixed(2)} s`)
    .join(', ');
}

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat (100 ticks a second). */
export async function processCpuSeconds(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): utime is field 14, stime field 15.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * The local ports of process `pid`'s established TCP connections to any of `remotePorts` on
 * loopback: its sockets (from /proc/<pid>/fd) matched with the kernel's connection table. It
 * counts any code's pooled connections, and tells which process a connection a server sees is
 * (by its client port). Undefined when the process cannot be read.
 */
export async function establishedConnections(
  pid: number,
  remotePorts: Iterable<number>,
): Promise<number[] | undefined> {
  const { readdir, readlink, readFile } = await import('node:fs/promises');
  const wanted = new Set(remotePorts);
  let fds: string[];
  try {
    fds = await readdir(`/proc/${pid}/fd`);
  } catch {
    return undefined;
  }
  const inodes = new Set<string>();
  for (const fd of fds) {
    const link = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const match = /^socket:\[(\d+)\]$/.exec(link);
    if (match) inodes.add(match[1]);
  }
  const ports: number[] = [];
  for (const kernelTable of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(kernelTable, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // State 01: ESTABLISHED.
      if (
        f.length >= 10 &&
        f[3] === '01' &&
        inodes.has(f[9]) &&
        wanted.has(parseInt(f[2].split(':')[1], 16))
      )
        ports.push(parseInt(f[1].split(':')[1], 16));
    }
  }
  return ports;
}
