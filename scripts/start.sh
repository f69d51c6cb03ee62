#!/usr/bin/env bash
# Installs whatever is missing (Node 22, Yarn, dependencies), starts a simulated fleet of
# kube-simulator clusters whose kubeconfigs Fleet discovers, and runs the portal (backend on
# :7007, frontend on :3000) on SQLite kept in .fleet/sqlite, or on PostgreSQL with FLEET_POSTGRES.
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
#   FLEET_POSTGRES (default unset: SQLite in FLEET_STATE_DIR) a PostgreSQL connection string, e.g.
#     postgresql://postgres@127.0.0.1:5432: the portal keeps its data there, one database per
#     plugin named FLEET_POSTGRES_PREFIX (default fleet_portal_) followed by the plugin's id,
#     created when missing (scripts/test.sh runs the e2e test so, on databases of its own)
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
# The Git host runs Git's own http-backend, which Debian ships in its git package.
git_exec="$(git --exec-path 2>/dev/null || true)"
if [ -z "$git_exec" ] || [ ! -x "$git_exec/git-http-backend" ]; then
  echo "fleet: the example Git host needs git with its git-http-backend (missing${git_exec:+ from $git_exec}): install it with 'sudo apt-get install git' (Debian, Ubuntu)" >&2
  exit 1
fi
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

# The example Git host's repository, built afresh (new commits each start, so the reader's mirrors
# go too), and the component that deploys its own manifests from it.
rm -rf "$state/git" "$state/git-cache"
node packages/git-host/bin/create-inventory-repository "$state/git" >/dev/null
mkdir -p "$state/catalog"
cat > "$state/catalog/inventory.yaml" <<YAML
# Written by scripts/start.sh: the repository it points at is built at each start.
apiVersion: backstage.io/v1alpha1
kind: Component
metadata:
  name: inventory
  description: Keeps stock. Deploys its own manifests from its repository to sim-1 and sim-2.
  annotations:
    backstage.io/source-location: url:$backend/api/githost/inventory.git/tree/main/
    cnp.io/manifests-ref: dir:./deploy
    cnp.io/clusters: sim-1,sim-2
    backstage.io/kubernetes-id: inventory # the Kubernetes tab: the pods Fleet runs
spec:
  type: service
  lifecycle: production
  owner: guests
  system: examples
YAML
echo "fleet: example Git repository at $backend/api/githost/inventory.git (tags v1 and v2)"
catalog_locations="$(node scripts/lib/catalog-locations.mjs "$state/catalog/inventory.yaml")"

# Local settings (git-ignored): the simulated fleet, a persistent SQLite (or FLEET_POSTGRES) and a
# token for curl.
if [ -n "${FLEET_POSTGRES:-}" ]; then
  echo "fleet: the portal keeps its data in PostgreSQL (databases ${FLEET_POSTGRES_PREFIX:-fleet_portal_}<plugin>)"
  database_config="  database:
    client: pg
    connection: '${FLEET_POSTGRES}'
    prefix: ${FLEET_POSTGRES_PREFIX:-fleet_portal_}"
else
  database_config="  database:
    client: better-sqlite3
    connection:
      directory: $state/sqlite"
fi
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
$database_config
  auth:
    externalAccess:
      - type: static
        options:
          token: $(cat "$state/dev-token")
          subject: fleet-dev-cli
auth:
  providers:
    # A second person for the demo (approving the guest's release): this provider trusts the
    # X-Forwarded-User header that an oauth2-proxy in front of the backend would set, and signs in
    # the catalog user it names. Nothing stands in front here, so anyone who reaches the backend
    # could claim any user: for this local demo only, never in app-config.yaml.
    # Carol's token: curl -H 'x-forwarded-user: carol' $backend/api/auth/oauth2Proxy/refresh
    oauth2Proxy:
      signIn:
        resolvers:
          - resolver: forwardedUserMatchingUserEntityName
fleet:
  discovery:
    kubeconfigDir: $state/kubeconfigs
  health:
    interval: { seconds: 60 }
    # An outage is confirmed once it has lasted this long (default: one interval), short for trying.
    minOutage: { seconds: 10 }
  reconcile:
    interval: { seconds: 15 }
  deploy:
    # A rollout that is not done by then is FAILED (and rolled back): short, for trying one that
    # never gets ready (an image tag ending in :broken; default 10 minutes).
    progressDeadline: { seconds: 60 }
  # The demo only: the guest's group may manage clusters, run health cycles and use the Kubernetes
  # tab's proxy (Fleet's own credentials). app-config.yaml names no cluster admin (fail closed).
  permissions:
    clusterAdmins: [group:default/guests]
  analysis:
    prometheus:
      # The simulator's Prometheus: the only one a release's analysis may query here.
      allowedAddresses: [http://127.0.0.1:${prometheus_port}]
  # The example Git host (packages/git-host): the backend serves these repositories and reads them.
  gitHost:
    baseUrl: $backend/api/githost
    cacheDir: $state/git-cache
    serve:
      root: $state/git
# app-config.yaml's catalog locations and the component start.sh generated (a local list replaces
# app-config.yaml's whole, so it is repeated).
$catalog_locations
YAML

echo "fleet: portal starting — frontend $frontend, API $backend/api/fleet (token in ${state#$root/}/dev-token); wait for \"fleet: ready\""
# The readiness watch runs beside the portal (in the foreground, so Ctrl-C reaches it) and ends
# with this script.
FLEET_STARTED_MS="$started_ms" node scripts/lib/wait-ready.mjs "$frontend" "$backend" "$state/dev-token" "$$" &
ready_pid=$!
yarn start
