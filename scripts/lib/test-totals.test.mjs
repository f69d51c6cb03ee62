// The rules of scripts/lib/test-totals.mjs on fabricated Jest results, and the script itself
// (its exit code and what it prints). Run: `node --test scripts/lib/` (scripts/test.sh does).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { report, tally } from './test-totals.mjs';

const script = fileURLToPath(new URL('./test-totals.mjs', import.meta.url));
const cwd = '/repo';

const result = (describe, title, status = 'passed') => ({
  ancestorTitles: [describe],
  fullName: `${describe} ${title}`,
  title,
  status,
});
const suite = (name, assertionResults, status = 'passed') => ({
  name: `${cwd}/${name}`,
  status,
  assertionResults,
});
const perDatabase = (describe, titles, ids = ['POSTGRES_15', 'SQLITE_3']) =>
  ids.flatMap(id => titles.map(t => result(`${describe} (${id})`, t)));

/** A run that passes: two per-database files, one on no database, the conformance suite. */
const healthyRun = () => ({
  testResults: [
    suite(
      'plugins/fleet-backend/src/database/paging.test.ts',
      perDatabase('paged lists', ['walks', 'refuses']),
    ),
    suite(
      'plugins/fleet-backend/src/health/HealthWorker.test.ts',
      perDatabase('HealthWorker', ['probes', 'marks', 'recovers']),
    ),
    suite('plugins/fleet-common/src/names.test.ts', [
      result('names', 'accepts'),
    ]),
    suite('plugins/fleet-backend/src/conformance/conformance.test.ts', [
      result('conformance', 'applies'),
    ]),
  ],
});

const run = results => report(tally(results), cwd);

test('a run with equal counts per database and every test run passes, with the summary line CI greps', () => {
  const { lines, errors } = run(healthyRun());
  assert.deepEqual(errors, []);
  assert.ok(
    lines.includes(
      '  tests per database: SQLite 5 passed, PostgreSQL 5 passed, no database 2 passed',
    ),
    lines.join('\n'),
  );
});

test('fails naming the file whose PostgreSQL count differs from its SQLite count', () => {
  const results = healthyRun();
  // One PostgreSQL test of HealthWorker.test.ts did not register: 3 on SQLite, 2 on PostgreSQL.
  results.testResults[1].assertionResults.splice(0, 1);
  const { errors } = run(results);
  assert.equal(errors.length, 1, errors.join('\n'));
  assert.match(
    errors[0],
    /plugins\/fleet-backend\/src\/health\/HealthWorker\.test\.ts: SQLite 3 passed, PostgreSQL 2 passed/,
  );
  assert.doesNotMatch(errors[0], /paging\.test\.ts/);
});

test('fails when a per-database file ran on SQLite only, although other PostgreSQL tests ran', () => {
  const results = healthyRun();
  results.testResults[0].assertionResults = perDatabase(
    'paged lists',
    ['walks', 'refuses'],
    ['SQLITE_3'],
  );
  const { errors } = run(results);
  assert.equal(errors.length, 1, errors.join('\n'));
  assert.match(errors[0], /paging\.test\.ts: SQLite 2 passed, PostgreSQL 0/);
});

test('a failed PostgreSQL test makes the counts differ too', () => {
  const results = healthyRun();
  results.testResults[0].assertionResults[0].status = 'failed';
  const { errors } = run(results);
  assert.match(
    errors.join('\n'),
    /paging\.test\.ts: SQLite 2 passed, PostgreSQL 1 passed/,
  );
});

test('fails naming every skipped or todo test, also one on no database', () => {
  const results = healthyRun();
  results.testResults[2].assertionResults.push(
    result('names', 'refuses a dot', 'pending'),
    result('names', 'refuses a slash', 'todo'),
  );
  // Skipped on both databases: the counts stay equal, the skip alone fails the run.
  for (const t of results.testResults[1].assertionResults)
    if (t.title === 'recovers') t.status = 'pending';
  const { lines, errors } = run(results);
  assert.equal(errors.length, 1, errors.join('\n'));
  assert.match(errors[0], /^4 test\(s\) did not run/);
  assert.match(
    errors[0],
    /plugins\/fleet-common\/src\/names\.test\.ts: names refuses a dot \(pending\)/,
  );
  assert.match(errors[0], /names refuses a slash \(todo\)/);
  assert.match(errors[0], /HealthWorker \(POSTGRES_15\) recovers \(pending\)/);
  assert.match(errors[0], /HealthWorker \(SQLITE_3\) recovers \(pending\)/);
  assert.ok(
    lines.includes(
      '  tests per database: SQLite 4 passed, PostgreSQL 4 passed, no database 2 passed',
    ),
  );
});

test('fails when no PostgreSQL test ran, and when the conformance suite did not run', () => {
  const results = {
    testResults: [
      suite(
        'plugins/fleet-backend/src/database/paging.test.ts',
        perDatabase('paged lists', ['walks'], ['SQLITE_3']),
      ),
    ],
  };
  const { errors } = run(results);
  assert.match(errors[0], /no PostgreSQL database test ran/);
  assert.match(errors[1], /paging\.test\.ts: SQLite 1 passed, PostgreSQL 0/);
  assert.match(errors[2], /conformance suite/);
});

test('the script exits 1 and names the file on unequal counts, 0 on a healthy run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'test-totals-'));
  try {
    const healthy = join(dir, 'healthy.json');
    writeFileSync(healthy, JSON.stringify(healthyRun()));
    const ok = spawnSync(process.execPath, [script, healthy], {
      encoding: 'utf8',
    });
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(
      ok.stdout,
      /tests per database: SQLite 5 passed, PostgreSQL 5 passed, no database 2 passed/,
    );

    const thin = healthyRun();
    thin.testResults[0].assertionResults.pop();
    const thinFile = join(dir, 'thin.json');
    writeFileSync(thinFile, JSON.stringify(thin));
    const failed = spawnSync(process.execPath, [script, thinFile], {
      encoding: 'utf8',
    });
    assert.equal(failed.status, 1);
    assert.match(
      failed.stderr,
      /fleet: ERROR: 1 test file\(s\) that run per database .*\n {2}.*paging\.test\.ts: SQLite 1 passed, PostgreSQL 2 passed/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
