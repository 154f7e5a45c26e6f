"""``textDocument/hover``: the client's position to the unit's program and back.

What the hover says is ``gradguard.explain``'s: on a finding, its chain from the save to
the write (``explain.chain``, the text ``gradguard explain`` prints), computed from the
findings of the unit's last analysis; on a torch call, what autograd keeps of it
(``explain.hover``, a pure function of a text and a code-point position); on a torch
call that is part of a finding, both. This module only finds that text (a document's,
or the program of the notebook holding a cell, whose imports may sit in another cell)
and converts positions in the encoding the client negotiated.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types

from gradguard.analysis.findings import Finding
from gradguard.analysis.hazard import Span
from gradguard.config import Selection
from gradguard.explain.chain import chain_of, render
from gradguard.explain.findings import shown_at
from gradguard.explain.hover import hover_at
from gradguard.server.documents import Target, Unit
from gradguard.server.positions import Encoding
from gradguard.text import source_lines

# Between a finding's chain and the torch call's facts, in one hover.
RULE = "\n\n---\n\n"


@dataclass(frozen=True)
class HoverQuery:
    """One hover request, taken on the event loop; answered on any thread."""

    program: str
    target: Target
    # 0-based line of the program and code-point column.
    line: int
    column: int
    encoding: Encoding
    markdown: bool
    # The unit's file as its analysis names it, and that analysis' findings.
    path: str = ""
    findings: tuple[Finding, ...] = ()
    selection: Selection | None = None


def hover_query(unit: Unit, uri: str, position: types.Position, encoding: Encoding,
                markdown: bool = True) -> HoverQuery | None:
    target = next((t for t in unit.targets() if t.uri == uri), None)
    if target is None:
        return None
    line, column = target.index.line_column(target.index.offset(position, encoding))
    return HoverQuery(unit.program(), target, target.first_line + line, column, encoding,
                      markdown, unit.analysis.path, unit.analysis.findings,
                      unit.settings.selection)


def answer(query: HoverQuery) -> types.Hover | None:
    chains, span = _chains(query)
    found = hover_at(query.program, query.line, query.column)
    if found is None and not chains:
        return None
    shift, index = query.target.first_line, query.target.index
    if found is not None:
        start = index.position(found.line - shift, found.column, query.encoding)
        end = index.position(found.end_line - shift, found.end_column, query.encoding)
    else:
        assert span is not None
        start = index.position(span.line - 1 - shift, span.column - 1, query.encoding)
        end = index.position(span.end_line - 1 - shift, span.end_column - 1, query.encoding)
    text = RULE.join([*chains, *([found.markdown] if found is not None else [])])
    kind = types.MarkupKind.Markdown if query.markdown else types.MarkupKind.PlainText
    return types.Hover(types.MarkupContent(kind, text), types.Range(start, end))


def _chains(query: HoverQuery) -> tuple[list[str], Span | None]:
    """The chains of the findings under the cursor, and the range of the first."""
    if not query.findings:
        return [], None
    lines = source_lines(query.program)
    texts, span = [], None

    def whole(path: str) -> str | None:
        # The document is analysed block by block: its assignments are read across them.
        return query.program if path == query.path else None

    for finding in shown_at(query.findings, query.path, query.line + 1, lines,
                            query.selection, column=query.column + 1):
        chain = chain_of(finding, texts=whole)
        if chain is None:
            continue
        texts.append(render(chain))
        span = span or finding.piece.span(finding.node)
    return texts, span


def takes_markdown(capabilities: types.ClientCapabilities) -> bool:
    """Whether the client renders markdown hovers (it does unless it says otherwise)."""
    hover = capabilities.text_document.hover if capabilities.text_document else None
    formats = hover.content_format if hover is not None else None
    return not formats or types.MarkupKind.Markdown in formats
