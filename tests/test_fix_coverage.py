"""Fix coverage on the accuracy corpus (issue 17): at least 95% of the hazards
``gradguard check`` reports on tests/corpus carry a fix, and every offered fix, applied
by ``check --fix`` to a copy of its case and run under torch, runs backward and computes
the same first loss as the original or as the maintainers' fix. The measuring is
tools/fix_coverage.py, which ``python -m bench.fix_coverage`` prints.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

from tools.corpus import Findings, load_manifest  # noqa: E402
from tools.fix_coverage import Coverage, Verification, measure, verify  # noqa: E402

CASES = load_manifest()
BY_FILE = {case.file: case for case in CASES}


@functools.cache
def measured() -> tuple[Coverage, Findings]:
    return measure(CASES)


def verified(file: str) -> Verification | None:
    """One case's fixes applied and judged: each test pays for its own case (the tests
    run spread over CI's cores, and one test's time limit never covers the whole corpus)."""
    pytest.importorskip("torch")
    _, findings = measured()
    return verify(BY_FILE[file], findings)


def test_at_least_95_percent_of_the_reported_hazards_carry_a_fix() -> None:
    coverage, _ = measured()
    assert not coverage.errors, coverage.errors
    unfixed = "\n".join(f"{u.file}:{u.line} {u.code}" for u in coverage.unfixed)
    assert coverage.percent >= 95.0, f"{coverage.percent:.1f}%; without a fix:\n{unfixed}"


def test_a_step_left_without_a_fix_says_where_it_belongs() -> None:
    coverage, _ = measured()
    for hazard in coverage.unfixed:
        if hazard.code == "GG004":
            assert "call it after the backward at" in hazard.message or \
                "runs again after it" in hazard.message, hazard


FIXED = [c.file for c in sorted(CASES, key=lambda c: c.file) if c.kind == "positive"]


@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.parametrize("file", FIXED)
def test_every_fix_applied_runs_backward_and_computes_the_same_first_loss(file: str) -> None:
    result = verified(file)
    if result is None:
        pytest.skip("no fix offered in this case")
    assert result.ok, result.problem
