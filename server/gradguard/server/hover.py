"""``textDocument/hover``: the client's position to the unit's program and back.

What the hover says is ``gradguard.explain.hover``'s, a pure function of a text and a
code-point position; this module only finds that text (a document's, or the program of
the notebook holding a cell, whose imports may sit in another cell) and converts
positions in the encoding the client negotiated.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types

from gradguard.explain.hover import hover_at
from gradguard.server.documents import Target, Unit
from gradguard.server.positions import Encoding


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


def hover_query(unit: Unit, uri: str, position: types.Position, encoding: Encoding,
                markdown: bool = True) -> HoverQuery | None:
    target = next((t for t in unit.targets() if t.uri == uri), None)
    if target is None:
        return None
    line, column = target.index.line_column(target.index.offset(position, encoding))
    return HoverQuery(unit.program(), target, target.first_line + line, column, encoding,
                      markdown)


def answer(query: HoverQuery) -> types.Hover | None:
    found = hover_at(query.program, query.line, query.column)
    if found is None:
        return None
    shift, index = query.target.first_line, query.target.index
    start = index.position(found.line - shift, found.column, query.encoding)
    end = index.position(found.end_line - shift, found.end_column, query.encoding)
    kind = types.MarkupKind.Markdown if query.markdown else types.MarkupKind.PlainText
    return types.Hover(types.MarkupContent(kind, found.markdown), types.Range(start, end))


def takes_markdown(capabilities: types.ClientCapabilities) -> bool:
    """Whether the client renders markdown hovers (it does unless it says otherwise)."""
    hover = capabilities.text_document.hover if capabilities.text_document else None
    formats = hover.content_format if hover is not None else None
    return not formats or types.MarkupKind.Markdown in formats
