#!/usr/bin/env bash
# Fleet's benchmarks: prints the figures of docs/benchmarks.md (not part of the test command).
# Needs PostgreSQL on 127.0.0.1:5432 (user postgres, trust auth) or FLEET_BENCH_PG; flags: see bench/run.ts.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/toolchain.sh
exec node -r @backstage/cli/config/nodeTransform.cjs bench/run.ts "$@"
