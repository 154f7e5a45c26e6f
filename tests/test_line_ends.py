"""Lines end at "\\n", "\\r\\n" and "\\r" only, as in Python's tokenizer and in editors.

``str.splitlines`` also breaks at form feeds, U+2028 and a few other characters; using
it on source text shifts every later line by one per such character.
"""

from __future__ import annotations

import pytest

from gradguard.analysis import analyze_source
from gradguard.analysis.blocks import split_blocks
from gradguard.analysis.incremental import IncrementalDocument

WRITE_AFTER_SAVE = """import torch
{line2}
x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
y.relu_(){comment}
"""

ODD_CHARACTERS = ["s = 1  # page break \x0c", "s = 'a\u2028b'", "s = 1  # \x1c\x1d\x1e\x85\u2029"]


@pytest.mark.parametrize("line2", ODD_CHARACTERS)
def test_blocks_start_at_the_line_python_counts(line2: str) -> None:
    source = WRITE_AFTER_SAVE.format(line2=line2, comment="")
    assert [b.start_line for b in split_blocks(source)] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("line2", ODD_CHARACTERS)
def test_incremental_findings_are_at_the_line_of_the_write(line2: str) -> None:
    source = WRITE_AFTER_SAVE.format(line2=line2, comment="")
    (hazard,) = IncrementalDocument().update(source)
    assert hazard.span.line == 5


@pytest.mark.parametrize("line2", ODD_CHARACTERS)
def test_incremental_analysis_honours_a_suppression_after_such_a_line(line2: str) -> None:
    source = WRITE_AFTER_SAVE.format(line2=line2, comment="  # gradguard: ignore[GG001]")
    assert IncrementalDocument().update(source) == []


def test_carriage_return_alone_ends_a_line() -> None:
    source = WRITE_AFTER_SAVE.format(line2="", comment="").replace("\n", "\r")
    assert [b.start_line for b in split_blocks(source)] == [1, 3, 4, 5]
    (hazard,) = IncrementalDocument().update(source)
    assert hazard.span.line == 5


def test_gradguard_check_honours_a_suppression_after_a_line_separator() -> None:
    source = WRITE_AFTER_SAVE.format(line2="s = 'a\u2028b'",
                                     comment="  # gradguard: ignore[GG001]")
    assert analyze_source(source) == []
