#!/usr/bin/env bash
# Fleet's chaos suite against the kube simulator and PostgreSQL: prints what was tried and what
# held, exits non-zero when a scenario does not hold. Needs PostgreSQL on 127.0.0.1:5432 (user
# postgres, trust auth) or FLEET_BENCH_PG. Flags: --only <id,id>, --findings (see chaos/run.ts).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/toolchain.sh
exec node -r @backstage/cli/config/nodeTransform.cjs chaos/run.ts "$@"
