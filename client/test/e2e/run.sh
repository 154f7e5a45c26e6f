#!/usr/bin/env bash
# The VS Code end-to-end test: installs what it needs (cached, see setup.sh), builds the
# .vsix (`npm ci && npm run package` at the top level), makes sure an interpreter with
# GradGuard exists, and runs vscode.e2e.mjs in code-server + headless chromium.
#
#   bash client/test/e2e/run.sh [--no-build]
#
#   GRADGUARD_E2E_CACHE   install folder (default ~/.cache/gradguard-code-server)
#   GRADGUARD_E2E_PYTHON  interpreter with gradguard (default: .venv/bin/python of the
#                         repository, else a venv made in the cache folder)
#   GRADGUARD_E2E_SCENARIOS  comma-separated subset of trusted,restricted,missing
#   GRADGUARD_E2E_KEEP=1  keep the temporary workspace and profiles
#
# Screenshots and logs: test-output/vscode-e2e/ (and test-output/vscode-e2e.png).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
export GRADGUARD_E2E_CACHE="${GRADGUARD_E2E_CACHE:-$HOME/.cache/gradguard-code-server}"
BUILD=1
for arg in "$@"; do
  case "$arg" in
    --no-build) BUILD=0 ;;
    *) echo "usage: $0 [--no-build]" >&2; exit 2 ;;
  esac
done
t0=$(date +%s)
log() { printf '[e2e run %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

bash "$HERE/setup.sh"
t_setup=$(date +%s)

cd "$REPO"
if [ "$BUILD" = 1 ]; then
  log "npm ci && npm run package"
  npm ci --no-audit --no-fund --loglevel=error
  npm run package --silent
fi
# This machine's package (npm run package builds one per target).
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) TARGET=linux-x64 ;;
  Linux-aarch64) TARGET=linux-arm64 ;;
  Darwin-x86_64) TARGET=darwin-x64 ;;
  Darwin-arm64) TARGET=darwin-arm64 ;;
  *) echo "no VS Code target for $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac
VSIX="$(ls -t "$REPO"/dist/gradguard-"$TARGET"-*.vsix 2>/dev/null | head -1 || true)"
[ -n "$VSIX" ] || { echo "no dist/gradguard-$TARGET-*.vsix: run npm run package" >&2; exit 1; }
export GRADGUARD_E2E_VSIX="$VSIX"
t_build=$(date +%s)

has_gradguard() { (cd / && "$1" -c 'import gradguard' >/dev/null 2>&1); }
PY="${GRADGUARD_E2E_PYTHON:-$REPO/.venv/bin/python}"
if ! has_gradguard "$PY"; then
  PY="$GRADGUARD_E2E_CACHE/venv/bin/python"
  if ! has_gradguard "$PY"; then
    log "making a venv with gradguard in $GRADGUARD_E2E_CACHE/venv"
    python3 -m venv "$GRADGUARD_E2E_CACHE/venv"
    "$PY" -m pip install --quiet -e "$REPO"
  fi
fi
export GRADGUARD_E2E_PYTHON="$PY"
# For the "missing" scenario: a fresh venv without gradguard (the test installs it there
# through the extension's "Install in terminal").
SCENARIOS="${GRADGUARD_E2E_SCENARIOS:-trusted,restricted,missing}"
export GRADGUARD_E2E_SCENARIOS="$SCENARIOS"
if [[ ",$SCENARIOS," == *,missing,* ]]; then
  EMPTY="$GRADGUARD_E2E_CACHE/empty-venv"
  rm -rf "$EMPTY"
  python3 -m venv "$EMPTY"
  export GRADGUARD_E2E_EMPTY_PYTHON="$EMPTY/bin/python"
  # What that install installs: a copy of this checkout's package (pip builds in the
  # source folder, so not in the repository itself).
  SRC="$GRADGUARD_E2E_CACHE/gradguard-src"
  rm -rf "$SRC" && mkdir -p "$SRC"
  cp "$REPO/pyproject.toml" "$REPO/README.md" "$SRC/"
  (cd "$REPO" && tar --exclude=__pycache__ --exclude='*.egg-info' -cf - server) | tar -C "$SRC" -xf -
  export GRADGUARD_E2E_INSTALL_SPEC="$SRC"
fi
export GRADGUARD_E2E_OUTPUT="$REPO/test-output/vscode-e2e"
mkdir -p "$REPO/test-output"

# code-server needs Node 24; put it first on PATH for the test and everything it starts.
export PATH="$GRADGUARD_E2E_CACHE/node24/node_modules/.bin:$PATH"
log "running the test with $(node --version), interpreter $PY"
status=0
node "$HERE/vscode.e2e.mjs" || status=$?
t_end=$(date +%s)
log "timings: setup $((t_setup - t0)) s, build $((t_build - t_setup)) s, test $((t_end - t_build)) s, total $((t_end - t0)) s"
exit $status
