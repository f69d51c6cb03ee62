import fs from 'node:fs';
import path from 'node:path';

/*
 * The backend's folders depend on each other in one direction only, and no file reaches into
 * another package by a relative path. Read from the import statements of the source files
 * (tests left out: a test may use any folder it checks).
 */

const SRC = __dirname;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(file);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)
      ? [file]
      : [];
  });
}

function relativeImports(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(/from\s+'(\.{1,2}\/[^']+)'/g)].map(m => m[1]);
}

/** The top folder of `src` a file is in (`.` for a file directly in `src`). */
function folderOf(file: string): string {
  const [first, ...rest] = path.relative(SRC, file).split(path.sep);
  return rest.length ? first : '.';
}

function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(SRC)) {
    const from = folderOf(file);
    for (const spec of relativeImports(file)) {
      const to = folderOf(path.resolve(path.dirname(file), spec));
      if (to === from) continue;
      if (!graph.has(from)) graph.set(from, new Set());
      graph.get(from)!.add(to);
    }
  }
  return graph;
}

/** Every cycle's folders, as `a -> b -> a`. */
function cycles(graph: Map<string, Set<string>>): string[] {
  const found: string[] = [];
  const visit = (node: string, trail: string[]) => {
    for (const next of graph.get(node) ?? []) {
      const at = trail.indexOf(next);
      if (at !== -1) found.push([...trail.slice(at), next].join(' -> '));
      else visit(next, [...trail, next]);
    }
  };
  for (const node of graph.keys()) visit(node, [node]);
  return [...new Set(found)];
}

describe('the backend layout', () => {
  it('has no cycle between its folders', () => {
    const graph = folderGraph();
    expect(graph.size).toBeGreaterThan(5); // the check reads real imports
    expect(cycles(graph)).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    const graph = new Map([
      ['deploy', new Set(['reconcile', 'kubernetes'])],
      ['reconcile', new Set(['deploy'])],
    ]);
    expect(cycles(graph)).toContain('deploy -> reconcile -> deploy');
  });

  it('imports other packages by name, never by a relative path out of src', () => {
    const escapes = sourceFiles(SRC).flatMap(file =>
      relativeImports(file)
        .filter(spec => {
          const target = path.resolve(path.dirname(file), spec);
          return !target.startsWith(SRC + path.sep);
        })
        .map(spec => `${path.relative(SRC, file)}: ${spec}`),
    );
    expect(escapes).toEqual([]);
  });

  it('keeps the router and the health rules free of the folders that use them', () => {
    const graph = folderGraph();
    expect([...(graph.get('health') ?? [])]).not.toContain('deploy');
    expect([...(graph.get('health') ?? [])]).not.toContain('service');
    expect([...(graph.get('database') ?? [])].sort()).toEqual([]);
    expect([...(graph.get('kubernetes') ?? [])]).not.toContain('deploy');
  });
});
