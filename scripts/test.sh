#!/usr/bin/env bash
# Installs whatever is missing (Node 22, Yarn, dependencies, Debian's postgresql, git and
# chromium) and runs every test: type check, the API contract (scripts/openapi.mjs verify), the
# API reports, lint, formatting, every package's tests, the chaos suite (chaos/run.sh, on
# PostgreSQL), then the end-to-end test in headless Chromium against the portal started as
# scripts/start.sh starts it, on PostgreSQL. Database tests run on SQLite and on PostgreSQL:
# BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING (default 127.0.0.1:5432) when it answers,
# otherwise a throw-away cluster started in a temporary directory and stopped at exit
# (scripts/lib/postgres.sh); the chaos suite runs on that same server. The run fails when no
# PostgreSQL database test ran, when a test file run per database passed fewer tests on one
# database than on the other, when any test was skipped or left as todo, or when a chaos scenario
# the suite registers did not run and hold, and ends with the tests per database.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/toolchain.sh
source scripts/lib/postgres.sh
fleet_install

run_dir="$(mktemp -d)"
on_exit() {
  local rc=$?
  if [ -s "$run_dir/summary" ]; then
    echo
    cat "$run_dir/summary"
  fi
  if [ -n "${FLEET_POSTGRES_PREFIX:-}" ]; then
    fleet_pg_drop_prefixed "$FLEET_POSTGRES" "$FLEET_POSTGRES_PREFIX" || true
  fi
  fleet_pg_stop || true
  rm -rf "$run_dir"
  exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fleet_pg_ensure
# packages/git-host's tests serve repositories with Debian's `git http-backend`.
if ! [ -x "$(git --exec-path 2>/dev/null)/git-http-backend" ]; then
  echo "fleet: installing Debian's git (git http-backend) for packages/git-host"
  sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq git >/dev/null
fi
export BACKSTAGE_TEST_DISABLE_DOCKER=1

echo "fleet: type check (packages and plugins, then bench/ and chaos/)"
# The API reports below are made from the declarations this type check writes to dist-types/. An
# incremental build after a change can print an inferred type's optional properties in another
# order (the order TypeScript first met their names), which the reports' check then refuses: the
# declarations are written afresh, as on a fresh clone.
rm -rf dist-types
yarn tsc
yarn tsc -p bench/tsconfig.json
echo "fleet: API contract (the OpenAPI spec is valid and the generated router and client types match it) and API reports"
yarn openapi:verify
yarn build:api-reports:only --ci
echo "fleet: lint and formatting"
yarn lint:all
yarn prettier:check

echo "fleet: the rules of the test totals (scripts/lib/test-totals.test.mjs)"
node --test scripts/lib/test-totals.test.mjs

echo "fleet: unit, integration and backend tests"
# `backstage-cli repo test` hands flags it does not know to Jest, so `--json --outputFile` writes
# Jest's results to a file (the usual output still goes to the terminal); scripts/lib/test-totals.mjs
# counts the tests per database from their names and fails when no PostgreSQL test ran, when a
# file run per database passed unequal counts on SQLite and PostgreSQL, or when a test was skipped.
jest_rc=0
CI=true yarn backstage-cli repo test --json --outputFile="$run_dir/jest.json" || jest_rc=$?
totals_rc=0
node scripts/lib/test-totals.mjs "$run_dir/jest.json" >"$run_dir/summary" 2>&1 || totals_rc=$?
[ "$jest_rc" = 0 ] || exit "$jest_rc"
[ "$totals_rc" = 0 ] || exit "$totals_rc"

# Every scenario the suite registers (chaos/run.ts --list) must run and hold, each by name: the
# run fails naming any that is missing from the final `scenarios that hold:` line.
chaos_ids="$(bash chaos/run.sh --list)"
echo "fleet: chaos suite ($(printf '%s' "$chaos_ids" | paste -sd ' '))"
chaos_rc=0
bash chaos/run.sh 2>&1 | tee "$run_dir/chaos.log" || chaos_rc=$?
# chaos/run.ts ends with "H/N scenarios hold" and "scenarios that hold: id, id".
chaos_line="$(grep -E '^[0-9]+/[0-9]+ scenarios hold' "$run_dir/chaos.log" | tail -n 1 || true)"
chaos_held="$(grep -E '^scenarios that hold: ' "$run_dir/chaos.log" | tail -n 1 || true)"
if [ -n "$chaos_line" ]; then
  echo "fleet: chaos suite on PostgreSQL at ${FLEET_BENCH_PG#*@}: ${chaos_line%%;*}" >>"$run_dir/summary"
fi
chaos_missing=""
for id in $chaos_ids; do
  case ", ${chaos_held#scenarios that hold: }, " in
    *", $id, "*) ;;
    *) chaos_missing="$chaos_missing $id" ;;
  esac
done
if [ -z "$chaos_ids" ]; then
  echo "fleet: ERROR: the chaos suite registers no scenario (chaos/run.sh --list)" | tee -a "$run_dir/summary" >&2
  exit 1
fi
if [ -n "$chaos_missing" ]; then
  echo "fleet: ERROR: chaos scenario(s) that did not run or did not hold:$chaos_missing" | tee -a "$run_dir/summary" >&2
  if [ "$chaos_rc" = 0 ]; then chaos_rc=1; fi
fi
if [ "$chaos_rc" != 0 ]; then
  echo "fleet: ERROR: the chaos suite failed (exit $chaos_rc)" | tee -a "$run_dir/summary" >&2
  exit "$chaos_rc"
fi

if [ -z "${CHROMIUM_PATH:-}" ] && ! [ -x /usr/bin/chromium ]; then
  echo "fleet: installing Debian's chromium for the browser test"
  sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq chromium >/dev/null
fi
# The portal the e2e test starts (scripts/start.sh) keeps its data in PostgreSQL, on the same
# server, in databases of this run only (dropped at exit); start.sh alone stays on SQLite.
export FLEET_POSTGRES="$BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING"
export FLEET_POSTGRES_PREFIX="fleet_e2e_$$_"
echo "fleet: end-to-end test in headless Chromium on PostgreSQL at ${FLEET_POSTGRES#*@} (screenshots in e2e-artifacts/)"
node e2e/fleet.e2e.mjs
