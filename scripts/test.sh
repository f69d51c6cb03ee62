#!/usr/bin/env bash
# Installs whatever is missing (Node 22, Yarn, dependencies, Debian's postgresql, git and
# chromium) and runs every test: type check, the API contract (scripts/openapi.mjs verify), the
# API reports, lint, formatting, every package's tests, the chaos suite (chaos/run.sh, on
# PostgreSQL), then the end-to-end test in headless Chromium against the portal started as
# scripts/start.sh starts it. Database tests run on SQLite and on PostgreSQL:
# BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING (default 127.0.0.1:5432) when it answers,
# otherwise a throw-away cluster started in a temporary directory and stopped at exit
# (scripts/lib/postgres.sh); the chaos suite runs on that same server. The run fails when no
# PostgreSQL database test or no chaos scenario ran, and ends with the tests per database.
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
yarn tsc
yarn tsc -p bench/tsconfig.json
echo "fleet: API contract (the OpenAPI spec is valid and the generated router and client types match it) and API reports"
yarn openapi:verify
yarn build:api-reports:only --ci
echo "fleet: lint and formatting"
yarn lint:all
yarn prettier:check

echo "fleet: unit, integration and backend tests"
# `backstage-cli repo test` hands flags it does not know to Jest, so `--json --outputFile` writes
# Jest's results to a file (the usual output still goes to the terminal); scripts/lib/test-totals.mjs
# counts the tests per database from their names and fails when no PostgreSQL test ran.
jest_rc=0
CI=true yarn backstage-cli repo test --json --outputFile="$run_dir/jest.json" || jest_rc=$?
totals_rc=0
node scripts/lib/test-totals.mjs "$run_dir/jest.json" >"$run_dir/summary" 2>&1 || totals_rc=$?
[ "$jest_rc" = 0 ] || exit "$jest_rc"
[ "$totals_rc" = 0 ] || exit "$totals_rc"

echo "fleet: chaos suite (flapping, restart mid-outage, database error, two replicas, network cut, hostile input)"
chaos_rc=0
bash chaos/run.sh 2>&1 | tee "$run_dir/chaos.log" || chaos_rc=$?
# chaos/run.ts ends with "H/N scenarios hold"; N = 0 (or no such line) means nothing was tried.
chaos_line="$(grep -E '^[0-9]+/[0-9]+ scenarios hold' "$run_dir/chaos.log" | tail -n 1 || true)"
chaos_total="$(printf '%s' "$chaos_line" | sed -E 's|^[0-9]+/([0-9]+) .*|\1|')"
if [ -n "$chaos_line" ]; then
  echo "fleet: chaos suite on PostgreSQL at ${FLEET_BENCH_PG#*@}: ${chaos_line%%;*}" >>"$run_dir/summary"
fi
if [ "$chaos_rc" != 0 ]; then
  echo "fleet: ERROR: the chaos suite failed (exit $chaos_rc)" | tee -a "$run_dir/summary" >&2
  exit "$chaos_rc"
fi
if [ -z "$chaos_line" ] || [ "${chaos_total:-0}" = 0 ]; then
  echo "fleet: ERROR: the chaos suite ran no scenario" | tee -a "$run_dir/summary" >&2
  exit 1
fi

if [ -z "${CHROMIUM_PATH:-}" ] && ! [ -x /usr/bin/chromium ]; then
  echo "fleet: installing Debian's chromium for the browser test"
  sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq chromium >/dev/null
fi
echo "fleet: end-to-end test in headless Chromium (screenshots in e2e-artifacts/)"
node e2e/fleet.e2e.mjs
