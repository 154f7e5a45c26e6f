"""Each mechanism's specification in ``tests/mechanisms/``: its invalid cases flagged on
exactly the marked lines, its valid ones left alone."""

from __future__ import annotations

import pytest

from gradguard.analysis.analyze import analyze_source
from tests.mechanisms import backward_hooks, call_shapes, custom_functions
from tests.rulecases import Case

MODULES = (call_shapes, backward_hooks, custom_functions)
INVALID = [(module.__name__.rpartition(".")[2], case) for module in MODULES
           for case in module.INVALID]
VALID = [(module.__name__.rpartition(".")[2], case) for module in MODULES
         for case in module.VALID]


def _id(entry: tuple[str, Case]) -> str:
    return f"{entry[0]}: {entry[1].name}"


@pytest.mark.parametrize("entry", INVALID, ids=_id)
def test_flags_exactly_the_marked_lines(entry: tuple[str, Case]) -> None:
    case = entry[1]
    hazards = analyze_source(case.source)
    assert {(h.span.line, h.code) for h in hazards} == case.expected


@pytest.mark.parametrize("entry", VALID, ids=_id)
def test_stays_silent_on_safe_code(entry: tuple[str, Case]) -> None:
    assert analyze_source(entry[1].source) == []
