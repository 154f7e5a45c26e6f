#!/usr/bin/env bash
# Installs what the end-to-end test needs, once: Debian's chromium and libkrb5-dev,
# Node 24 (npm package `node@24`, which code-server's native modules are built for),
# code-server (a real VS Code build, from npm) and playwright-core. Idempotent: a
# finished step leaves a stamp file and is skipped next time.
#
#   GRADGUARD_E2E_CACHE  where to install (default ~/.cache/gradguard-code-server)
set -euo pipefail

CODE_SERVER_VERSION=4.139.1
NODE_MAJOR=24
PLAYWRIGHT_VERSION=1.64.1
CACHE="${GRADGUARD_E2E_CACHE:-$HOME/.cache/gradguard-code-server}"
mkdir -p "$CACHE"

log() { printf '[e2e setup %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# 1. Debian packages: the browser and the Kerberos headers code-server's native build needs.
if ! command -v chromium >/dev/null || ! dpkg -s libkrb5-dev >/dev/null 2>&1; then
  log "apt-get install chromium libkrb5-dev"
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium libkrb5-dev >/dev/null
fi

# 2. Node 24 from the npm registry (the `node` package ships the official binary).
if [ ! -f "$CACHE/node$NODE_MAJOR/.done" ]; then
  log "npm install node@$NODE_MAJOR"
  rm -rf "$CACHE/node$NODE_MAJOR"
  mkdir -p "$CACHE/node$NODE_MAJOR"
  (cd "$CACHE/node$NODE_MAJOR" && npm init -y >/dev/null &&
     npm install --no-audit --no-fund --loglevel=error "node@$NODE_MAJOR" >/dev/null)
  "$CACHE/node$NODE_MAJOR/node_modules/.bin/node" --version >/dev/null
  touch "$CACHE/node$NODE_MAJOR/.done"
fi
NODE_BIN="$CACHE/node$NODE_MAJOR/node_modules/.bin"

# 3. code-server, installed and built with Node 24 first on PATH.
if [ ! -f "$CACHE/code-server/.done-$CODE_SERVER_VERSION" ]; then
  log "npm install code-server@$CODE_SERVER_VERSION (about 600 MB, several minutes)"
  rm -rf "$CACHE/code-server"
  mkdir -p "$CACHE/code-server"
  # FORCE_NODE_VERSION: code-server's postinstall check has been seen to read v20 even
  # with Node 24 first on PATH (which is what builds and runs it); it only skips that check.
  (cd "$CACHE/code-server" && export PATH="$NODE_BIN:$PATH" FORCE_NODE_VERSION=$NODE_MAJOR &&
     npm init -y >/dev/null &&
     npm install --no-audit --no-fund --loglevel=error --unsafe-perm \
       "code-server@$CODE_SERVER_VERSION" >/dev/null)
  touch "$CACHE/code-server/.done-$CODE_SERVER_VERSION"
fi

# 4. playwright-core (no browser download: it drives Debian's chromium).
if [ ! -f "$CACHE/driver/.done-$PLAYWRIGHT_VERSION" ]; then
  log "npm install playwright-core@$PLAYWRIGHT_VERSION"
  rm -rf "$CACHE/driver"
  mkdir -p "$CACHE/driver"
  (cd "$CACHE/driver" && npm init -y >/dev/null &&
     npm install --no-audit --no-fund --loglevel=error "playwright-core@$PLAYWRIGHT_VERSION" >/dev/null)
  touch "$CACHE/driver/.done-$PLAYWRIGHT_VERSION"
fi
log "ready in $CACHE"
