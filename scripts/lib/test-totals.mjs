// Used by scripts/test.sh: reads Jest's JSON results (`backstage-cli repo test` passes
// `--json --outputFile=FILE` through to Jest) and prints the tests per database. A database
// test's full name carries its database id (`describe.each(databases.eachSupportedId())`):
// POSTGRES_* is PostgreSQL, SQLITE_* SQLite, anything else runs on no database.
// Exits 1, naming what is wrong, when
// - no PostgreSQL test ran (passed or failed): that run did not test PostgreSQL;
// - a test file that runs per database passed a different number of tests on PostgreSQL than
//   on SQLite: a database's tests were lost (not registered, failed, or ran on one database only);
// - any test was skipped or left as todo: a test that does not run proves nothing;
// - no test of the conformance suite (plugins/fleet-backend/src/conformance/, run against the
//   kube simulator here) ran.
// scripts/lib/test-totals.test.mjs checks these rules (`node --test scripts/lib/`).
//
//   node scripts/lib/test-totals.mjs <jest-results.json>
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { pathToFileURL } from 'node:url';

const GROUPS = [
  { name: 'SQLite', match: /\bSQLITE_\d+\b/ },
  { name: 'PostgreSQL', match: /\bPOSTGRES_\d+\b/ },
  { name: 'no database', match: /./ },
];

const testName = test =>
  test.fullName ?? [...(test.ancestorTitles ?? []), test.title].join(' ');

/**
 * Counts Jest's results (the object `--json` writes): per database, per test file that runs per
 * database, the tests that did not run, the files that could not run, the conformance suite.
 */
export function tally(results) {
  const groups = GROUPS.map(g => ({ ...g, passed: 0, failed: 0, skipped: 0 }));
  // Test files that could not run at all (a compile error, a crash) have no test results.
  const notRun = [];
  const notExecuted = [];
  const perDatabaseFiles = [];
  const conformance = { passed: 0, failed: 0 };
  for (const suite of results.testResults ?? []) {
    const tests = suite.assertionResults ?? [];
    if (/[\\/]src[\\/]conformance[\\/]/.test(suite.name)) {
      for (const test of tests) {
        if (test.status === 'passed') conformance.passed++;
        else if (test.status === 'failed') conformance.failed++;
      }
    }
    if (tests.length === 0 && suite.status === 'failed')
      notRun.push(suite.name);
    const file = { name: suite.name, SQLite: 0, PostgreSQL: 0, perDatabase: 0 };
    for (const test of tests) {
      const name = testName(test);
      const group = groups.find(g => g.match.test(name));
      if (group.name !== 'no database') file.perDatabase++;
      if (test.status === 'passed') {
        group.passed++;
        if (group.name !== 'no database') file[group.name]++;
      } else if (test.status === 'failed') {
        group.failed++;
      } else {
        // pending (skip, only elsewhere), todo, disabled
        group.skipped++;
        notExecuted.push({ file: suite.name, name, status: test.status });
      }
    }
    if (file.perDatabase > 0) perDatabaseFiles.push(file);
  }
  const unequal = perDatabaseFiles.filter(f => f.SQLite !== f.PostgreSQL);
  return {
    groups,
    conformance,
    notRun,
    notExecuted,
    perDatabaseFiles,
    unequal,
  };
}

/** What to print (the summary) and why the run fails (none: it passes). */
export function report(totals, cwd = process.cwd()) {
  const { groups, conformance, notRun, notExecuted, unequal } = totals;
  const where = file => relative(cwd, file) || file;
  const lines = [];
  const errors = [];
  lines.push('fleet: tests per database');
  lines.push(
    `  ${'database'.padEnd(12)} ${'passed'.padStart(7)} ${'failed'.padStart(
      7,
    )} ${'skipped'.padStart(8)}`,
  );
  for (const g of groups) {
    lines.push(
      `  ${g.name.padEnd(12)} ${String(g.passed).padStart(7)} ${String(
        g.failed,
      ).padStart(7)} ${String(g.skipped).padStart(8)}`,
    );
  }
  lines.push(
    `  tests per database: ${groups
      .map(g => `${g.name} ${g.passed} passed`)
      .join(', ')}`,
  );
  lines.push(
    `  test files run per database: ${totals.perDatabaseFiles.length}, ${unequal.length} with unequal counts`,
  );
  lines.push(
    `  conformance suite against the kube simulator: ${conformance.passed} passed, ${conformance.failed} failed`,
  );
  if (notRun.length > 0) {
    lines.push(`  ${notRun.length} test file(s) could not run:`);
    for (const name of notRun) lines.push(`    ${where(name)}`);
  }

  const postgres = groups.find(g => g.name === 'PostgreSQL');
  if (postgres.passed + postgres.failed === 0) {
    errors.push(
      'no PostgreSQL database test ran (no test name carries POSTGRES_*): ' +
        'the database tests ran on SQLite only',
    );
  }
  if (unequal.length > 0) {
    errors.push(
      [
        `${unequal.length} test file(s) that run per database passed a different number of tests on PostgreSQL than on SQLite:`,
        ...unequal.map(
          f =>
            `  ${where(f.name)}: SQLite ${f.SQLite} passed, PostgreSQL ${
              f.PostgreSQL
            } passed`,
        ),
      ].join('\n'),
    );
  }
  if (notExecuted.length > 0) {
    errors.push(
      [
        `${notExecuted.length} test(s) did not run (skipped or todo); every test must run:`,
        ...notExecuted.map(t => `  ${where(t.file)}: ${t.name} (${t.status})`),
      ].join('\n'),
    );
  }
  if (conformance.passed + conformance.failed === 0) {
    errors.push('no test of the conformance suite (src/conformance/) ran');
  }
  return { lines, errors };
}

function main(file) {
  if (!file) {
    process.stderr.write('usage: test-totals.mjs <jest-results.json>\n');
    return 2;
  }
  let results;
  try {
    results = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    process.stderr.write(
      `fleet: ERROR: no readable Jest results in ${file}: ${e.message}\n`,
    );
    return 1;
  }
  const { lines, errors } = report(tally(results));
  for (const line of lines) process.stdout.write(`${line}\n`);
  for (const error of errors) process.stderr.write(`fleet: ERROR: ${error}\n`);
  return errors.length > 0 ? 1 : 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = main(process.argv[2]);
}
