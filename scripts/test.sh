#!/usr/bin/env bash
# Sets up everything the test suite needs (a venv with the test extra, torch pinned to
# the CPU build) and runs it: lint, types, then pytest. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
.venv/bin/ruff check server tests tools bench
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
