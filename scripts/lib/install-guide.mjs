// The steps of docs/install-in-your-app.md, for scripts/check-install-guide.sh: each code block
// that follows a `<!-- check-install-guide: step NAME -->` comment, taken from the guide itself so
// that the guide and its check cannot drift.
//   node scripts/lib/install-guide.mjs list  GUIDE            the step names, in order
//   node scripts/lib/install-guide.mjs block GUIDE NAME       the block's text
//   node scripts/lib/install-guide.mjs apply GUIDE NAME APP   puts a ts/tsx/yaml/dockerfile
//                                                             block where the guide says
// Exits 1, saying why, when a step is missing or the app is not as the guide expects.
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';

const MARK = /^<!-- check-install-guide: step ([a-z0-9-]+) -->$/;

function fail(message) {
  console.error(`install-guide: ${message}`);
  process.exit(1);
}

function readSteps(guide) {
  const lines = fs.readFileSync(guide, 'utf8').split('\n');
  const steps = [];
  for (let i = 0; i < lines.length; i++) {
    const mark = MARK.exec(lines[i].trim());
    if (!mark) continue;
    let j = i + 1;
    while (j < lines.length && lines[j].trim() === '') j++;
    const fence = /^```(\w*)$/.exec(lines[j] ?? '');
    if (!fence) fail(`step ${mark[1]}: no code block after its comment`);
    const body = [];
    for (j++; j < lines.length && lines[j] !== '```'; j++) body.push(lines[j]);
    if (j === lines.length) fail(`step ${mark[1]}: its code block never ends`);
    if (steps.some(s => s.name === mark[1]))
      fail(`step ${mark[1]} is marked twice`);
    steps.push({ name: mark[1], lang: fence[1], text: `${body.join('\n')}\n` });
  }
  return steps;
}

function step(guide, name) {
  const found = readSteps(guide).find(s => s.name === name);
  if (!found) fail(`the guide has no step ${name}`);
  return found;
}

function edit(app, file, change) {
  const full = path.join(app, file);
  if (!fs.existsSync(full)) fail(`${file} is missing in the app`);
  const before = fs.readFileSync(full, 'utf8');
  const after = change(before);
  if (after === before) fail(`${file}: nothing changed`);
  fs.writeFileSync(full, after);
  console.log(`install-guide: ${file} changed`);
}

function write(app, file, text) {
  fs.mkdirSync(path.dirname(path.join(app, file)), { recursive: true });
  fs.writeFileSync(path.join(app, file), text);
  console.log(`install-guide: ${file} written`);
}

// Where each file block goes: what the guide's text around it says.
const APPLY = {
  // "packages/backend/src/index.ts, before backend.start()"
  backend: (app, text) =>
    edit(app, 'packages/backend/src/index.ts', src => {
      if (!src.includes('\nbackend.start();'))
        fail('packages/backend/src/index.ts has no backend.start()');
      return src.replace('\nbackend.start();', `\n${text}backend.start();`);
    }),
  'kubernetes-module': (app, text) =>
    write(app, 'packages/app/src/modules/kubernetes/index.ts', text),
  // "create-app's App.tsx becomes": it must keep every line create-app wrote.
  'app-tsx': (app, text) =>
    edit(app, 'packages/app/src/App.tsx', src => {
      const kept = new Set(text.split('\n').map(l => l.trim()));
      const lost = src
        .split('\n')
        .map(l => l.trim())
        .filter(l => l && !kept.has(l));
      // The features line changes by design: the guide's must start with create-app's.
      const features = lost.filter(l => l.startsWith('features: ['));
      const others = lost.filter(l => !l.startsWith('features: ['));
      if (others.length)
        fail(
          `the guide's App.tsx drops create-app's lines: ${others.join(' | ')}`,
        );
      for (const line of features) {
        const head = line.replace(/\],?$/, '');
        if (!text.includes(head))
          fail(
            `the guide's App.tsx has other features than create-app's ${line}`,
          );
      }
      return text;
    }),
  // "replace create-app's kubernetes: key with the kubernetes: below, and add fleet:": the block
  // goes where create-app's key was (the key, its comment lines and blank lines after it).
  'app-config': (app, text) =>
    edit(app, 'app-config.yaml', src => {
      const lines = src.split('\n');
      const at = lines.indexOf('kubernetes:');
      if (at < 0)
        fail(
          "app-config.yaml has no kubernetes: key to replace (create-app's)",
        );
      let end = at + 1;
      while (end < lines.length && /^(\s+#.*|\s*)$/.test(lines[end])) end++;
      // Pasted after create-app's key, as the guide warns not to, the file would not load.
      const pasted = YAML.parseDocument(`${src}\n${text}`);
      if (!pasted.errors.some(e => /unique/i.test(e.message)))
        fail(
          "pasting the block after create-app's key no longer fails as the guide says",
        );
      lines.splice(at, end - at, ...text.split('\n'));
      const result = lines.join('\n');
      const doc = YAML.parseDocument(result);
      if (doc.errors.length) fail(`app-config.yaml: ${doc.errors[0].message}`);
      for (const key of Object.keys(YAML.parse(text)))
        if (!doc.get(key))
          fail(`app-config.yaml: ${key}: is empty after the step`);
      return result;
    }),
  // "give example-website's metadata these annotations"
  catalog: (app, text) =>
    edit(app, 'examples/entities.yaml', src => {
      const name = /^ {2}name: (.+)$/m.exec(text)?.[1];
      const plain = `metadata:\n  name: ${name}\n`;
      if (!src.includes(plain))
        fail(`examples/entities.yaml has no ${name} without annotations`);
      return src.replace(plain, text);
    }),
  // "right above the RUN … yarn workspaces focus --all --production line"
  dockerfile: (app, text) =>
    edit(app, 'packages/backend/Dockerfile', src => {
      const lines = src.split('\n');
      let at = lines.findIndex(l =>
        l.includes('yarn workspaces focus --all --production'),
      );
      while (at > 0 && !lines[at].startsWith('RUN ')) at--;
      if (at <= 0)
        fail('the Dockerfile has no RUN … yarn workspaces focus line');
      lines.splice(at, 0, ...text.trimEnd().split('\n'));
      return lines.join('\n');
    }),
  policy: (app, text) =>
    write(app, 'packages/backend/src/fleetPermissionPolicy.ts', text),
  // "in packages/backend/src/index.ts, in place of the allow-all module"
  'policy-index': (app, text) =>
    edit(app, 'packages/backend/src/index.ts', src => {
      const allowAll =
        /backend\.add\(\s*import\(\s*'@backstage\/plugin-permission-backend-module-allow-all-policy',?\s*\),?\s*\);\n/;
      if (!allowAll.test(src)) fail('index.ts adds no allow-all policy module');
      return src.replace(allowAll, text);
    }),
  // "create-app's guest: {} becomes": its lines from `guest:` on take the place of `guest: {}`.
  'guest-user': (app, text) =>
    edit(app, 'app-config.yaml', src => {
      const lines = text.trimEnd().split('\n');
      const at = lines.findIndex(l => l.trim() === 'guest:');
      const indent = lines[at]?.match(/^\s*/)[0];
      const old = `\n${indent}guest: {}\n`;
      if (at < 0 || !src.includes(old))
        fail(
          `app-config.yaml has no ${old.trim()} where the guide's block puts guest:`,
        );
      const result = src.replace(old, `\n${lines.slice(at).join('\n')}\n`);
      const want = YAML.parse(text).auth.providers.guest;
      const got = YAML.parse(result).auth.providers.guest;
      if (JSON.stringify(got) !== JSON.stringify(want))
        fail(`auth.providers.guest is ${JSON.stringify(got)} after the step`);
      return result;
    }),
};

const [command, guide, name, app] = process.argv.slice(2);
if (command === 'list' && guide) {
  for (const s of readSteps(guide)) console.log(`${s.name}\t${s.lang}`);
} else if (command === 'block' && name) {
  process.stdout.write(step(guide, name).text);
} else if (command === 'apply' && app) {
  const s = step(guide, name);
  if (!APPLY[name]) fail(`no rule to apply step ${name} (a ${s.lang} block)`);
  APPLY[name](app, s.text);
} else {
  fail(
    'usage: install-guide.mjs list GUIDE | block GUIDE NAME | apply GUIDE NAME APP',
  );
}
