#!/usr/bin/env bash
# Follows docs/install-in-your-app.md in a scratch app, to keep the guide true: makes an app with
# the create-app the guide names, runs or applies each code block the guide marks
# `<!-- check-install-guide: step NAME -->` (taken from the guide itself, by
# scripts/lib/install-guide.mjs), then checks the app: its configuration against every plugin's
# schema, `yarn tsc`, the lint of packages/app and packages/backend, `yarn build:backend`, and a
# start: a one-cluster kube simulator and the app's backend on free ports, the guest's token,
# the cluster ONLINE, example-website deployed to it until DEPLOYED.
# It downloads and installs a whole Backstage app (about 1.5 GB with Yarn's cache): not part of
# scripts/test.sh. Run it after changing the guide, the packages' exports or their dependencies.
#   FLEET_CHECK_DIR   where the scratch app goes (default: a new /tmp/fleet-install-check.*)
#   FLEET_CHECK_KEEP=1          keep the scratch app (it is removed after a run that passed)
#   FLEET_CHECK_SKIP_PACK=1     use the tarballs dist-packages/ has (no scripts/pack.sh)
#   FLEET_CHECK_SKIP_START=1    stop after the build (no simulator, no backend)
#   FLEET_CHECK_APP=<dir>       only the checks, on an app an earlier run kept (FLEET_CHECK_KEEP)
set -euo pipefail
started_s="$(date +%s)"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/toolchain.sh
FLEET="$(pwd)"
export FLEET
guide="$FLEET/docs/install-in-your-app.md"
steps="$FLEET/scripts/lib/install-guide.mjs"
work="${FLEET_CHECK_DIR:-$(mktemp -d /tmp/fleet-install-check.XXXXXX)}"
mkdir -p "$work"
log="$work/check.log"
pids=()
ran=()
passed=0
cleanup() {
  for pid in "${pids[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  if [ "$passed" = 1 ] && [ "${FLEET_CHECK_KEEP:-0}" != 1 ]; then
    rm -rf "$work"
  else
    echo "check-install-guide: the scratch app is kept in $work (logs: $work/*.log)"
  fi
}
trap cleanup EXIT

say() { echo "check-install-guide: $*" | tee -a "$log"; }
# Runs one timed phase, its output in $work/<name>.log; on failure shows its end.
phase() {
  local name="$1"
  shift
  local t0
  t0="$(date +%s)"
  if ! "$@" >"$work/$name.log" 2>&1; then
    tail -n 40 "$work/$name.log"
    say "FAILED at $name ($(($(date +%s) - t0)) s; log $work/$name.log)"
    exit 1
  fi
  say "$name: $(($(date +%s) - t0)) s"
  ran+=("$name")
}
skip() {
  say "$1: skipped ($2)"
  ran+=("$1")
}
block() { node "$steps" block "$guide" "$1"; }
# A shell step of the guide, run as the reader would: in $2.
run_block() { (cd "$2" && bash -euo pipefail -c "$(block "$1")"); }
apply() { node "$steps" apply "$guide" "$1" "$app"; }

say "logs in $work; the guide's steps: $(node "$steps" list "$guide" | cut -f1 | tr '\n' ' ')"

apply_guide() {

  # 0. The app (create-app installs it and runs yarn tsc).
  app_name="$(block create-app | sed -n 's/.*--path \([^ ]*\).*/\1/p' | head -n 1)"
  [ -n "$app_name" ] || { say "the create-app step names no --path"; exit 1; }
  app="$work/$app_name"
  [ ! -e "$app" ] || { say "$app already exists: choose another FLEET_CHECK_DIR"; exit 1; }
  phase create-app run_block create-app "$work"

  # 1. The packages.
  if [ -d "$FLEET/node_modules" ]; then
    skip fleet-install "the repository is installed"
  else
    phase fleet-install run_block fleet-install "$FLEET"
  fi
  if [ "${FLEET_CHECK_SKIP_PACK:-0}" = 1 ]; then
    ls "$FLEET"/dist-packages/*.tgz >/dev/null || { say "FLEET_CHECK_SKIP_PACK=1 but dist-packages/ has no tarballs"; exit 1; }
    skip pack "FLEET_CHECK_SKIP_PACK=1: $(ls "$FLEET"/dist-packages/*.tgz | wc -l) tarballs of $(date -r "$(ls -t "$FLEET"/dist-packages/*.tgz | head -n 1)" -u +%FT%TZ)"
  else
    phase pack run_block pack "$FLEET"
  fi
  phase copy run_block copy "$app"

  # 2. Install.
  phase install run_block install "$app"
  if grep -q 'Failed to fetch the yarn.lock seed file' "$work/create-app.log"; then
    phase yarn-up run_block yarn-up "$app"
  else
    skip yarn-up "create-app had its yarn.lock seed"
  fi
  phase dedupe run_block dedupe "$app"

  # 3.–6. The backend, the frontend, the configuration, the image, the permission policy.
  for name in backend kubernetes-module-copy kubernetes-module app-tsx app-config catalog dockerfile policy policy-index guest-user; do
    case "$(node "$steps" list "$guide" | awk -v n="$name" '$1 == n { print $2 }')" in
      sh) phase "$name" run_block "$name" "$app" ;;
      '') say "the guide has no step $name"; exit 1 ;;
      *) phase "$name" apply "$name" ;;
    esac
  done
  # Every marked step was taken: a new one needs a rule here.
  for name in $(node "$steps" list "$guide" | cut -f1); do
    case " ${ran[*]} " in
      *" $name "*) ;;
      *) say "the guide's step $name is not run by this script"; exit 1 ;;
    esac
  done

}

if [ -n "${FLEET_CHECK_APP:-}" ]; then
  app="$(cd "$FLEET_CHECK_APP" && pwd)"
  say "only the checks, on $app (FLEET_CHECK_APP)"
else
  apply_guide
fi

# The checks.
phase config-check bash -c "cd '$app' && yarn backstage-cli config:check --lax"
phase tsc bash -c "cd '$app' && yarn tsc"
phase lint-app bash -c "cd '$app/packages/app' && yarn backstage-cli package lint"
phase lint-backend bash -c "cd '$app/packages/backend' && yarn backstage-cli package lint"
phase build-backend bash -c "cd '$app' && yarn build:backend"

if [ "${FLEET_CHECK_SKIP_START:-0}" = 1 ]; then
  passed=1
  say "ok in $(($(date +%s) - started_s)) s (no start: FLEET_CHECK_SKIP_START=1)"
  exit 0
fi

# 7. Check it: the simulator and the app's backend on free ports.
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
sim_port="$(free_port)"
backend_port="$(free_port)"
backend="http://localhost:$backend_port"
setsid node "$FLEET/packages/kube-simulator/bin/kube-simulator" --clusters 1 --port "$sim_port" \
  --out "$work/kubeconfigs" >"$work/simulator.log" 2>&1 &
pids+=("$!")
cat >"$app/app-config.local.yaml" <<YAML
backend:
  baseUrl: $backend
  listen:
    port: $backend_port
YAML
(cd "$app/packages/backend" && KUBECONFIG_DIR="$work/kubeconfigs" exec setsid yarn start) >"$work/backend.log" 2>&1 &
pids+=("$!")

# Waits up to $1 s for the command to succeed.
wait_for() {
  local limit="$1"
  shift
  local t0
  t0="$(date +%s)"
  until "$@" >/dev/null 2>&1; do
    [ "$(($(date +%s) - t0))" -lt "$limit" ] || return 1
    sleep 2
  done
}
json() { node -e 'let t="";process.stdin.on("data",c=>t+=c).on("end",()=>{const v=JSON.parse(t);process.stdout.write(String(eval(process.argv[1])))})' "$1"; }
guest_token() {
  curl -sf -H 'X-Requested-With: XMLHttpRequest' "$backend/api/auth/guest/refresh" | json 'v.backstageIdentity.token'
}
api() { curl -sf -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
catalog_has() { TOKEN="$(guest_token)" && api "$backend/api/catalog/entities/by-name/$1" >/dev/null; }
cluster_online() { api "$backend/api/fleet/clusters" | json 'v.items.find(c => c.name === "sim-1").status' | grep -qx ONLINE; }
deployed() {
  api "$backend/api/fleet/deployments?entityRef=component:default/example-website" |
    json 'v.items.map(d => d.cluster + " " + d.status).join("\n")' | tee "$work/deployment-status.txt" | grep -qx 'sim-1 DEPLOYED'
}
start_checks() {
  wait_for 60 grep -q '^ready' "$work/simulator.log" || { echo "the simulator did not start"; return 1; }
  wait_for 300 curl -sf "$backend/api/fleet/health" || { echo "the backend did not answer"; return 1; }
  echo "backend answers"
  # The guest is the catalog's user:default/guest (step guest-user), once the catalog has it.
  wait_for 120 catalog_has user/default/guest || { echo "the catalog has no user:default/guest"; return 1; }
  wait_for 120 catalog_has component/default/example-website || { echo "the catalog has no example-website"; return 1; }
  TOKEN="$(guest_token)"
  echo "guest's token: $(node -e 'console.log(JSON.parse(Buffer.from(process.argv[1].split(".")[1],"base64url")).sub)' "$TOKEN")"
  wait_for 120 cluster_online || { api "$backend/api/fleet/clusters"; echo "sim-1 is not ONLINE"; return 1; }
  echo "sim-1 ONLINE"
  api "$backend/api/kubernetes/clusters" | json 'JSON.stringify(v.items)' | grep -q '"authProvider":"fleet"' ||
    { echo "/api/kubernetes/clusters lists no fleet cluster"; return 1; }
  echo "the Kubernetes plugin lists sim-1 (authProvider fleet)"
  # The guide's policy is in force (not create-app's allow-all): the guest is not in the platform
  # group, so it may not run a health cycle; it owns example-website, so it may deploy it.
  local code
  code="$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" "$backend/api/fleet/health/run")"
  [ "$code" = 403 ] || { echo "POST /health/run by the guest answered $code, not 403: the guide's policy is not in force"; return 1; }
  echo "the guide's policy refuses the guest a health cycle (403)"
  api -X POST "$backend/api/fleet/deployments" -d '{"entityRef":"component:default/example-website","cluster":"sim-1"}' ||
    { echo "the guest's deploy of example-website was refused"; return 1; }
  echo
  wait_for 180 deployed || { cat "$work/deployment-status.txt"; echo "example-website is not DEPLOYED on sim-1"; return 1; }
  echo "example-website DEPLOYED on sim-1"
}
phase start start_checks
passed=1
say "ok in $(($(date +%s) - started_s)) s"
