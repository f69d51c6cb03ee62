#!/usr/bin/env bash
# Installs whatever is missing (Node 22, Yarn, dependencies), starts a simulated fleet of
# kube-simulator clusters whose kubeconfigs Fleet discovers, and runs the portal (backend on
# :7007, frontend on :3000) on SQLite kept in .fleet/sqlite.
# The fleet is mixed so that a progressive release shows each canary kind: sim-1 serves Argo
# Rollouts (its canary is a Rollout), the others do not (a `<app>-canary` Deployment sized by
# replicas); no cluster serves Istio (its canary would need a VirtualService to exist). The
# simulator's Prometheus endpoint answers release analyses, and starts with one rule making every
# app healthy (0.999), so releases in the demo pass their analysis (the generated local config lists
# it in fleet.analysis.prometheus.allowedAddresses, the only address analyses may query); change its
# answers with `POST https://127.0.0.1:6550/_sim/prometheus/rules` (see packages/kube-simulator/README.md).
#   FLEET_SIM_CLUSTERS (default 3)  FLEET_SIM_PORT (default 6550)
#   FLEET_PROMETHEUS_PORT (default 9091: http://127.0.0.1:9091, the `address` for analyses)
#   FLEET_STATE_DIR (default .fleet: kubeconfigs, SQLite, dev token; the e2e test uses its own)
#   FLEET_FRONTEND_PORT (default 3000)  FLEET_BACKEND_PORT (default 7007)
# It prints "fleet: ready" and the pages to open only once the portal can be used: the backend
# answers, the frontend is served, the catalog holds the example org, components and template,
# and Fleet's first health cycle is done (scripts/lib/wait-ready.mjs).
set -euo pipefail
started_ms="$(date +%s%3N)"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/toolchain.sh
fleet_install

root="$(pwd)"
state="${FLEET_STATE_DIR:-$root/.fleet}"
case "$state" in /*) ;; *) state="$root/$state" ;; esac
mkdir -p "$state/sqlite"
[ -s "$state/dev-token" ] || node -e "process.stdout.write(require('crypto').randomBytes(24).toString('hex'))" > "$state/dev-token"

sim_port="${FLEET_SIM_PORT:-6550}"
prometheus_port="${FLEET_PROMETHEUS_PORT:-9091}"
frontend_port="${FLEET_FRONTEND_PORT:-3000}"
backend_port="${FLEET_BACKEND_PORT:-7007}"
frontend="http://localhost:${frontend_port}"
backend="http://localhost:${backend_port}"
# A port another program holds would fail later, deep in a log: say which one now.
for port in "$frontend_port" "$backend_port" "$sim_port" "$prometheus_port"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "fleet: port $port is already in use (another portal, or another program): stop it, or choose other ports with FLEET_FRONTEND_PORT, FLEET_BACKEND_PORT, FLEET_SIM_PORT, FLEET_PROMETHEUS_PORT" >&2
    exit 1
  fi
done
echo "fleet: starting ${FLEET_SIM_CLUSTERS:-3} simulated clusters on https://127.0.0.1:${sim_port}, Prometheus on http://127.0.0.1:${prometheus_port}"
rm -rf "$state/kubeconfigs"
node packages/kube-simulator/bin/kube-simulator \
  --clusters "${FLEET_SIM_CLUSTERS:-3}" --port "$sim_port" --out "$state/kubeconfigs" \
  --rollouts sim-1 --istio none --prometheus-port "$prometheus_port" \
  > "$state/simulator.log" 2>&1 &
sim_pid=$!
ready_pid=""
trap 'kill $ready_pid "$sim_pid" 2>/dev/null || true' EXIT INT TERM
for _ in $(seq 1 100); do
  grep -q '^ready' "$state/simulator.log" 2>/dev/null && break
  kill -0 "$sim_pid" 2>/dev/null || { cat "$state/simulator.log"; echo "fleet: the simulator failed to start" >&2; exit 1; }
  sleep 0.2
done
cat "$state/simulator.log"
grep -q '^ready' "$state/simulator.log" || { echo "fleet: the simulator did not get ready" >&2; exit 1; }
prometheus_url="$(sed -n 's/^prometheus //p' "$state/simulator.log" | head -n 1)"
[ -n "$prometheus_url" ] || { echo "fleet: the simulator printed no Prometheus URL" >&2; exit 1; }
# Every app healthy until told otherwise: the least specific rule, any more specific one wins.
node scripts/lib/sim-request.mjs POST "https://127.0.0.1:${sim_port}/_sim/prometheus/rules" \
  '{"match":{},"value":0.999}' >/dev/null
echo "fleet: Prometheus for release analyses at ${prometheus_url} (every app answers 0.999)"

# Local settings (git-ignored): the simulated fleet, a persistent SQLite and a token for curl.
cat > app-config.local.yaml <<YAML
# Written by scripts/start.sh for local development. Not committed.
app:
  baseUrl: $frontend
backend:
  baseUrl: $backend
  listen:
    port: $backend_port
  cors:
    origin: $frontend
  database:
    client: better-sqlite3
    connection:
      directory: $state/sqlite
  auth:
    externalAccess:
      - type: static
        options:
          token: $(cat "$state/dev-token")
          subject: fleet-dev-cli
fleet:
  discovery:
    kubeconfigDir: $state/kubeconfigs
  health:
    interval: { seconds: 60 }
    # An outage is confirmed once it has lasted this long (default: one interval), short for trying.
    minOutage: { seconds: 10 }
  reconcile:
    interval: { seconds: 15 }
  # The demo only: the guest's group may manage clusters, run health cycles and use the Kubernetes
  # tab's proxy (Fleet's own credentials). app-config.yaml names no cluster admin (fail closed).
  permissions:
    clusterAdmins: [group:default/guests]
  analysis:
    prometheus:
      # The simulator's Prometheus: the only one a release's analysis may query here.
      allowedAddresses: [http://127.0.0.1:${prometheus_port}]
YAML

echo "fleet: portal starting — frontend $frontend, API $backend/api/fleet (token in ${state#$root/}/dev-token); wait for \"fleet: ready\""
# The readiness watch runs beside the portal (in the foreground, so Ctrl-C reaches it) and ends
# with this script.
FLEET_STARTED_MS="$started_ms" node scripts/lib/wait-ready.mjs "$frontend" "$backend" "$state/dev-token" "$$" &
ready_pid=$!
yarn start
