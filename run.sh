#!/usr/bin/env bash
# The one entry point: installs and builds what is missing, then runs a probe, the tests, or any
# CLI command.  ./run.sh p1 · ./run.sh test · ./run.sh diff a b · ./run.sh --help
set -euo pipefail
# How the user started this script, from their folder, so the CLI's hints (`see it: ./run.sh report p1`)
# can be typed as printed. A $0 without a slash is `bash run.sh` (a PATH lookup hands over the full path).
case "$0" in */*) INVOKED_AS=$0 ;; *) INVOKED_AS=./$0 ;; esac
# The user's folder, before leaving it: the CLI runs there, so the paths a user types, the probes and
# baselines of their repository and `record`'s command are theirs, not the checkout's.
CALLER_DIR=$PWD
# The checkout is where this script is; a parameter expansion, not `dirname`, saves a process per call.
case "$0" in */*) cd "${0%/*}" ;; esac
CHECKOUT=$PWD

log() { printf 'run.sh: %s\n' "$*" >&2; }

NODE_MAJOR=0
NODE_VERSION=
need_node() {
  if ! command -v node >/dev/null 2>&1; then
    log "Node.js 20 or newer is required and was not found on PATH"; exit 2
  fi
  # `node --version` answers before the runtime boots; `node -p` would cost a whole Node start-up.
  NODE_VERSION=$(node --version); NODE_MAJOR=${NODE_VERSION#v}; NODE_MAJOR=${NODE_MAJOR%%.*}
  if [ "$NODE_MAJOR" -lt 20 ]; then log "Node.js 20 or newer is required (found $NODE_VERSION)"; exit 2; fi
}

# Reinstall when the lockfile changed since the last install (npm writes its own copy into node_modules).
# better-sqlite3 has no downloadable prebuilt binary here, so its native addon is compiled once per
# version and Node ABI and kept in the user's cache; a fresh machine compiles it, later clones reuse it.
# Each Node's copy sits in node_modules beside the others (CI runs the suite on 20 and on 22), in the
# folder better-sqlite3's loader (the `bindings` package) searches for the running Node's ABI:
# lib/binding/node-v<ABI>-<platform>-<arch>/. So switching Node swaps no file a running process has
# loaded. A copy is written under a temporary name and renamed; the stamp naming the Node it was placed
# for is written after it, so an interrupted set-up is redone by the next command, and the check costs
# no Node start-up.
ADDON_STAMPS=node_modules/.better-sqlite3-placed
# Where a compile leaves its addon: `bindings` looks there first, for every Node, so it never stays.
ADDON_BUILD=node_modules/better-sqlite3/build
install_deps() {
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    addon_paths
    if [ -f "$ADDON_CACHED" ]; then
      log "installing dependencies (npm ci) …"
    else
      log "first set-up on this machine: installing dependencies (npm ci), then compiling the SQLite addon" \
        "(better-sqlite3 $ADDON_VERSION) from C++, as no prebuilt one can be downloaded here. This takes a few" \
        "minutes and prints little; it happens once per machine and Node version."
    fi
    npm ci --no-audit --no-fund --loglevel=error --ignore-scripts >&2
    place_addon
  elif [ ! -f "$ADDON_STAMPS/$NODE_VERSION" ] || [ -e "$ADDON_BUILD" ]; then
    addon_paths
    place_addon
  fi
}

# The addon's version (read from the lockfile, so the user hears before npm ci's own silence whether a
# compile follows it), the running Node's ABI, where its compiled copy is kept and where it is loaded from.
addon_paths() {
  local abi
  ADDON_VERSION=$(node -p 'require("./package-lock.json").packages["node_modules/better-sqlite3"].version')
  abi=$(node -p 'process.versions.modules + "-" + process.platform + "-" + process.arch')
  ADDON=node_modules/better-sqlite3/lib/binding/node-v$abi/better_sqlite3.node
  ADDON_CACHED="${XDG_CACHE_HOME:-$HOME/.cache}/payload-probe/better_sqlite3-$ADDON_VERSION-$abi.node"
}

# A file written whole under a temporary name beside its place, then renamed over it: a process that
# has the old one loaded keeps it (a rename replaces the name, not the file it mapped).
copy_then_rename() {
  mkdir -p "$(dirname "$2")" && cp "$1" "$2.tmp.$$" && mv -f "$2.tmp.$$" "$2"
}

place_addon() {
  [ -f "$ADDON_CACHED" ] || compile_addon
  copy_then_rename "$ADDON_CACHED" "$ADDON"
  # What a compile (or a run.sh before addons sat side by side) left where every Node would load it.
  rm -rf "$ADDON_BUILD"
  mkdir -p "$ADDON_STAMPS" && : >"$ADDON_STAMPS/$NODE_VERSION"
}

compile_addon() {
  log "compiling better-sqlite3 $ADDON_VERSION for Node $NODE_VERSION …"
  # Against the running Node's own headers when it ships them (the Node 22 that pi's install brings
  # does); npm's configured nodedir may hold another version's.
  local prefix
  prefix=$(command -v node); prefix=${prefix%/bin/node}
  if [ -f "$prefix/include/node/node.h" ]; then
    npm_config_nodedir=$prefix npm rebuild better-sqlite3 --loglevel=error >&2
  else
    npm rebuild better-sqlite3 --loglevel=error >&2
  fi
  copy_then_rename "$ADDON_BUILD/Release/better_sqlite3.node" "$ADDON_CACHED"
}

# Rebuild when any source, or the build config, is newer than the last build.
build() {
  local stamp=dist/.build-stamp
  if [ ! -f "$stamp" ] || [ -n "$(find src tsconfig.json tsconfig.browser.json package-lock.json scripts/bundle.mjs -newer "$stamp" -print -quit)" ]; then
    log "building (tsc) …"
    rm -rf dist
    npx --no-install tsc -p tsconfig.json
    # The view page's browser code (src/analysis/view/browser/) is type-checked on its own, against the
    # DOM and without Node's types; esbuild bundles it below without checking types.
    npx --no-install tsc -p tsconfig.browser.json
    # The CLI and stub servers start from bundles (scripts/bundle.mjs says why); the rest of dist/ stays tsc's.
    node scripts/bundle.mjs
    touch "$stamp"
  fi
}

# Node before 22 parses the NODE_EXTRA_CA_CERTS file while it starts (about 80 ms, at every start),
# whether or not the process opens a TLS connection. Past the install (npm may need it), the CLI and
# the tests start with it under another name; the CLI puts it back for what it starts and trusts it
# itself on its first https connection (src/processes/extra-ca-certs.ts).
defer_extra_ca_certs() {
  if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ "$NODE_MAJOR" -lt 22 ]; then
    export PAYLOAD_PROBE_EXTRA_CA_CERTS="$NODE_EXTRA_CA_CERTS"
    unset NODE_EXTRA_CA_CERTS
  fi
}

need_node
install_deps
build
defer_extra_ca_certs

case "${1:-}" in
  test)
    shift
    # tsconfig.json builds src/ only; the tests are type-checked here, before they run.
    log "type-checking src/ and test/ …"
    npx --no-install tsc -p tsconfig.test.json
    exec npx --no-install vitest run "$@"
    ;;
  lint)
    # Biome: formatting (width 120) and lint rules from biome.json; `--write` fixes what it can.
    shift
    if [ "${1:-}" = "--write" ]; then exec npx --no-install biome check --write .; fi
    exec npx --no-install biome ci .
    ;;
  "" )
    exec node dist/cli/main.js --help
    ;;
  *)
    # Only the CLI is told how it was started: vitest and the processes it starts must not inherit it.
    export PAYLOAD_PROBE_INVOKED_AS="$INVOKED_AS"
    # Back in the user's folder; the CLI finds its own files from where its script is.
    cd "$CALLER_DIR"
    # A first word that names a probe (the user's probes/ first, then the checkout's) runs it; any
    # other goes to the CLI's commands, which name the nearest probe.
    if [ -f "probes/$1.yaml" ] || [ -f "$CHECKOUT/probes/$1.yaml" ]; then
      exec node "$CHECKOUT/dist/cli/main.js" run "$@"
    fi
    exec node "$CHECKOUT/dist/cli/main.js" "$@"
    ;;
esac
