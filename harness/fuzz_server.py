"""The property the fuzz test (tests/fuzz/test_fuzz_server.py) and ``bench/fuzz.py`` check
of a real ``gradguard serve`` over stdio, given hostile edit sequences.

Each example opens a document (a corpus file), sends random incremental changes (ranges
inside the text, past a line's end, past the last line, reversed), whole-text
replacements, changes to documents never opened, and code-action requests at any
position, then checks: the server is up and answered every request, every range it
sent for the final version lies inside the text (positions past the end are clamped
to it, as the server does), and when the final text parses its diagnostics equal those
of the same text opened fresh.
"""

from __future__ import annotations

import ast
import re
from itertools import count
from typing import Any

from hypothesis import strategies as st

from harness.fuzz_inputs import FRAGMENTS, SEED_TEXTS, deep_line
from harness.stdio import StdioClient

_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")
_numbers = count()


def split(text: str) -> list[str]:
    """Lines with their ends, by the LSP's rules (\\n, \\r\\n, \\r)."""
    found = _LINES.findall(text)
    return found[:-1] if len(found) > 1 and found[-1] == "" else found


def units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def content(line: str) -> str:
    return line.rstrip("\r\n")


def offset(text: str, line: int, character: int) -> int:
    """The offset of a UTF-16 position, clamped into the text like the server does."""
    lines = split(text)
    if line >= len(lines):
        return len(text)
    start = sum(len(item) for item in lines[:line])
    used = 0
    for index, char in enumerate(content(lines[line])):
        if used >= character:
            return start + index
        used += units(char)
    return start + len(content(lines[line]))


def position(text: str, at: int) -> tuple[int, int]:
    lines = split(text)
    for number, line in enumerate(lines):
        if at <= len(line):
            at = min(at, len(content(line)))  # not between "\r" and "\n"
            return number, units(line[:at])
        at -= len(line)
    return len(lines) - 1, units(content(lines[-1]))


@st.composite
def places(draw: st.DrawFn, text: str) -> tuple[int, int]:
    kind = draw(st.sampled_from(["inside", "inside", "past-line-end", "past-last-line"]))
    lines = split(text)
    if kind == "inside":
        return position(text, draw(st.integers(0, len(text))))
    if kind == "past-line-end":
        number = draw(st.integers(0, len(lines) - 1))
        return number, units(content(lines[number])) + draw(st.integers(1, 50))
    return len(lines) + draw(st.integers(0, 5)), draw(st.integers(0, 200))


@st.composite
def sessions(draw: st.DrawFn) -> tuple[str, str, list[tuple[str, Any]]]:
    """(the text opened, the text the steps end at, the steps)."""
    text = draw(st.sampled_from(SEED_TEXTS))
    current = text
    steps: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(1, 10))):
        kind = draw(st.sampled_from(["change", "change", "change", "replace", "foreign",
                                     "action"]))
        if kind == "change":
            start, end = draw(places(current)), draw(places(current))
            new_text = draw(st.one_of(FRAGMENTS, deep_line()))
            steps.append(("change", (start, end, new_text)))
            first, last = sorted([offset(current, *start), offset(current, *end)])
            current = current[:first] + new_text + current[last:]
        elif kind == "replace":
            current = draw(st.sampled_from(SEED_TEXTS))
            steps.append(("replace", current))
        elif kind == "foreign":
            steps.append(("foreign", draw(places(current))))
        else:
            steps.append(("action", (draw(places(current)), draw(places(current)))))
    return text, current, steps


def lsp_range(start: tuple[int, int], end: tuple[int, int]) -> dict[str, Any]:
    return {"start": {"line": start[0], "character": start[1]},
            "end": {"line": end[0], "character": end[1]}}


def inside(text: str, range_: dict[str, Any]) -> bool:
    lines = split(text)
    for point in (range_["start"], range_["end"]):
        if not 0 <= point["line"] < len(lines):
            return False
        if not 0 <= point["character"] <= units(content(lines[point["line"]])):
            return False
    return True


def comparable(diagnostics: list[Any]) -> list[Any]:
    return sorted((d["range"]["start"]["line"], d["range"]["start"]["character"],
                   d["range"]["end"]["line"], d["range"]["end"]["character"],
                   d.get("code"), d["message"], d.get("severity"),
                   len(d.get("relatedInformation") or [])) for d in diagnostics)


def edit_sequence_property(server: StdioClient,
                           session: tuple[str, str, list[tuple[str, Any]]]) -> None:
    first, final, steps = session
    number = next(_numbers)
    uri = f"file:///fuzz/doc{number}.py"
    server.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": first}})
    version = 1
    for kind, argument in steps:
        if kind == "change":
            start, end, new_text = argument
            version += 1
            server.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": lsp_range(start, end), "text": new_text}]})
        elif kind == "replace":
            version += 1
            server.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"text": argument}]})
        elif kind == "foreign":
            server.notify("textDocument/didChange", {
                "textDocument": {"uri": f"file:///fuzz/never{number}.py", "version": 2},
                "contentChanges": [{"range": lsp_range(argument, argument), "text": "x"}]})
        else:
            answer = server.request("textDocument/codeAction", {
                "textDocument": {"uri": uri}, "range": lsp_range(*argument),
                "context": {"diagnostics": []}})
            assert "result" in answer or "error" in answer
    diagnostics = server.diagnostics_for(uri, version)
    assert server.alive()
    for diagnostic in diagnostics:
        assert inside(final, diagnostic["range"]), diagnostic
        for related in diagnostic.get("relatedInformation") or []:
            if related["location"]["uri"] == uri:
                assert inside(final, related["location"]["range"]), related
    try:
        ast.parse(final)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return  # a broken block keeps its last good findings: not what a fresh one sees
    fresh = f"file:///fuzz/fresh{number}.py"
    server.notify("textDocument/didOpen", {"textDocument": {
        "uri": fresh, "languageId": "python", "version": 1, "text": final}})
    assert comparable(server.diagnostics_for(fresh, 1)) == comparable(diagnostics)
    for done in (uri, fresh):
        server.notify("textDocument/didClose", {"textDocument": {"uri": done}})

