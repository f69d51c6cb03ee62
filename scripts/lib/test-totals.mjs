// Used by scripts/test.sh: reads Jest's JSON results (`backstage-cli repo test` passes
// `--json --outputFile=FILE` through to Jest) and prints the tests per database. A database
// test's full name carries its database id (`describe.each(databases.eachSupportedId())`):
// POSTGRES_* is PostgreSQL, SQLITE_* SQLite, anything else runs on no database.
// Exits 1 when no PostgreSQL test ran (passed or failed): that run did not test PostgreSQL,
// and when no test of the conformance suite (plugins/fleet-backend/src/conformance/, run
// against the kube simulator here) ran.
//
//   node scripts/lib/test-totals.mjs <jest-results.json>
import { readFileSync } from 'node:fs';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: test-totals.mjs <jest-results.json>\n');
  process.exit(2);
}
let results;
try {
  results = JSON.parse(readFileSync(file, 'utf8'));
} catch (e) {
  process.stderr.write(
    `fleet: ERROR: no readable Jest results in ${file}: ${e.message}\n`,
  );
  process.exit(1);
}

const groups = [
  { name: 'SQLite', match: /\bSQLITE_\d+\b/ },
  { name: 'PostgreSQL', match: /\bPOSTGRES_\d+\b/ },
  { name: 'no database', match: /./ },
].map(g => ({ ...g, passed: 0, failed: 0, skipped: 0 }));

// Test files that could not run at all (a compile error, a crash) have no test results.
const notRun = [];
const conformance = { passed: 0, failed: 0 };
for (const suite of results.testResults ?? []) {
  const tests = suite.assertionResults ?? [];
  if (/[\\/]src[\\/]conformance[\\/]/.test(suite.name)) {
    for (const test of tests) {
      if (test.status === 'passed') conformance.passed++;
      else if (test.status === 'failed') conformance.failed++;
    }
  }
  if (tests.length === 0 && suite.status === 'failed') notRun.push(suite.name);
  for (const test of tests) {
    const name =
      test.fullName ?? [...test.ancestorTitles, test.title].join(' ');
    const group = groups.find(g => g.match.test(name));
    if (test.status === 'passed') group.passed++;
    else if (test.status === 'failed') group.failed++;
    else group.skipped++; // pending, skipped, todo, disabled
  }
}

const out = line => process.stdout.write(`${line}\n`);
out('fleet: tests per database');
out(
  `  ${'database'.padEnd(12)} ${'passed'.padStart(7)} ${'failed'.padStart(
    7,
  )} ${'skipped'.padStart(8)}`,
);
for (const g of groups) {
  out(
    `  ${g.name.padEnd(12)} ${String(g.passed).padStart(7)} ${String(
      g.failed,
    ).padStart(7)} ${String(g.skipped).padStart(8)}`,
  );
}
out(
  `  tests per database: ${groups
    .map(g => `${g.name} ${g.passed} passed`)
    .join(', ')}`,
);
out(
  `  conformance suite against the kube simulator: ${conformance.passed} passed, ${conformance.failed} failed`,
);
if (notRun.length > 0) {
  out(`  ${notRun.length} test file(s) could not run:`);
  for (const name of notRun) out(`    ${name}`);
}

const postgres = groups.find(g => g.name === 'PostgreSQL');
if (postgres.passed + postgres.failed === 0) {
  process.stderr.write(
    'fleet: ERROR: no PostgreSQL database test ran (no test name carries POSTGRES_*): ' +
      'the database tests ran on SQLite only\n',
  );
  process.exit(1);
}
if (conformance.passed + conformance.failed === 0) {
  process.stderr.write(
    'fleet: ERROR: no test of the conformance suite (src/conformance/) ran\n',
  );
  process.exit(1);
}
