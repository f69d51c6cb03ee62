/*
 * What a V8 heap snapshot (a .heapsnapshot, e.g. from `bash bench/run.sh --only memory
 * --memory-heap-snapshots <dir>`) holds, summed by what V8 calls each object (its constructor,
 * or the node type for strings, code, arrays), largest first: the numbers Chrome DevTools'
 * "Summary" view shows as shallow sizes. With a second snapshot, the difference per name.
 *
 *   node -r @backstage/cli/config/nodeTransform.cjs bench/heapSummary.ts <file> [<control file>] [--top 30]
 *
 * Each file is read as one string: a snapshot over ~512 MiB (V8's longest string) cannot be
 * read this way; those of a 1,000-cluster backend are ~150 MiB.
 */
import { readFileSync } from 'node:fs';

interface Totals {
  total: number;
  nodes: number;
  byName: Map<string, { size: number; count: number }>;
}

function summarize(file: string): Totals {
  const snapshot = JSON.parse(readFileSync(file, 'utf8'));
  const meta = snapshot.snapshot.meta;
  const fields: string[] = meta.node_fields;
  const types: string[] = meta.node_types[0];
  const stride = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const nodes: number[] = snapshot.nodes;
  const strings: string[] = snapshot.strings;
  const byName = new Map<string, { size: number; count: number }>();
  let total = 0;
  for (let i = 0; i < nodes.length; i += stride) {
    const type = types[nodes[i + typeAt]];
    const size = nodes[i + sizeAt];
    total += size;
    // Objects by constructor; strings, arrays, code and the rest by type (their names are
    // their contents or internal labels).
    const key =
      type === 'object' || type === 'closure' || type === 'native'
        ? `${type} ${strings[nodes[i + nameAt]]}`
        : type;
    const entry = byName.get(key) ?? { size: 0, count: 0 };
    entry.size += size;
    entry.count += 1;
    byName.set(key, entry);
  }
  return { total, nodes: nodes.length / stride, byName };
}

const MiB = 2 ** 20;
const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args[topAt + 1]) : 30;
const files = args.filter(
  (a, i) => !a.startsWith('--') && (topAt < 0 || i !== topAt + 1),
);
if (files.length === 0) {
  process.stderr.write(
    'usage: heapSummary.ts <file.heapsnapshot> [<control.heapsnapshot>] [--top 30]\n',
  );
  process.exit(2);
}
const [main, control] = files.map(summarize);
const fmt = (n: number) => (n / MiB).toFixed(2).padStart(8);
process.stdout.write(
  `${files[0]}: ${fmt(main.total)} MiB in ${main.nodes} objects${
    control
      ? `; ${files[1]}: ${fmt(control.total)} MiB in ${control.nodes} objects`
      : ''
  }\n`,
);
// Names in either file: one the control alone holds shows as a negative difference.
const names = new Set([
  ...main.byName.keys(),
  ...(control?.byName.keys() ?? []),
]);
const rows = [...names].map(name => {
  const { size, count } = main.byName.get(name) ?? { size: 0, count: 0 };
  const other = control?.byName.get(name);
  return {
    name,
    size,
    count,
    delta: size - (other?.size ?? 0),
    deltaCount: count - (other?.count ?? 0),
  };
});
rows.sort((a, b) =>
  control ? Math.abs(b.delta) - Math.abs(a.delta) : b.size - a.size,
);
process.stdout.write(
  control
    ? '     MiB  (+/- MiB)    objects (+/-)  name\n'
    : '     MiB     objects  name\n',
);
for (const r of rows.slice(0, top)) {
  process.stdout.write(
    control
      ? `${fmt(r.size)} (${fmt(r.delta)}) ${String(r.count).padStart(
          10,
        )} (${String(r.deltaCount).padStart(8)})  ${r.name}\n`
      : `${fmt(r.size)} ${String(r.count).padStart(10)}  ${r.name}\n`,
  );
}
