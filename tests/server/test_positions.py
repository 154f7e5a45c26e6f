"""Code-point columns <-> the client's code units, line ends, and clamping."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types

from gradguard.analysis.hazard import Span
from gradguard.server.positions import (
    EditableLines,
    Encoding,
    LineIndex,
    apply_change,
    column_from_units,
    split_lines,
    units,
)

LINE = 'x = "模型😀"; y'  # CJK: 1 UTF-16 unit, 3 bytes; the emoji: 2 units, 4 bytes


@pytest.mark.parametrize(("encoding", "expected"), [
    ("utf-32", len(LINE)),
    ("utf-16", len(LINE) + 1),
    ("utf-8", len(LINE.encode("utf-8"))),
])
def test_a_line_is_measured_in_the_negotiated_units(encoding: str, expected: int) -> None:
    assert units(LINE, encoding) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_every_column_survives_a_round_trip(encoding: str) -> None:
    for column in range(len(LINE) + 1):
        count = units(LINE[:column], encoding)  # type: ignore[arg-type]
        assert column_from_units(LINE, count, encoding) == column  # type: ignore[arg-type]


def test_a_position_inside_a_surrogate_pair_rounds_down_to_the_emoji() -> None:
    emoji = LINE.index("😀")
    assert column_from_units(LINE, units(LINE[:emoji], "utf-16") + 1, "utf-16") == emoji


def test_a_position_past_the_end_of_a_line_means_its_end() -> None:
    assert column_from_units("abc", 99, "utf-16") == 3


def test_only_newline_carriage_return_and_crlf_end_lines() -> None:
    text = "a\x0cb\u2028c\r\nd\re\nf"
    assert split_lines(text) == ["a\x0cb\u2028c", "d", "e", "f"]
    assert LineIndex(text).line_count == 4


def test_crlf_lines_exclude_the_line_end_so_an_edit_never_splits_it() -> None:
    text = "ab\r\ncd\r\n"
    index = LineIndex(text)
    assert index.line(0) == "ab"
    end_of_line = types.Range(types.Position(0, 2), types.Position(0, 5))  # past the end
    change = types.TextDocumentContentChangePartial(end_of_line, "!")
    assert apply_change(text, index, change, "utf-16") == "ab!\r\ncd\r\n"


def test_an_edit_after_an_emoji_in_utf16_lands_after_it() -> None:
    text = LINE + "\n"
    at = types.Position(0, units(LINE[:LINE.index("😀") + 1], "utf-16"))
    change = types.TextDocumentContentChangePartial(types.Range(at, at), "好")
    assert apply_change(text, LineIndex(text), change, "utf-16") == \
        LINE.replace("😀", "😀好") + "\n"


def test_a_whole_document_change_replaces_the_text() -> None:
    change = types.TextDocumentContentChangeWholeDocument("new")
    assert apply_change("old", LineIndex("old"), change, "utf-8") == "new"


def test_a_span_is_converted_to_a_zero_based_range_in_client_units() -> None:
    index = LineIndex("import torch\n" + LINE + "\n")
    span = Span(2, LINE.index("y") + 1, 2, LINE.index("y") + 2)
    assert index.span_range(span, "utf-8") == types.Range(
        types.Position(1, len(LINE[:-1].encode())), types.Position(1, len(LINE.encode())))


def test_a_span_from_an_older_text_is_clamped_into_the_document() -> None:
    index = LineIndex("a = 1\nb\n")
    stale = Span(2, 4, 9, 30)
    assert index.span_range(stale, "utf-16") == types.Range(
        types.Position(1, 1), types.Position(2, 0))


_PIECES = st.sampled_from(["a", "é", "🙂", "\n", "\r", "\r\n", "\t", " ", "x = 1", ""])


@st.composite
def _edits(draw: st.DrawFn) -> tuple[str, list[types.TextDocumentContentChangeEvent]]:
    text = "".join(draw(st.lists(_PIECES, max_size=12)))
    changes: list[types.TextDocumentContentChangeEvent] = []
    for _ in range(draw(st.integers(1, 8))):
        if draw(st.integers(0, 9)) == 0:
            changes.append(types.TextDocumentContentChangeWholeDocument(
                "".join(draw(st.lists(_PIECES, max_size=6)))))
            continue
        start, end = (types.Position(draw(st.integers(0, 6)), draw(st.integers(0, 6)))
                      for _ in range(2))
        changes.append(types.TextDocumentContentChangePartial(
            types.Range(start, end), "".join(draw(st.lists(_PIECES, max_size=4)))))
    return text, changes


@settings(max_examples=300, deadline=None)
@given(_edits(), st.sampled_from(["utf-8", "utf-16", "utf-32"]))
def test_editing_lines_in_place_gives_the_text_a_whole_rebuild_gives(
        case: tuple[str, list[types.TextDocumentContentChangeEvent]],
        encoding: Encoding) -> None:
    text, changes = case
    lines = EditableLines(text)
    for change in changes:
        text = apply_change(text, LineIndex(text), change, encoding)
        lines.apply(change, encoding)
        assert lines.text == text
