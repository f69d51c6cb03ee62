#!/usr/bin/env bash
# Runs the test gate (scripts/test.sh) several times in a row on a fresh clone of this checkout's
# HEAD while `yarn tsc` loops in a second clone beside it: a test that only passes on an idle
# machine shows up here. Usage: bash scripts/test-under-load.sh [runs (default 5)] [dir]
# The clones go to <dir> (default a new temporary directory) and stay there; each run's output is
# <dir>/run<N>.log, the type-check loop's lines <dir>/tsc.txt, and one line per run (exit code,
# seconds) <dir>/summary.txt, also printed. Exits non-zero when a run failed. On a 2-core machine
# a run takes 26 to 47 minutes this way, depending on the day (about 21 on an idle machine).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs="${1:-5}"
case "$runs" in
  '' | *[!0-9]*) echo "runs must be a number, not '$runs'" >&2; exit 2 ;;
esac
dir="${2:-$(mktemp -d)}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
rev="$(git rev-parse HEAD)"
for clone in gate tsc; do
  if [ ! -d "$dir/$clone" ]; then
    git clone -q "$PWD" "$dir/$clone" && git -C "$dir/$clone" checkout -q "$rev"
  fi
done
echo "fleet: the gate $runs times at $(git rev-parse --short HEAD) beside a type-check loop, in $dir" |
  tee -a "$dir/summary.txt"
# The second clone needs its own dependencies before it can type-check.
(cd "$dir/tsc" && source scripts/toolchain.sh && fleet_install) >"$dir/tsc-install.log" 2>&1 || {
  echo "fleet: installing the type-check clone failed: $dir/tsc-install.log" >&2
  exit 1
}
rm -f "$dir/stop"
(
  cd "$dir/tsc" && source scripts/toolchain.sh
  n=0
  while [ ! -e "$dir/stop" ]; do
    n=$((n + 1))
    started=$(date +%s)
    yarn tsc >/dev/null 2>&1
    rc=$?
    echo "tsc $n rc=$rc $(($(date +%s) - started))s" >>"$dir/tsc.txt"
  done
) &
tsc_loop=$!
trap 'touch "$dir/stop"' EXIT
failed=0
for i in $(seq 1 "$runs"); do
  started=$(date +%s)
  (cd "$dir/gate" && bash scripts/test.sh) >"$dir/run$i.log" 2>&1
  rc=$?
  [ "$rc" = 0 ] || failed=1
  echo "run $i: exit $rc after $(($(date +%s) - started)) s (log $dir/run$i.log)" |
    tee -a "$dir/summary.txt"
done
touch "$dir/stop"
wait "$tsc_loop"
exit "$failed"
