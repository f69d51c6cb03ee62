// Prints the `catalog:` block of the local config scripts/start.sh writes: app-config.yaml's
// catalog locations followed by a file location for each file given. The local config must repeat
// them all: Backstage merges config objects key by key, but a list set in a later file replaces
// the earlier list whole, so a local list of only the new files would drop every example.
//   node scripts/lib/catalog-locations.mjs <catalog file>...
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: catalog-locations.mjs <catalog file>...');
  process.exit(2);
}
const root = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../..',
);
const config = yaml.load(
  fs.readFileSync(path.join(root, 'app-config.yaml'), 'utf8'),
);
const locations = config?.catalog?.locations;
if (!Array.isArray(locations)) {
  console.error(
    'catalog-locations.mjs: app-config.yaml has no catalog.locations list',
  );
  process.exit(1);
}
const added = files.map(file => ({ type: 'file', target: path.resolve(file) }));
process.stdout.write(
  yaml.dump(
    { catalog: { locations: [...locations, ...added] } },
    { lineWidth: -1 },
  ),
);
