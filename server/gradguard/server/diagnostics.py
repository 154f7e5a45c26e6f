"""From analysis results to LSP diagnostics, each carrying what its code actions need.

Every diagnostic has ``source: "gradguard"``, the rule code, a ``codeDescription`` link
to the rule's page and ``relatedInformation`` at the op that saved the overwritten
tensor. Its ``data`` holds the unit version it was computed for and, in the client's
position encoding, its fix and the lines a suppression comment may go on: code actions
are built from that alone, and refused when the version is no longer the document's.

Findings of the torch probe (``source: "gradguard-probe"``) are merged in: one that the
static analysis reports too (same code, same line) is not shown twice, the static
diagnostic says it is confirmed instead (and keeps its fix).

With workspace diagnostics, a document also shows the hazards in its file that the
analysis of an importer found (``Snapshot.revealed``), as long as its text is the one
they were found in; one its own analysis reports too (same code, same place) is not
shown twice.

Blocks that do not parse get a diagnostic of their own (code ``syntax``), at the error
the analysis found in the block (relative to the block, shifted here to the document).
"""

from __future__ import annotations

import bisect
import re
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path

from gradguard.analysis.hazard import Hazard, Span
from gradguard.analysis.incremental import IncrementalDocument
from gradguard.rules import RULES, Severity
from gradguard.server.documents import Outcome, Snapshot, Target
from gradguard.server.positions import LineIndex
from gradguard.server.probe_marks import PlacedMark
from gradguard.settings_read import SYNTAX_CODE

SOURCE = "gradguard"
PROBE_SOURCE = "gradguard-probe"
CONFIRMED = " (confirmed by the torch probe)"
STALE = "[stale: this line changed since the probe ran; run it again] "

LSP_SEVERITY: dict[Severity, types.DiagnosticSeverity] = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}

# Result ids must not repeat across server processes: a restarted server sees the same
# document versions again, perhaps under other settings.
_PROCESS_TOKEN = secrets.token_hex(4)


def result_id(snapshot: Snapshot) -> str:
    return f"{_PROCESS_TOKEN}-{snapshot.version}-{snapshot.generation}"


@dataclass(frozen=True)
class SyntaxProblem:
    line: int  # 1-based, in the program
    column: int  # 1-based code points
    end_column: int | None
    message: str
    kept_old_results: bool


_ON_LINE = re.compile(r"\bon line (\d+)")
_PREFIX = re.compile(r"^syntax error:\s*", re.IGNORECASE)


def syntax_problems(analysis: IncrementalDocument) -> list[SyntaxProblem]:
    """Where each block that does not parse breaks, in program coordinates.

    The analysis gives each broken block's error relative to the block (CPython's
    wording where it has one); here it is moved to the block's place in the program.
    """
    problems = []
    for block in analysis.blocks:
        error = block.error
        if error is None:
            continue
        shift = block.start_line - 1
        message = _shift_line_mentions(_PREFIX.sub("", str(error)), shift)
        problems.append(SyntaxProblem(max(error.line, 1) + shift, max(error.column, 1), None,
                                      message, block.stale))
    return problems


def _shift_line_mentions(message: str, shift: int) -> str:
    """CPython says "on line 3" relative to the block: make it the document's line."""
    return _ON_LINE.sub(lambda match: f"on line {int(match.group(1)) + shift}", message)


@dataclass
class _Context:
    snapshot: Snapshot
    starts: list[int]
    # The text of another file (a related location in a file the program imports).
    text_of: Callable[[str], str | None] = lambda path: None
    _others: dict[str, LineIndex | None] = field(default_factory=dict)

    def other_range(self, path: str, span: Span) -> tuple[str, types.Range] | None:
        """Where a span of another file is, for the client."""
        if path not in self._others:
            text = self.text_of(path)
            self._others[path] = None if text is None else LineIndex(text)
        index = self._others[path]
        if index is None or span.line > index.line_count:
            return None
        uri = from_fs_path(path) or path
        return uri, index.span_range(span, self.snapshot.encoding, 0)

    def target_of(self, program_line: int) -> Target | None:
        """The target holding 0-based program line ``program_line``."""
        position = bisect.bisect_right(self.starts, program_line) - 1
        if position < 0:
            return None
        target = self.snapshot.targets[position]
        if program_line >= target.first_line + target.index.line_count:
            return None
        return target

    def range_of(self, span: Span) -> tuple[Target, types.Range] | None:
        target = self.target_of(span.line - 1)
        if target is None:
            return None
        return target, target.index.span_range(span, self.snapshot.encoding, target.first_line)


def _pack(range_: types.Range) -> list[int]:
    return [range_.start.line, range_.start.character, range_.end.line, range_.end.character]


def _hazard_diagnostic(hazard: Hazard, context: _Context) -> tuple[str, types.Diagnostic] | None:
    located = context.range_of(hazard.span)
    if located is None:
        return None
    target, range_ = located
    snapshot = context.snapshot
    related = []
    for item in hazard.related:
        if item.path is not None:
            elsewhere = context.other_range(item.path, item.span)
            if elsewhere is not None:
                related.append(types.DiagnosticRelatedInformation(
                    types.Location(*elsewhere), item.message))
            continue
        where = context.range_of(item.span)
        if where is not None:
            related.append(types.DiagnosticRelatedInformation(
                types.Location(where[0].uri, where[1]), item.message))
    data: dict[str, Any] = {
        "version": snapshot.version,
        # Where "# gradguard: ignore[...]" may go: the first line, else the last.
        "lines": [range_.start.line, range_.end.line],
    }
    if hazard.fix is not None:
        edits: list[dict[str, Any]] = []
        for edit in hazard.fix.edits:
            where = context.range_of(edit.span)
            if where is None:
                edits = []
                break
            edits.append({"uri": where[0].uri, "range": _pack(where[1]),
                          "newText": edit.new_text})
        if edits:
            data["fix"] = {"title": hazard.fix.message, "edits": edits}
    rule = RULES.get(hazard.code)
    diagnostic = types.Diagnostic(
        range=range_,
        message=hazard.message,
        severity=LSP_SEVERITY[snapshot.settings.severity_of(hazard.code, hazard.severity)],
        code=hazard.code,
        code_description=types.CodeDescription(rule.doc_url) if rule else None,
        source=SOURCE,
        related_information=related or None,
        data=data,
    )
    return target.uri, diagnostic


def _syntax_diagnostic(problem: SyntaxProblem,
                       context: _Context) -> tuple[str, types.Diagnostic] | None:
    span = Span(problem.line, problem.column, problem.line,
                problem.end_column or problem.column)
    located = context.range_of(span)
    if located is None:
        return None
    target, range_ = located
    if problem.end_column is None:
        # To the end of the line, so that the mark is visible.
        line_end = target.index.line_range(range_.start.line, context.snapshot.encoding).end
        range_ = types.Range(range_.start, line_end)
    what = ("GradGuard keeps the findings of the last version of this block that parsed"
            if problem.kept_old_results else "GradGuard skips this block until it parses")
    diagnostic = types.Diagnostic(
        range=range_,
        message=f"Syntax error: {problem.message} ({what})",
        severity=LSP_SEVERITY[context.snapshot.settings.severity_of(SYNTAX_CODE, "error")],
        code=SYNTAX_CODE,
        source=SOURCE,
        data={"version": context.snapshot.version},
    )
    return target.uri, diagnostic


def _probe_diagnostic(placed: PlacedMark,
                      context: _Context) -> tuple[str, types.Diagnostic] | None:
    located = context.range_of(placed.span)
    if located is None:
        return None
    target, range_ = located
    mark = placed.mark
    related = []
    for item in placed.related:
        if item.path == context.snapshot.path:
            where = context.range_of(Span(item.line, item.column, item.line, item.column))
            if where is None:
                continue
            location = types.Location(where[0].uri, where[1])
        else:  # a file the probe read, perhaps not open: its line and column as they were
            position = types.Position(item.line - 1, item.column - 1)
            location = types.Location(from_fs_path(item.path) or item.path,
                                      types.Range(position, position))
        related.append(types.DiagnosticRelatedInformation(location, item.message))
    message = placed.message
    if mark.torch_error:
        message += f"\ntorch then raised: {mark.torch_error}"
    severity = LSP_SEVERITY[context.snapshot.settings.severity_of(mark.code, mark.severity)]
    if placed.stale:  # the line changed since the probe ran: a hint to run it again
        message = f"{STALE}{message}"
        severity = types.DiagnosticSeverity.Information
    rule = RULES.get(mark.code)
    diagnostic = types.Diagnostic(
        range=range_,
        message=message,
        severity=severity,
        code=mark.code,
        code_description=types.CodeDescription(rule.doc_url) if rule else None,
        source=PROBE_SOURCE,
        related_information=related or None,
        data={"version": context.snapshot.version, "probe": mark.target,
              "lines": [range_.start.line, range_.end.line], "stale": placed.stale},
    )
    return target.uri, diagnostic


def _merge_probe(per_target: dict[str, list[types.Diagnostic]],
                 probed: list[tuple[str, types.Diagnostic]]) -> None:
    """Add the probe's diagnostics; one the analysis made too marks that one confirmed."""
    for uri, diagnostic in probed:
        stale = isinstance(diagnostic.data, dict) and diagnostic.data.get("stale")
        same = [] if stale else [
            d for d in per_target.get(uri, []) if d.code == diagnostic.code
            and d.range.start.line == diagnostic.range.start.line]
        if not same:
            per_target.setdefault(uri, []).append(diagnostic)
            continue
        for static in same:
            if static.source == SOURCE and not static.message.endswith(CONFIRMED):
                static.message += CONFIRMED
                if isinstance(static.data, dict):
                    static.data["confirmed"] = True


def _with_revealed(snapshot: Snapshot, hazards: Iterable[Hazard]) -> list[Hazard]:
    own = list(hazards)
    revealed = snapshot.revealed
    if revealed is None or revealed.text != snapshot.text:
        return own  # found in another text: shown again once the workspace catches up
    places = {(h.code, h.span) for h in own}
    wanted = snapshot.settings.selection
    return own + [h for h in revealed.hazards
                  if (h.code, h.span) not in places and wanted.wants(h.code)]


def build_outcome(snapshot: Snapshot, hazards: Iterable[Hazard],
                  problems: Iterable[SyntaxProblem],
                  probe: Iterable[PlacedMark] = (),
                  text_of: Callable[[str], str | None] = lambda path: None) -> Outcome:
    context = _Context(snapshot, [t.first_line for t in snapshot.targets], text_of)
    per_target: dict[str, list[types.Diagnostic]] = {t.uri: [] for t in snapshot.targets}
    made = [_hazard_diagnostic(h, context) for h in _with_revealed(snapshot, hazards)]
    made += [_syntax_diagnostic(p, context) for p in problems]
    for item in made:
        if item is not None:
            per_target.setdefault(item[0], []).append(item[1])
    wanted = context.snapshot.settings.selection  # the probe's findings too
    _merge_probe(per_target, [d for m in probe if wanted.wants(m.mark.code)
                              and (d := _probe_diagnostic(m, context))])
    for diagnostics in per_target.values():
        diagnostics.sort(key=lambda d: (d.range.start.line, d.range.start.character,
                                        str(d.code)))
    ids = {uri: result_id(snapshot) for uri in per_target}
    versions = {t.uri: t.version for t in snapshot.targets}
    return Outcome(snapshot.version, snapshot.generation, per_target, ids, versions)


def empty_outcome(snapshot: Snapshot) -> Outcome:
    return build_outcome(snapshot, (), ())
