"""Top-level blocks: a definition keeps its decorators, however many lines they span."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gradguard.analysis.blocks import resplit_blocks, split_blocks
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


PIECES = ["\n", "\r", "\r\n", "    ", "x = 1", "@dec", "def f():", "class C:", "else:",
          ")", "(", '"""', "'''", "#", "# '''", "  pass", "\f", "模"]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(TEXTS, st.integers(0, 200), st.integers(0, 8), TEXTS)
def test_splitting_again_after_an_edit_equals_splitting_the_new_text(
        old: str, where: int, length: int, inserted: str) -> None:
    start = min(where, len(old))
    new = old[:start] + inserted + old[start + length:]

    assert resplit_blocks(old, split_blocks(old), new) == split_blocks(new)


def test_splitting_again_after_opening_a_string_splits_to_the_end() -> None:
    old = "x = 1\ny = 2\nz = 3\nw = 4\n"
    new = 'x = """\ny = 2\nz = 3\nw = 4\n'

    assert resplit_blocks(old, split_blocks(old), new) == split_blocks(new)
    assert len(split_blocks(new)) == 1
