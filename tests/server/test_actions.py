"""Code actions from diagnostic data: quick fixes, suppression, fix-all, staleness.

Quick fixes are built from hazards with fixes made by hand, to cover what the seeds do
not (columns after CJK text, clients without ``documentChanges`` or ``dataSupport``);
fix-all from real analysis, since it is the fix engine's result for the document. Both
run through the server's own path: ``build_outcome`` turns hazards into diagnostics with
data, ``code_actions`` turns data into edits.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsprotocol import types

from gradguard.analysis.analyze import analyze_source
from gradguard.analysis.hazard import Fix, Hazard, Span, TextEdit
from gradguard.cli.main import main
from gradguard.fixes import fix_of, fix_text
from gradguard.server.actions import ActionBuilder, code_actions, comment_fits
from gradguard.server.diagnostics import build_outcome
from gradguard.server.documents import Outcome, TextBuffer, TextUnit
from gradguard.server.notebooks import NotebookUnit
from gradguard.server.positions import LineIndex
from gradguard.server.settings import Settings

URI = "file:///model.py"
SOURCE = """import torch.nn as nn
act = nn.ReLU(inplace=True)
y = x.sigmoid()
y += 1
z = "模型"; z2 = y.relu_()
"""


def _hazard(line: int, column: int, end: int, *edits: TextEdit) -> Hazard:
    fix = Fix("Do it out of place", tuple(edits)) if edits else None
    return Hazard("GG001", Span(line, column, line, end), "overwrites a saved tensor",
                  "error", "high", fix=fix)


def _edit(line: int, column: int, end: int, text: str) -> TextEdit:
    return TextEdit(Span(line, column, line, end), text)


INPLACE_FLAG = _hazard(2, 7, 28, _edit(2, 15, 27, ""))            # nn.ReLU(inplace=True)
AUGMENTED = _hazard(4, 1, 7, _edit(4, 1, 7, "y = y + 1"))         # y += 1
AFTER_CJK = _hazard(5, 16, 25, _edit(5, 16, 25, "y.relu()"))      # z2 = y.relu_()


def _session(hazards: list[Hazard], version: int = 3,
             document_changes: bool = True) -> tuple[TextUnit, ActionBuilder, Outcome]:
    unit = TextUnit(URI, None, Settings(), text_buffer=TextBuffer(URI, SOURCE, version))
    outcome = build_outcome(unit.snapshot("utf-16"), hazards, [])
    unit.settle(outcome)
    return unit, ActionBuilder(unit, URI, "utf-16", document_changes), outcome


def _request(diagnostics: list[types.Diagnostic],
             only: list[str] | None = None) -> types.CodeActionParams:
    return types.CodeActionParams(
        types.TextDocumentIdentifier(URI),
        diagnostics[0].range if diagnostics else types.Range(types.Position(0, 0),
                                                             types.Position(0, 0)),
        types.CodeActionContext(diagnostics, only=only))


def _apply(text: str, edit: types.WorkspaceEdit | None) -> str:
    assert edit is not None and edit.document_changes is not None
    index = LineIndex(text)
    edits = [e for change in edit.document_changes
             if isinstance(change, types.TextDocumentEdit)
             for e in change.edits if isinstance(e, types.TextEdit)]
    for start, end, new in sorted(((*index.offsets(e.range, "utf-16"), e.new_text)
                                   for e in edits), reverse=True):
        text = text[:start] + new + text[end:]
    return text


def test_a_diagnostic_with_a_fix_offers_it_as_the_preferred_quick_fix() -> None:
    _, builder, outcome = _session([AUGMENTED])
    (diagnostic,) = outcome.diagnostics[URI]

    fix, ignore = code_actions(builder, _request([diagnostic]), outcome)[:2]

    assert (fix.title, fix.kind, fix.is_preferred) == ("Do it out of place", "quickfix", True)
    assert fix.diagnostics == [diagnostic]
    assert _apply(SOURCE, fix.edit).splitlines()[3] == "y = y + 1"
    assert ignore.title == "Ignore GG001 on this line" and not ignore.is_preferred


def test_edits_are_versioned_document_changes() -> None:
    _, builder, outcome = _session([AUGMENTED], version=7)

    (fix, *_) = code_actions(builder, _request(outcome.diagnostics[URI]), outcome)

    assert fix.edit is not None and fix.edit.document_changes is not None
    (change,) = fix.edit.document_changes
    assert isinstance(change, types.TextDocumentEdit)
    assert (change.text_document.uri, change.text_document.version) == (URI, 7)


def test_a_client_without_document_changes_gets_plain_changes() -> None:
    _, builder, outcome = _session([AUGMENTED], document_changes=False)

    (fix, *_) = code_actions(builder, _request(outcome.diagnostics[URI]), outcome)

    assert fix.edit is not None and fix.edit.document_changes is None
    assert list(fix.edit.changes or {}) == [URI]


def test_fix_columns_after_cjk_text_are_in_client_units() -> None:
    _, builder, outcome = _session([AFTER_CJK])

    (fix, *_) = code_actions(builder, _request(outcome.diagnostics[URI]), outcome)

    assert _apply(SOURCE, fix.edit).splitlines()[4] == 'z = "模型"; z2 = y.relu()'


REAL = """import torch
x = torch.randn(4, requires_grad=True)
y = torch.sigmoid(x)
y += 1
z = torch.exp(x)
z.mul_(2)
w = torch.tanh(x)
w[0] = 0
(y.sum() + z.sum() + w.sum()).backward()
"""


def _real_session(text: str) -> tuple[ActionBuilder, Outcome]:
    unit = TextUnit(URI, None, Settings(), text_buffer=TextBuffer(URI, text, 1))
    outcome = build_outcome(unit.snapshot("utf-16"), analyze_source(text, fix_of=fix_of), [])
    unit.settle(outcome)
    return ActionBuilder(unit, URI, "utf-16", True), outcome


def _only_edit(edit: types.WorkspaceEdit | None) -> types.TextEdit:
    assert edit is not None and edit.document_changes is not None
    (change,) = edit.document_changes
    assert isinstance(change, types.TextDocumentEdit)
    (one,) = change.edits
    assert isinstance(one, types.TextEdit)
    return one


def test_fix_all_is_the_text_gradguard_check_fix_writes_sent_as_one_minimal_edit() -> None:
    builder, outcome = _real_session(REAL)

    (fix_all,) = code_actions(builder, _request([], only=["source.fixAll"]), outcome)

    assert fix_all.kind == "source.fixAll.gradguard"
    assert len(fix_all.diagnostics or []) == 3
    edit = _only_edit(fix_all.edit)
    assert edit.range.start == types.Position(3, 2)  # "y " is kept: only what changes is sent
    assert _apply(REAL, fix_all.edit) == fix_text(REAL).text
    assert _apply(REAL, fix_all.edit).splitlines()[3:8] == [
        "y = y + 1", "z = torch.exp(x)", "z = z.mul(2)", "w = torch.tanh(x)", "w = w.clone()"]


@pytest.mark.parametrize("odd", ["\u2028", "\u2029", "\x0c", "\x85"])
def test_fix_all_lands_on_the_lines_the_analysis_meant_after_odd_characters(odd: str) -> None:
    text = REAL.replace("import torch\n", f"import torch  # page{odd}break\n")
    builder, outcome = _real_session(text)

    (fix_all,) = code_actions(builder, _request([], only=["source.fixAll"]), outcome)

    assert _apply(text, fix_all.edit) == fix_text(text).text
    assert _apply(text, fix_all.edit).split("\n")[7] == "w = w.clone()"


def test_fix_all_in_a_crlf_document_adds_crlf_lines() -> None:
    text = REAL.replace("\n", "\r\n")
    builder, outcome = _real_session(text)

    (fix_all,) = code_actions(builder, _request([], only=["source.fixAll"]), outcome)

    fixed = _apply(text, fix_all.edit)
    assert "w = w.clone()\r\nw[0] = 0\r\n" in fixed
    assert "\n" not in fixed.replace("\r\n", "")


def test_a_quick_fix_that_would_not_parse_is_not_offered() -> None:
    broken = _hazard(4, 1, 7, _edit(4, 1, 7, "y = ("))
    _, builder, outcome = _session([broken])

    actions = code_actions(builder, _request(outcome.diagnostics[URI], only=["quickfix"]),
                           outcome)

    assert [a.title for a in actions] == ["Ignore GG001 on this line"]


def test_fix_all_is_not_offered_when_no_diagnostic_has_a_fix() -> None:
    _, builder, outcome = _session([_hazard(4, 1, 7)])

    assert code_actions(builder, _request([], only=["source.fixAll"]), outcome) == []


def test_only_quickfix_leaves_out_fix_all_and_only_fix_all_leaves_out_quick_fixes() -> None:
    builder, outcome = _real_session(REAL)
    diagnostics = outcome.diagnostics[URI]

    quick = code_actions(builder, _request(diagnostics, only=["quickfix"]), outcome)
    source = code_actions(builder, _request(diagnostics, only=["source.fixAll"]), outcome)

    assert {a.kind for a in quick} == {"quickfix"}
    assert {a.kind for a in source} == {"source.fixAll.gradguard"}


def test_diagnostics_of_an_older_version_get_no_actions() -> None:
    unit, _, outcome = _session([AUGMENTED], version=3)
    old = outcome.diagnostics[URI]
    unit.text_buffer.version = 4  # the user typed; the analysis of version 4 is pending
    builder = ActionBuilder(unit, URI, "utf-16", True)

    assert code_actions(builder, _request(old), None) == []


def test_a_client_that_drops_data_gets_it_from_the_servers_copy() -> None:
    builder, outcome = _real_session(REAL)
    diagnostic = outcome.diagnostics[URI][0]
    without_data = types.Diagnostic(diagnostic.range, diagnostic.message,
                                    code=diagnostic.code, source=diagnostic.source)

    actions = code_actions(builder, _request([without_data]), outcome)

    assert [a.title for a in actions] == ["Compute `y = y + 1` out of place",
                                          "Ignore GG001 on this line",
                                          "GradGuard: fix all autograd hazards"]


def test_diagnostics_of_other_tools_are_left_alone() -> None:
    _, builder, outcome = _session([AUGMENTED])
    (diagnostic,) = outcome.diagnostics[URI]
    foreign = types.Diagnostic(diagnostic.range, "x", code="E501", source="ruff",
                               data=diagnostic.data)

    assert code_actions(builder, _request([foreign], only=["quickfix"]), outcome) == []


def test_the_ignore_comment_goes_after_the_code_and_keeps_an_existing_comment() -> None:
    text = "y += 1  # scale\n"
    unit = TextUnit(URI, None, Settings(), text_buffer=TextBuffer(URI, text, 1))
    outcome = build_outcome(unit.snapshot("utf-16"), [_hazard(1, 1, 7)], [])
    unit.settle(outcome)
    builder = ActionBuilder(unit, URI, "utf-16", True)

    (ignore,) = code_actions(builder, _request(outcome.diagnostics[URI]), outcome)

    assert _apply(text, ignore.edit) == "y += 1  # scale  # gradguard: ignore[GG001]\n"


def test_a_comment_never_goes_inside_a_string_or_after_a_backslash() -> None:
    text = ('x = f("""a\n'
            'b""") + g(\n'
            '    1)\n'
            'y = 1 + \\\n'
            '    2\n')
    index = LineIndex(text)

    assert [comment_fits(index, line) for line in range(5)] == [
        False,  # inside the triple-quoted string
        True,   # inside brackets: a comment is fine
        True,
        False,  # backslash continuation
        True,
    ]


def test_fix_all_is_not_offered_while_the_document_does_not_parse() -> None:
    _, outcome = _real_session(REAL)
    half_typed = REAL + "def f(:\n"
    unit = TextUnit(URI, None, Settings(), text_buffer=TextBuffer(URI, half_typed, 1))
    unit.settle(outcome)  # the diagnostics of the last text that parsed, with their fixes

    actions = code_actions(ActionBuilder(unit, URI, "utf-16", True),
                           _request([], only=["source.fixAll"]), outcome)

    assert actions == []


NOTEBOOK = "file:///train.ipynb"
CELLS = {
    f"vscode-notebook-cell:/train.ipynb#cell{number}": text for number, text in enumerate([
        "import torch\nx = torch.randn(4, requires_grad=True)\ny = torch.sigmoid(x)\n"
        "z = torch.exp(x)",
        "y[0], z[0] = 0, 0\n(y.sum() + z.sum()).backward()",
    ])}


def _apply_to_cells(cells: dict[str, str], edit: types.WorkspaceEdit | None) -> dict[str, str]:
    assert edit is not None and edit.document_changes is not None
    fixed = dict(cells)
    for change in edit.document_changes:
        assert isinstance(change, types.TextDocumentEdit)
        one = types.WorkspaceEdit(document_changes=[change])
        fixed[change.text_document.uri] = _apply(cells[change.text_document.uri], one)
    return fixed


def test_a_notebooks_fix_all_resolves_overlapping_fixes_as_check_fix_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Both writes of the second cell want a copy made just before the statement: the
    # two inserts overlap, so one waits for the engine's next round.
    unit = NotebookUnit(NOTEBOOK, None, Settings(), order=list(CELLS), code=set(CELLS),
                        cells={uri: TextBuffer(uri, text, 1, "python")
                               for uri, text in CELLS.items()})
    outcome = build_outcome(unit.snapshot("utf-16"),
                            analyze_source(unit.program(), fix_of=fix_of), [])
    unit.settle(outcome)
    second = list(CELLS)[1]
    assert len(outcome.diagnostics[second]) == 2

    (fix_all,) = code_actions(ActionBuilder(unit, second, "utf-16", True), types.CodeActionParams(
        types.TextDocumentIdentifier(second), types.Range(types.Position(0, 0),
                                                          types.Position(0, 0)),
        types.CodeActionContext([], only=["source.fixAll"])), outcome)

    book = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {},
                       "outputs": [], "source": text} for text in CELLS.values()],
            "metadata": {"language_info": {"name": "python"}}, "nbformat": 4,
            "nbformat_minor": 5}
    path = tmp_path / "train.ipynb"
    path.write_text(json.dumps(book, indent=1) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--fix", "train.ipynb"]) == 0
    written = [cell["source"] for cell in json.loads(path.read_text("utf-8"))["cells"]]
    fixed = _apply_to_cells(CELLS, fix_all.edit)
    assert list(fixed.values()) == written
    assert fixed[second].splitlines()[:3] == ["y = y.clone()", "z = z.clone()",
                                              "y[0], z[0] = 0, 0"]
