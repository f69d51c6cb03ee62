#!/usr/bin/env bash
# Installs whatever is missing (Node 22, Yarn, dependencies, Debian's chromium) and runs every
# test: type check, every package's tests, the chaos suite (chaos/run.sh, on PostgreSQL), then
# the end-to-end test in headless Chromium against the portal started as scripts/start.sh starts it. Database tests run on SQLite, and on PostgreSQL whenever
# 127.0.0.1:5432 (or BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING) answers.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/toolchain.sh
yarn install --immutable

pg="${BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING:-postgresql://postgres@127.0.0.1:5432}"
if node -e "
  const u = new URL(process.argv[1]);
  const s = require('net').connect(Number(u.port || 5432), u.hostname);
  s.setTimeout(3000, () => process.exit(1));
  s.on('connect', () => process.exit(0)).on('error', () => process.exit(1));
" "$pg"; then
  export BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING="$pg"
  have_pg=1
  echo "fleet: PostgreSQL answers at ${pg#*@}: database tests run on SQLite AND PostgreSQL"
else
  unset BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING
  have_pg=0
  echo "fleet: WARNING: PostgreSQL is NOT reachable at ${pg#*@}: database tests run on SQLite ONLY" >&2
fi
export BACKSTAGE_TEST_DISABLE_DOCKER=1

echo "fleet: type check"
yarn tsc
echo "fleet: lint and formatting"
yarn lint:all
yarn prettier:check
echo "fleet: unit, integration and backend tests"
CI=true yarn backstage-cli repo test

if [ "$have_pg" = 1 ]; then
  echo "fleet: chaos suite (flapping, restart mid-outage, database error, two replicas, network cut, hostile input)"
  bash chaos/run.sh
else
  echo "fleet: WARNING: the chaos suite needs PostgreSQL: skipped" >&2
fi

if [ -z "${CHROMIUM_PATH:-}" ] && ! [ -x /usr/bin/chromium ]; then
  echo "fleet: installing Debian's chromium for the browser test"
  sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq chromium >/dev/null
fi
echo "fleet: end-to-end test in headless Chromium (screenshots in e2e-artifacts/)"
node e2e/fleet.e2e.mjs
