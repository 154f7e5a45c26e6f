"""Top-level blocks: a definition keeps its decorators, however many lines they span."""

from __future__ import annotations

from gradguard.analysis.blocks import split_blocks
from gradguard.analysis.incremental import IncrementalDocument

# As in torchvision's detection models: a decorator call spread over several lines.
MULTI_LINE_DECORATOR = '''import torch


@handle_legacy_interface(
    weights=("pretrained", None),
)
@register_model
def fasterrcnn(weights=None):
    return weights


x = 1
'''


def test_a_multi_line_decorator_stays_with_its_definition() -> None:
    blocks = split_blocks(MULTI_LINE_DECORATOR)

    assert [b.start_line for b in blocks] == [1, 4, 12]
    assert blocks[1].text.startswith("@handle_legacy_interface(")
    assert "def fasterrcnn" in blocks[1].text


def test_valid_code_with_multi_line_decorators_has_no_syntax_errors() -> None:
    document = IncrementalDocument()
    document.update(MULTI_LINE_DECORATOR)

    assert document.errors == []


def test_a_lone_decorator_line_still_takes_only_the_next_statement() -> None:
    source = "@\nx = 1\ny = 2\n"

    assert [b.start_line for b in split_blocks(source)] == [1, 3]
