"""Code actions: the fix of a diagnostic, a suppression comment, and fix-all.

Actions are built from the ``data`` each diagnostic carries (see ``diagnostics``), and
only while it was computed for the document's current version: an action asked for with
diagnostics of an older version returns nothing rather than an edit that lands in the
wrong place. Edits are ``documentChanges`` carrying the version they apply to, so a
client also refuses one that raced with a keystroke.
"""

from __future__ import annotations

import os
import tokenize
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from gradguard.analysis.blocks import split_blocks
from gradguard.analysis.hazard import Fix, Span, TextEdit
from gradguard.analysis.suppression import suppression_comment
from gradguard.analysis.syntax import SourceError
from gradguard.fixes import apply_fix, fix_cells, fix_files, fix_text
from gradguard.rules import RULES
from gradguard.server.diagnostics import SOURCE
from gradguard.server.documents import Outcome, TextUnit, Unit
from gradguard.server.notebooks import NotebookUnit
from gradguard.server.positions import Encoding, LineIndex
from gradguard.text import common_prefix, minimal_change

QUICKFIX = types.CodeActionKind.QuickFix.value
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.gradguard"
KINDS = [QUICKFIX, FIX_ALL]


def wanted(kind: str, only: Sequence[str] | None) -> bool:
    """Whether a client that asked for ``only`` these kinds wants ``kind`` (a prefix match)."""
    if only is None:
        return True
    return any(base in ("", kind) or kind.startswith(base + ".") for base in only)


@dataclass(frozen=True)
class Edit:
    uri: str
    start: tuple[int, int]
    end: tuple[int, int]
    new_text: str

    def lsp(self) -> types.TextEdit:
        return types.TextEdit(
            types.Range(types.Position(*self.start), types.Position(*self.end)), self.new_text)


def _edits(fix: Any, default_uri: str) -> list[Edit] | None:
    """The edits of a fix as packed in ``Diagnostic.data`` (None if malformed)."""
    try:
        return [Edit(str(e.get("uri", default_uri)), (int(e["range"][0]), int(e["range"][1])),
                     (int(e["range"][2]), int(e["range"][3])), str(e["newText"]))
                for e in fix["edits"]]
    except (KeyError, TypeError, ValueError, IndexError):
        return None


class ActionBuilder:
    """Builds the actions of one request against one unit's current state.

    Fixes go through the fix engine (``gradguard.fixes.apply``), as ``gradguard check
    --fix`` does: in a plain document a quick fix is applied and checked there; fix-all
    is the engine's multi-round result for the document, or for a notebook's cells as
    one program (as ``check --fix`` fixes an ``.ipynb``), sent as minimal edits. The
    text and version are taken when the builder is made, so the actions can be built
    off the event loop.
    """

    def __init__(self, unit: Unit, uri: str, encoding: Encoding,
                 document_changes: bool) -> None:
        self.unit = unit
        self.uri = uri
        self.encoding = encoding
        self.document_changes = document_changes
        self.version = unit.version
        self.generation = unit.generation
        buffer = unit.buffer(uri)
        self.versions = {uri: None if buffer is None else buffer.version}
        # The document's whole program is this buffer's text (not a notebook cell).
        self.whole = isinstance(unit, TextUnit) and buffer is not None
        self.index = LineIndex(buffer.text if buffer is not None else "")
        self.selection = unit.settings.selection

    def workspace_edit(self, edits: Iterable[Edit]) -> types.WorkspaceEdit | None:
        by_uri: dict[str, list[Edit]] = {}
        for edit in edits:
            by_uri.setdefault(edit.uri, []).append(edit)
        for uri in by_uri:
            buffer = self.unit.buffer(uri)
            if buffer is None:
                return None  # a fix into a document this unit no longer has
            self.versions.setdefault(uri, buffer.version)
        if self.document_changes:
            return types.WorkspaceEdit(document_changes=[
                types.TextDocumentEdit(
                    types.OptionalVersionedTextDocumentIdentifier(uri, self.versions[uri]),
                    [e.lsp() for e in sorted(items, key=lambda e: (e.start, e.end))])
                for uri, items in by_uri.items()])
        return types.WorkspaceEdit(changes={
            uri: [e.lsp() for e in sorted(items, key=lambda e: (e.start, e.end))]
            for uri, items in by_uri.items()})

    def data_of(self, diagnostic: types.Diagnostic,
                outcome: Outcome | None) -> dict[str, Any] | None:
        """The diagnostic's data if it belongs to the current version, else None.

        A client that drops ``data`` (no ``dataSupport``) gets it from the server's own
        copy of the same diagnostic.
        """
        data = diagnostic.data
        if not isinstance(data, dict) and outcome is not None:
            for known in outcome.diagnostics.get(self.uri, []):
                if (known.range, known.code, known.message) == (
                        diagnostic.range, diagnostic.code, diagnostic.message):
                    data = known.data
                    break
        if not isinstance(data, dict) or data.get("version") != self.version:
            return None
        return data

    def _change(self, new_text: str, uri: str | None = None,
                index: LineIndex | None = None) -> Edit | None:
        """The one edit that turns a document's text (this one's, by default) into
        ``new_text`` (None: the same)."""
        uri, index = uri or self.uri, index or self.index
        old = index.text
        if new_text == old:
            return None
        start, end, replacement = minimal_change(old, new_text)
        first = index.position_at(start, self.encoding)
        last = index.position_at(end, self.encoding)
        return Edit(uri, (first.line, first.character), (last.line, last.character),
                    replacement)

    def _engine_fix(self, edits: list[Edit]) -> list[Edit] | None:
        """A quick fix's edits applied by the fix engine, as one edit (None: refused)."""
        spans = []
        for edit in edits:
            start = self.index.offset(types.Position(*edit.start), self.encoding)
            end = self.index.offset(types.Position(*edit.end), self.encoding)
            (line, column), (end_line, end_column) = (self.index.line_column(start),
                                                      self.index.line_column(end))
            spans.append(TextEdit(Span(line + 1, column + 1, end_line + 1, end_column + 1),
                                  edit.new_text))
        fixed = apply_fix(self.index.text, Fix("", tuple(spans)))
        if fixed is None:
            return None
        change = self._change(fixed)
        return [change] if change is not None else None

    def quick_fix(self, diagnostic: types.Diagnostic,
                  data: dict[str, Any]) -> types.CodeAction | None:
        fix = data.get("fix")
        edits = _edits(fix, self.uri) if isinstance(fix, dict) else None
        if not edits:
            return None
        if self.whole and all(e.uri == self.uri for e in edits):
            edits = self._engine_fix(edits)
            if not edits:
                return None
        edit = self.workspace_edit(edits)
        if edit is None:
            return None
        return types.CodeAction(title=str(fix.get("title") or "Fix"),  # type: ignore[union-attr]
                                kind=QUICKFIX, diagnostics=[diagnostic], is_preferred=True,
                                edit=edit)

    def ignore(self, diagnostic: types.Diagnostic,
               data: dict[str, Any]) -> types.CodeAction | None:
        code = diagnostic.code
        buffer = self.unit.buffer(self.uri)
        if not isinstance(code, str) or code not in RULES or buffer is None:
            return None
        lines = data.get("lines")
        if not isinstance(lines, list):
            return None
        index = self.index
        for line in dict.fromkeys(n for n in lines if isinstance(n, int)):
            if 0 <= line < index.line_count and comment_fits(index, line):
                old = index.line(line)
                new = suppression_comment(old, code)
                keep = common_prefix(old, new)
                start = index.position(line, keep, self.encoding)
                end = index.position(line, len(old), self.encoding)
                edit = self.workspace_edit([Edit(self.uri, (start.line, start.character),
                                                 (end.line, end.character), new[keep:])])
                if edit is None:
                    return None
                return types.CodeAction(title=f"Ignore {code} on this line", kind=QUICKFIX,
                                        diagnostics=[diagnostic], edit=edit)
        return None

    def fix_all(self, outcome: Outcome) -> types.CodeAction | None:
        """Every fix of the document as one edit (a notebook: one edit a changed cell).

        This is the fix engine's result for the unit, the text ``gradguard check --fix``
        writes (rounds of fixes and re-analysis, each checked to parse; a notebook's
        cells fixed as one program, as ``check --fix`` fixes an ``.ipynb``), sent as
        minimal edits.
        """
        fixable = [d for d in outcome.diagnostics.get(self.uri, [])
                   if isinstance(d.data, dict) and isinstance(d.data.get("fix"), dict)]
        if not fixable or not (self.whole or isinstance(self.unit, NotebookUnit)):
            return None
        fixed = self._fixed_texts()
        taken = [change for target, text in zip(self.unit.targets(), fixed or [], strict=False)
                 if (change := self._change(text, target.uri, target.index)) is not None]
        if not taken:
            return None
        edit = self.workspace_edit(taken)
        if edit is None:
            return None
        return types.CodeAction(title="GradGuard: fix all autograd hazards", kind=FIX_ALL,
                                diagnostics=fixable, edit=edit)

    def _fixed_texts(self) -> tuple[str, ...] | None:
        """The engine's fix-all of the unit, each target's text (None: none can be
        fixed), kept for its version and settings (a client asks for code actions at
        every move of the cursor)."""
        key = (self.version, self.generation)
        known = self.unit.fixed_all
        if known is not None and known[0] == key:
            return known[1]
        try:
            fixed = self._fix_all()
        except SourceError:  # a block is being typed: nothing can be checked to parse
            fixed = None
        self.unit.fixed_all = (key, fixed)
        return fixed

    def _fix_all(self) -> tuple[str, ...] | None:
        """A notebook's cells are fixed as one program, alone; a file of the workspace as
        ``check --fix`` fixes it, its imports followed; a document of no workspace alone."""
        if isinstance(self.unit, NotebookUnit):
            _, cells = fix_cells([target.index.text for target in self.unit.targets()],
                                 self.selection)
            return None if cells is None else tuple(cells)
        project = self.unit.project
        if self.unit.path is None or project is None:
            return (fix_text(self.index.text, self.selection).text,)
        path = os.path.abspath(self.unit.path)
        return (fix_files({path: self.index.text}, project.roots, self.selection,
                          project.read)[path].text,)


def comment_fits(index: LineIndex, line: int) -> bool:
    """Whether a comment appended to 0-based ``line`` stays a comment.

    Not when the line ends inside a string (a triple-quoted one spanning lines: the
    comment would become part of the string's value) or with a backslash continuation
    (a comment after it is a syntax error). Tokenizes the line's top-level block up to
    the line.
    """
    start = 0
    for block in split_blocks(index.text):
        if block.start_line - 1 > line:
            break
        start = block.start_line - 1
    lines = iter(index.line(n) + "\n" for n in range(start, index.line_count))
    try:
        for token in tokenize.generate_tokens(lambda: next(lines, "")):
            row = token.start[0] - 1 + start
            if row > line:
                return False  # the line's end was inside a token or continued
            if token.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT) and row == line:
                return True
    except (tokenize.TokenError, SyntaxError):
        pass
    # The block does not tokenize (it is being typed): judge the line by itself.
    text = index.line(line)
    return not text.rstrip().endswith("\\") and text.count('"""') % 2 == 0 and \
        text.count("'''") % 2 == 0


def code_actions(builder: ActionBuilder, params: types.CodeActionParams,
                 outcome: Outcome | None) -> list[types.CodeAction]:
    """The actions for a request; ``outcome`` is the unit's latest, if it is current."""
    only = params.context.only
    actions: list[types.CodeAction] = []
    seen: set[str] = set()
    if wanted(QUICKFIX, only):
        fixes: list[types.CodeAction] = []
        ignores: list[types.CodeAction] = []
        for diagnostic in params.context.diagnostics:
            if diagnostic.source != SOURCE:
                continue
            data = builder.data_of(diagnostic, outcome)
            if data is None:
                continue
            for action, into in ((builder.quick_fix(diagnostic, data), fixes),
                                 (builder.ignore(diagnostic, data), ignores)):
                if action is not None:
                    key = f"{action.title}|{action.edit}"
                    if key not in seen:
                        seen.add(key)
                        into.append(action)
        actions += fixes + ignores
    if wanted(FIX_ALL, only) and outcome is not None:
        everything = builder.fix_all(outcome)
        if everything is not None:
            actions.append(everything)
    return actions
