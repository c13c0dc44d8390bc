#!/usr/bin/env bash
# The one entry point: installs and builds what is missing, then runs a probe, the tests, or any
# CLI command.  ./run.sh p1 · ./run.sh test · ./run.sh diff a b · ./run.sh --help
set -euo pipefail
cd "$(dirname "$0")"

log() { printf 'run.sh: %s\n' "$*" >&2; }

need_node() {
  if ! command -v node >/dev/null 2>&1; then
    log "Node.js 20 or newer is required and was not found on PATH"; exit 2
  fi
  local major; major=$(node -p 'process.versions.node.split(".")[0]')
  if [ "$major" -lt 20 ]; then log "Node.js 20 or newer is required (found $(node --version))"; exit 2; fi
}

# Reinstall when the lockfile changed since the last install (npm writes its own copy into node_modules).
install_deps() {
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    log "installing dependencies (npm ci) …"
    npm ci --no-audit --no-fund --loglevel=error >&2
  fi
}

# Rebuild when any source, or the build config, is newer than the last build.
build() {
  local stamp=dist/.build-stamp
  if [ ! -f "$stamp" ] || [ -n "$(find src tsconfig.json package-lock.json -newer "$stamp" -print -quit)" ]; then
    log "building (tsc) …"
    rm -rf dist
    npx --no-install tsc -p tsconfig.json
    touch "$stamp"
  fi
}

need_node
install_deps
build

case "${1:-}" in
  test)
    shift
    exec npx --no-install vitest run "$@"
    ;;
  "" )
    exec node dist/cli/main.js --help
    ;;
  *)
    if [ -f "probes/$1.yaml" ]; then
      exec node dist/cli/main.js run "$@"
    fi
    exec node dist/cli/main.js "$@"
    ;;
esac
