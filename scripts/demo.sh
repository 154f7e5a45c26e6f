#!/usr/bin/env bash
# Installs GradGuard (no torch needed for static analysis) and checks the bundled
# examples: the two seed reports as runnable scripts, and examples/fixed/, the same
# scripts as `gradguard check --fix` leaves them.
#
# `check` exits 1 when it finds hazards, which is what the demo is for: the seeds hold
# one each. So this script exits 0 when `check` exits 1, and fails otherwise: with
# `check`'s own status, or 1 when `check` found nothing (the seeds' hazards went unseen).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet -e .
status=0
.venv/bin/gradguard check examples/ "$@" || status=$?
case "$status" in
    1) echo "demo: ran as intended. check exited 1: hazards found (the seeds' two)." \
            "It exits 0 when nothing is found, 2 on a usage error, 3 when a file could" \
            "not be analysed (README, \"Exit status\")." >&2
       exit 0 ;;
    0) echo "demo: FAILED. check exited 0: it found nothing, but each seed holds a hazard." >&2
       exit 1 ;;
    *) echo "demo: FAILED. check exited $status (2: usage error, 3: a file could not be" \
            "analysed; README, \"Exit status\")." >&2
       exit "$status" ;;
esac
