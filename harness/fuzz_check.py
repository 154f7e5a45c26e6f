"""The properties the fuzz tests (tests/fuzz/test_fuzz_check.py) and ``bench/fuzz.py``
check of ``gradguard check`` and ``check --fix`` on one hostile file.

For any bytes at all: checking the file raises nothing, gives it a status (hazards, or a
GG900 that says why it was not analysed), keeps every range inside the file, and every
output format renders. For a file that parses: ``--fix`` leaves text that parses, changes
only the lines the analysis flagged, and a second run changes nothing.
"""

from __future__ import annotations

import ast
import difflib
from pathlib import Path

from gradguard.analysis.analyze import analyze_source
from gradguard.analysis.hazard import Hazard
from gradguard.checking.workers import check_file
from gradguard.cli.check import project_roots
from gradguard.cli.fixing import fix_run
from gradguard.cli.formats import FORMATTERS, Finding
from gradguard.config import Selection
from gradguard.fixes import fix_of


def lines_of(text: str) -> list[str]:
    """Lines as Python and the LSP count them (\\n, \\r\\n, \\r; nothing else)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def in_bounds(hazard: Hazard, lines: list[str]) -> bool:
    spans = [hazard.span, *(r.span for r in hazard.related if r.path is None)]
    return all(1 <= s.line <= s.end_line <= len(lines) and s.column >= 1 and
               s.end_column >= 1 for s in spans)


def check_property(data: bytes, folder: Path) -> None:
    path = folder / "fuzzed.py"
    path.write_bytes(data)
    result = check_file((str(path), Selection(uncertain=True), project_roots([str(path)])))
    assert result.found or result.error is None
    if result.error is not None:
        assert [hazard.code for _, hazard in result.found] == ["GG900"]
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = None
    for where, hazard in result.found:
        assert where == str(path)
        if text is not None:
            assert in_bounds(hazard, lines_of(text)), hazard
    findings = [Finding(str(path), hazard) for _, hazard in result.found]
    for render in FORMATTERS.values():
        render(findings)


def fix_property(data: bytes, folder: Path) -> None:
    try:
        text = data.decode("utf-8-sig")
        ast.parse(text)
    except (UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return  # covered by the check property: --fix reports it and writes nothing
    path = folder / "fuzzed.py"
    path.write_bytes(data)
    flagged: set[int] = set()
    for hazard in analyze_source(text, Selection(), fix_of=fix_of):
        flagged.update(range(hazard.span.line, hazard.span.end_line + 1))
        for edit in hazard.fix.edits if hazard.fix else ():
            flagged.update(range(edit.span.line, edit.span.end_line + 1))
    fix_run([str(path)], Selection(), diff=False)
    after = path.read_bytes()
    if after == data:
        return
    new_text = after.decode("utf-8-sig")
    ast.parse(new_text)  # a fix never leaves a file that does not parse
    before_lines, after_lines = lines_of(text), lines_of(new_text)
    matcher = difflib.SequenceMatcher(a=before_lines, b=after_lines, autojunk=False)
    for tag, first, last, _, _ in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            assert set(range(first + 1, last + 1)) <= flagged, (tag, first, last)
    fix_run([str(path)], Selection(), diff=False)
    assert path.read_bytes() == after  # a second run changes nothing
