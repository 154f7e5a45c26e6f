#!/usr/bin/env bash
# Installs GradGuard (no torch needed for static analysis) and checks the bundled
# examples: the two seed reports as runnable scripts. Exit status 1 means hazards found.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet -e .
.venv/bin/gradguard check examples/ "$@"
