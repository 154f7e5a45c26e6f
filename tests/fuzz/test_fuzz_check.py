"""Fuzzing ``gradguard check`` and ``check --fix`` with hostile files
(harness/fuzz_inputs.py), for the properties of harness/fuzz_check.py.

``GRADGUARD_FUZZ_EXAMPLES`` sets how many inputs each test tries (``bench/fuzz.py`` runs
the same properties much longer).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from harness.fuzz_check import check_property, fix_property
from harness.fuzz_inputs import SOURCES, mutated_source

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("GRADGUARD_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])


@FUZZ
@given(SOURCES)
def test_check_gives_any_bytes_a_status_and_ranges_inside_the_file(
        tmp_path: Path, data: bytes) -> None:
    check_property(data, tmp_path)


@FUZZ
@given(mutated_source())
def test_fix_of_a_mutated_file_parses_touches_only_flagged_lines_and_is_idempotent(
        tmp_path: Path, data: bytes) -> None:
    fix_property(data, tmp_path)
