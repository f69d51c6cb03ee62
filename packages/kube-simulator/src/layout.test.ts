import fs from 'node:fs';
import path from 'node:path';

/*
 * The simulator's files import each other without a cycle (a shared definition goes in a file
 * both can import, as resourceDef.ts is for resources.ts and podResources.ts). Read from the
 * import statements of the source files, tests left out.
 */

function importGraph(dir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const name of fs.readdirSync(dir)) {
    if (!/\.ts$/.test(name) || /\.test\.ts$/.test(name)) continue;
    const text = fs.readFileSync(path.join(dir, name), 'utf8');
    const imports = [...text.matchAll(/from\s+'\.\/([^']+)'/g)].map(m => m[1]);
    graph.set(name.replace(/\.ts$/, ''), imports);
  }
  return graph;
}

/** Every cycle, as `a -> b -> a`. */
function cycles(graph: Map<string, string[]>): string[] {
  const found = new Set<string>();
  const done = new Set<string>();
  const visit = (node: string, trail: string[]) => {
    for (const next of graph.get(node) ?? []) {
      const at = trail.indexOf(next);
      if (at !== -1) found.add([...trail.slice(at), next].join(' -> '));
      else if (!done.has(next)) visit(next, [...trail, next]);
    }
    done.add(node);
  };
  for (const node of graph.keys()) visit(node, [node]);
  return [...found];
}

describe('the simulator layout', () => {
  it('has no import cycle between its files', () => {
    const graph = importGraph(__dirname);
    expect(graph.size).toBeGreaterThan(20); // the check reads real imports
    expect(cycles(graph)).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    const graph = new Map([
      ['resources', ['podResources']],
      ['podResources', ['resources']],
    ]);
    expect(cycles(graph)).toContain('resources -> podResources -> resources');
  });
});
