"""Fuzzing a real ``gradguard serve`` over stdio with hostile edit sequences: the
property of harness/fuzz_server.py (the server up, every range in bounds, the final
text's diagnostics equal to those of the same text opened fresh)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from harness.fuzz_server import edit_sequence_property, sessions
from harness.stdio import StdioClient

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("GRADGUARD_FUZZ_EXAMPLES", "40")) // 2
FUZZ = settings(max_examples=max(EXAMPLES, 1), deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def server() -> Iterator[StdioClient]:
    client = StdioClient()
    yield client
    client.close()


@FUZZ
@given(sessions())
def test_hostile_edit_sequences_keep_the_server_up_in_bounds_and_equal_to_fresh(
        server: StdioClient, session: tuple[str, str, list[tuple[str, Any]]]) -> None:
    edit_sequence_property(server, session)
