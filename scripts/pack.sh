#!/usr/bin/env bash
# Packs every publishable Fleet package (each workspace whose package.json has a
# `publishConfig`: the plugins/ packages) into dist-packages/ as npm tarballs, the way they would
# be published: declarations from `yarn tsc`, `backstage-cli package build`, then
# `yarn workspace <pkg> pack`, whose prepack/postpack (`backstage-cli package prepack|postpack`)
# point main/types/exports at dist/ and turn `workspace:^` ranges into real versions.
# An app installs them with `yarn add <name>@file:<tarball>` (docs/install-in-your-app.md).
#   scripts/pack.sh [package name...]   (default: all of them)
#   FLEET_PACK_DIR (default dist-packages)  FLEET_PACK_SKIP_TSC=1: reuse dist-types/ as it is
set -euo pipefail
started_s="$(date +%s)"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/toolchain.sh
# On a fresh clone: say what to run rather than fail inside yarn tsc.
[ -d node_modules ] || {
  echo "pack: Fleet's dependencies are not installed: run 'source scripts/toolchain.sh && fleet_install' first" >&2
  exit 1
}
root="$(pwd)"
out="${FLEET_PACK_DIR:-$root/dist-packages}"
case "$out" in /*) ;; *) out="$root/$out" ;; esac
mkdir -p "$out"

# name<TAB>location of every workspace with a publishConfig
mapfile -t packages < <(yarn workspaces list --json | node -e '
  const fs = require("fs");
  const lines = fs.readFileSync(0, "utf8").trim().split("\n").map(l => JSON.parse(l));
  for (const { name, location } of lines) {
    if (location === ".") continue;
    const pkg = JSON.parse(fs.readFileSync(`${location}/package.json`, "utf8"));
    const wanted = process.argv.slice(1);
    if (pkg.publishConfig && (!wanted.length || wanted.includes(name))) console.log(`${name}\t${location}`);
  }' "$@")
[ "${#packages[@]}" -gt 0 ] || { echo "pack: no workspace with a publishConfig matches ${*:-}" >&2; exit 1; }
[ "$#" -eq 0 ] || [ "${#packages[@]}" -eq "$#" ] || { echo "pack: not every name given is a workspace with a publishConfig: $*" >&2; exit 1; }

if [ "${FLEET_PACK_SKIP_TSC:-0}" != 1 ]; then
  echo "pack: yarn tsc (declarations for the builds)"
  yarn tsc
fi

for entry in "${packages[@]}"; do
  name="${entry%%$'\t'*}"
  location="${entry#*$'\t'}"
  echo "pack: building $name ($location)"
  (cd "$location" && yarn backstage-cli package build)
done

for entry in "${packages[@]}"; do
  name="${entry%%$'\t'*}"
  version="$(node -p "require('./${entry#*$'\t'}/package.json').version")"
  file="$out/$(echo "${name#@}" | tr '/' '-')-${version}.tgz"
  yarn workspace "$name" pack --out "$file" >/dev/null
  # What an app gets must not point into the workspace.
  if tar -xOzf "$file" package/package.json | grep -q '"workspace:'; then
    echo "pack: $file still has a workspace: range" >&2
    exit 1
  fi
  echo "pack: $file"
done
echo "pack: ${#packages[@]} packages in $out in $(($(date +%s) - started_s)) s"
