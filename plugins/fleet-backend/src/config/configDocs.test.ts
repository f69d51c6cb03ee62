/*
 * docs/configuration.md shows every `fleet.*` setting the plugins declare: each key path of the
 * packages' config.d.ts is in the documentation's YAML (a key added to the schema but not to the
 * docs fails here).
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { parseAllDocuments } from 'yaml';

const repo = path.resolve(__dirname, '../../../..');
const schemas = [
  'plugins/fleet-backend/config.d.ts',
  'plugins/fleet/config.d.ts',
  'plugins/catalog-backend-module-fleet/config.d.ts',
  'packages/backend/config.d.ts',
  'packages/git-host/config.d.ts',
];

/** The key paths a config.d.ts declares, down to its leaves (a type literal is walked into). */
function declaredPaths(file: string): string[] {
  const source = ts.createSourceFile(
    file,
    fs.readFileSync(file, 'utf8'),
    ts.ScriptTarget.Latest,
    true,
  );
  const paths: string[] = [];
  const walk = (members: ts.NodeArray<ts.TypeElement>, prefix: string) => {
    for (const member of members) {
      if (!ts.isPropertySignature(member) || !member.name) continue;
      const key = member.name.getText(source).replace(/^['"]|['"]$/g, '');
      const at = prefix ? `${prefix}.${key}` : key;
      let type = member.type;
      // `T | undefined`, `{...} | boolean`: walk the literal part.
      if (type && ts.isUnionTypeNode(type)) {
        type = type.types.find(ts.isTypeLiteralNode) ?? type;
      }
      if (type && ts.isTypeLiteralNode(type)) walk(type.members, at);
      else paths.push(at);
    }
  };
  ts.forEachChild(source, node => {
    if (ts.isInterfaceDeclaration(node) && node.name.text === 'Config') {
      walk(node.members, '');
    }
  });
  return paths.filter(p => p.startsWith('fleet.'));
}

/** The key paths of every YAML block of a Markdown file. */
function documentedPaths(file: string): Set<string> {
  const paths = new Set<string>();
  const add = (value: unknown, prefix: string) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      return;
    for (const [key, child] of Object.entries(value)) {
      const at = prefix ? `${prefix}.${key}` : key;
      paths.add(at);
      add(child, at);
    }
  };
  const markdown = fs.readFileSync(file, 'utf8');
  for (const [, block] of markdown.matchAll(/```yaml\n([\s\S]*?)```/g)) {
    for (const doc of parseAllDocuments(block)) add(doc.toJS(), '');
  }
  return paths;
}

describe('docs/configuration.md', () => {
  it('shows every fleet.* setting the plugins declare', () => {
    const documented = documentedPaths(
      path.join(repo, 'docs/configuration.md'),
    );
    const declared = schemas.flatMap(s => declaredPaths(path.join(repo, s)));
    expect(declared.length).toBeGreaterThan(30);
    expect(declared.filter(p => !documented.has(p))).toEqual([]);
  });
});
