"""Lines end at "\\n", "\\r\\n" and "\\r" only, as in Python's tokenizer and in editors.

``str.splitlines`` also breaks at form feeds, U+2028 and a few other characters; using
it on source text shifts every later line by one per such character. The analysis, the
fixes and ``gradguard check --fix`` on disk (which keeps CRLF, CR and a BOM) all count
lines as ``gradguard.text`` does.
"""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import pytest

from gradguard.analysis.analyze import analyze_source
from gradguard.analysis.blocks import split_blocks
from gradguard.analysis.hazard import Span, TextEdit
from gradguard.analysis.incremental import IncrementalDocument
from gradguard.fixes import (
    FixRefused,
    apply_checked,
    apply_edits,
    changes_only_edited_lines,
    fix_text,
)
from gradguard.text import BOM

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


# Fixes: the edit lands where the analysis meant it, whatever the text's line breaks.

CLONE_BEFORE_WRITE = """import torch
{line2}
x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
y[0] = 1
y.sum().backward()
"""
CLONED = """import torch
{line2}
x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
y = y.clone()
y[0] = 1
y.sum().backward()
"""
IN_COMMENTS_AND_STRINGS = [f"s = 1  # a{odd}b" for odd in "\u2028\u2029\x0c\x85"] + \
    [f"s = 'a{odd}b'" for odd in "\u2028\u2029\x0c\x85"]


@pytest.mark.parametrize("line2", IN_COMMENTS_AND_STRINGS, ids=ascii)
def test_a_fix_lands_on_the_line_of_the_write_after_an_odd_character(line2: str) -> None:
    result = fix_text(CLONE_BEFORE_WRITE.format(line2=line2))
    assert (result.text, result.fixed, result.error) == (CLONED.format(line2=line2), 1, None)


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["CRLF", "CR"])
def test_a_fix_keeps_the_texts_own_line_breaks(newline: str) -> None:
    source = CLONE_BEFORE_WRITE.format(line2="s = 1").replace("\n", newline)
    result = fix_text(source)
    assert result.text == CLONED.format(line2="s = 1").replace("\n", newline)


def test_a_fix_keeps_a_byte_order_mark() -> None:
    result = fix_text(BOM + CLONE_BEFORE_WRITE.format(line2="s = 1"))
    assert result.text == BOM + CLONED.format(line2="s = 1")


def test_a_result_that_changed_a_line_no_edit_was_on_is_caught() -> None:
    source = CLONE_BEFORE_WRITE.format(line2="s = 1  # a\u2028b")
    before_the_write = TextEdit(Span(5, 1, 5, 1), "y = y.clone()\n")
    # What offsets from str.splitlines made of it: the clone one line early, before line 4.
    one_line_early = source.replace("y = torch.sigmoid", "y = y.clone()\ny = torch.sigmoid")

    assert changes_only_edited_lines(source, apply_edits(source, [before_the_write]),
                                     [before_the_write])
    assert not changes_only_edited_lines(source, one_line_early, [before_the_write])


def test_an_edit_that_would_not_parse_is_refused() -> None:
    source = CLONE_BEFORE_WRITE.format(line2="s = 1")
    with pytest.raises(FixRefused):
        apply_checked(source, [TextEdit(Span(5, 1, 5, 9), "y[0] = (")])


# `gradguard check --fix` on disk.

def _fix(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gradguard", "check", "--fix", path.name],
                          cwd=path.parent, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"], ids=["", "BOM"])
def test_check_fix_keeps_line_breaks_and_bom_and_only_touches_the_fixed_line(
        tmp_path: Path, newline: str, bom: bytes) -> None:
    path = tmp_path / "model.py"
    source = CLONE_BEFORE_WRITE.format(line2="s = 'a\u2028b'  # \x0c\x85")
    path.write_bytes(bom + source.replace("\n", newline).encode("utf-8"))

    done = _fix(path)

    assert done.returncode == 0, done.stderr
    expected = CLONED.format(line2="s = 'a\u2028b'  # \x0c\x85").replace("\n", newline)
    assert path.read_bytes() == bom + expected.encode("utf-8")


def test_check_fix_replaces_the_file_atomically_keeping_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "model.py"
    path.write_text(CLONE_BEFORE_WRITE.format(line2="s = 1"), encoding="utf-8")
    path.chmod(0o640)
    inode = path.stat().st_ino

    assert _fix(path).returncode == 0

    assert path.read_text(encoding="utf-8") == CLONED.format(line2="s = 1")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert path.stat().st_ino != inode  # a new file renamed over the old one
    assert [p.name for p in tmp_path.iterdir()] == ["model.py"]  # no temporary left
