"""Each rule on the smallest code that triggers it and the closest code that must not."""

from __future__ import annotations

import pytest

from gradguard.analysis.analyze import analyze_source
from gradguard.config import Selection
from gradguard.rules import UNREACHED_SUFFIX
from tests.rulecases import Case
from tests.rules import INVALID as RULE_INVALID
from tests.rules import QUIET as RULE_QUIET
from tests.rules import VALID as RULE_VALID
from tests.rules import gg001, gg004

INVALID = RULE_INVALID
VALID = RULE_VALID


@pytest.mark.parametrize("case", INVALID, ids=lambda c: c.name)
def test_flags_exactly_the_marked_lines(case: Case) -> None:
    hazards = analyze_source(case.source)
    assert {(h.span.line, h.code) for h in hazards} == case.expected
    assert {h.severity for h in hazards} == {case.severity}


@pytest.mark.parametrize("case", VALID, ids=lambda c: c.name)
def test_stays_silent_on_safe_code(case: Case) -> None:
    assert analyze_source(case.source) == []


@pytest.mark.parametrize("case", RULE_QUIET, ids=lambda c: c.name)
def test_a_save_no_loss_reaches_is_an_uncertain_warning_only(case: Case) -> None:
    assert analyze_source(case.source, Selection()) == []
    hazards = analyze_source(case.source, Selection(uncertain=True))
    assert hazards and {h.severity for h in hazards} == {"warning"}
    assert all(h.message.endswith(UNREACHED_SUFFIX) for h in hazards)


def test_gg001_message_names_both_ops_and_the_saving_line() -> None:
    case = gg001.INVALID[0]
    [hazard] = analyze_source(case.source)
    assert hazard.message == (
        "`y.relu_()` overwrites the output of `torch.sigmoid` at line 3, "
        "which sigmoid's backward needs"
    )
    assert [r.span.line for r in hazard.related] == [3]
    assert hazard.confidence == "high"


def test_gg004_names_each_layer_whose_saved_weight_the_step_overwrites() -> None:
    (case,) = [c for c in gg004.INVALID if c.name.startswith("GG004: optimizer.step()")]
    [hazard] = analyze_source(case.source)
    assert "`nn.Linear(4, 8)`" in hazard.message and "`nn.Linear(8, 1)`" in hazard.message
    assert [r.message for r in hazard.related] == [
        "`nn.Linear(4, 8)` saves its second operand here for backward",
        "`nn.Linear(8, 1)` saves its second operand here for backward",
    ]
