/*
 * Where a V8 CPU profile (a .cpuprofile, e.g. from `bash bench/run.sh --only latency
 * --latency-profile <dir>`) spent the main thread's time: self time per function, and total time
 * (itself and what it called) per function, largest first, in ms and % of the profiled time. The
 * numbers Chrome DevTools' "Bottom-Up" and "Top-Down" views show.
 *
 *   node -r @backstage/cli/config/nodeTransform.cjs bench/profileSummary.ts <file> [--top 40] [--per <n>]
 *
 * `--per n` also prints each figure divided by n (e.g. the requests profiled), in µs.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: {
    functionName: string;
    url: string;
    lineNumber: number;
  };
  children?: number[];
}

const args = process.argv.slice(2);
const option = (name: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : undefined;
};
const top = option('--top') ?? 40;
const per = option('--per');
const file = args.find(
  (a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'),
);
if (!file) {
  process.stderr.write(
    'usage: profileSummary.ts <file.cpuprofile> [--top 40] [--per <n>]\n',
  );
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
};

const byId = new Map(profile.nodes.map(n => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes)
  for (const c of n.children ?? []) parent.set(c, n.id);

/** Microseconds of samples landing in each node itself. */
const selfUs = new Map<number, number>();
for (let i = 0; i < profile.samples.length; i += 1) {
  const next = profile.timeDeltas[i + 1] ?? 0;
  selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + next);
}

const shortUrl = (url: string) =>
  url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '~/')
    .replace(/^.*\/(plugins|packages)\//, '$1/');
const labelOf = (n: ProfileNode) => {
  const f = n.callFrame;
  const name = f.functionName || '(anonymous)';
  return f.url ? `${name} ${shortUrl(f.url)}:${f.lineNumber + 1}` : name;
};

const self = new Map<string, number>();
const total = new Map<string, number>();
let all = 0;
for (const [id, us] of selfUs) {
  all += us;
  const node = byId.get(id)!;
  const label = labelOf(node);
  self.set(label, (self.get(label) ?? 0) + us);
  // Counted once per function on the stack, however often it recurses.
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const l = labelOf(byId.get(at)!);
    if (seen.has(l)) continue;
    seen.add(l);
    total.set(l, (total.get(l) ?? 0) + us);
  }
}

const idle = self.get('(idle)') ?? 0;
const busy = all - idle;
const fmt = (us: number) =>
  `${(us / 1000).toFixed(1).padStart(9)} ms ${((100 * us) / busy)
    .toFixed(1)
    .padStart(5)} %${per ? ` ${(us / per).toFixed(1).padStart(8)} µs` : ''}`;
process.stdout.write(
  `${file}: ${(all / 1e6).toFixed(2)} s profiled, ${(busy / 1e6).toFixed(
    2,
  )} s busy (idle ${(idle / 1e6).toFixed(2)} s); % of busy time${
    per ? `; µs per ${per}th` : ''
  }\n`,
);
const print = (title: string, map: Map<string, number>) => {
  process.stdout.write(`\n${title}\n`);
  for (const [label, us] of [...map]
    .filter(([l]) => l !== '(idle)' && l !== '(root)')
    .sort((a, b) => b[1] - a[1])
    .slice(0, top))
    process.stdout.write(`${fmt(us)}  ${label}\n`);
};
print('self time', self);
print('total time (self and callees)', total);
