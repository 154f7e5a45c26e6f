"""Parsing again only the statements of a class body that an edit touched.

A class block is the unit the document is split into, but parsing a 400-line class on
every keystroke inside one of its methods costs far more than analysing the method. So a
class block remembers where each statement of its body lies in its text (its *layout*);
after an edit, only the statements around the changed span are parsed, as the body of a
stand-in class, and spliced into the earlier tree. The statements outside the span keep
their nodes, so the analysis of what did not change stays valid.

The result is always a tree whose code is exactly the new text, with the statements a
full parse makes: the span starts and ends where statements of the earlier tree did, so
it is a run of whole statements at the body's indentation, and libcst gives back the
text it parsed. Only a comment line between two statements may be told to the statement
after it where a full parse would put it in the footer of the block before (libcst
decides that by looking at the whole block): the same code either way. Whenever the
result cannot be made sure of (the class header changed, the span does not parse on its
own or does not end a line, lines would move into the stand-in's footer), the answer is
``None`` and the caller parses the whole block, which also gives the right syntax error.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import libcst as cst

# Codegen's state is libcst's hook for following code generation node by node (its
# position metadata is built on it); it is not exported at the top level.
from libcst._nodes.internal import CodegenState

from gradguard.analysis.blocks import common_prefix, common_suffix

_STAND_IN = "class _:"


@dataclass(frozen=True)
class Layout:
    """Where each statement of a class body ends in the class block's text.

    The first starts at ``body_start``; each later one starts where the one before it
    ends (its leading blank lines and comments are part of it); after the last one comes
    the class's and the block's footer.
    """

    body_start: int
    ends: tuple[int, ...]


class _Recorder(CodegenState):
    """Codegen that notes which tokens each statement of one body produced."""

    def __init__(self, module: cst.Module, body: cst.IndentedBlock) -> None:
        super().__init__(module.default_indent, module.default_newline)
        self.watched = {id(statement) for statement in body.body}
        self.spans: list[tuple[int, int]] = []
        self._start = 0

    def before_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.watched:
            self._start = len(self.tokens)

    def after_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.watched:
            self.spans.append((self._start, len(self.tokens)))


def _class_body(module: cst.Module) -> tuple[cst.ClassDef, cst.IndentedBlock] | None:
    if len(module.body) != 1:
        return None
    statement = module.body[0]
    if not isinstance(statement, cst.ClassDef) or \
            not isinstance(statement.body, cst.IndentedBlock) or not statement.body.body:
        return None
    return statement, statement.body


def layout_of(module: cst.Module, text: str) -> Layout | None:
    """The layout of a block holding one class, parsed from ``text``; else ``None``."""
    found = _class_body(module)
    if found is None:
        return None
    recorder = _Recorder(module, found[1])
    module._codegen(recorder)
    if "".join(recorder.tokens) != text or len(recorder.spans) != len(found[1].body):
        return None
    offsets = [0]
    for token in recorder.tokens:
        offsets.append(offsets[-1] + len(token))
    # Without a trailing newline, the last line end the statements made was dropped.
    last = len(recorder.tokens)
    return Layout(offsets[recorder.spans[0][0]],
                  tuple(offsets[min(end, last)] for _, end in recorder.spans))


def reparse_class(old_text: str, tree: cst.Module, layout: Layout,
                  new_text: str) -> tuple[cst.Module, Layout] | None:
    """``tree`` (parsed from ``old_text``) with the body statements the change from
    ``old_text`` to ``new_text`` touched parsed again; ``None`` where that cannot be done."""
    found = _class_body(tree)
    if found is None:
        return None
    klass, body = found
    prefix = common_prefix(old_text, new_text)
    suffix = common_suffix(old_text, new_text, min(len(old_text), len(new_text)) - prefix)
    changed_end = len(old_text) - suffix
    if prefix < layout.body_start or prefix == len(old_text) == len(new_text):
        return None  # the header changed (or nothing did)
    ends = layout.ends
    # From the statement holding the character before the change (text appended to a
    # statement belongs to it) to the one holding the last changed character.
    # A change in the footer after the last statement goes with that statement.
    first = min(bisect.bisect_right(ends, prefix - 1), len(ends) - 1) \
        if prefix > layout.body_start else 0
    last = max(first, bisect.bisect_right(ends, max(changed_end - 1, prefix)))
    is_last = last >= len(ends) - 1
    last = min(last, len(ends) - 1)
    shift = len(new_text) - len(old_text)
    stop = len(new_text) if is_last else ends[last] + shift
    start = layout.body_start if first == 0 else ends[first - 1]
    if first > 0 and not _has_code(new_text[start:stop]):
        # Whole statements were deleted: what is left around them goes with the one before.
        first -= 1
        start = layout.body_start if first == 0 else ends[first - 1]
    span = new_text[start:stop]
    if not _has_code(span):
        return None
    if not is_last and (not span.endswith(("\n", "\r")) or new_text[stop - 1:stop + 1] == "\r\n"):
        return None  # the span must end with a line end of its own, as statements do
    parsed = _parse_span(span, tree)
    if parsed is None:
        return None
    stand_in, stand_in_body, span_ends = parsed
    if not is_last and (stand_in_body.footer or stand_in.footer):
        return None  # lines the next statement would lead with went to a footer
    middle = _keep_unchanged(list(body.body[first:last + 1]),
                             _pieces(old_text, start, ends[first:last + 1]),
                             list(stand_in_body.body), _pieces(span, 0, span_ends))
    statements = list(body.body[:first]) + middle + list(body.body[last + 1:])
    if is_last:
        new_block = body.with_changes(body=statements, footer=stand_in_body.footer)
        module = tree.with_changes(footer=stand_in.footer,
                                   has_trailing_newline=stand_in.has_trailing_newline)
    else:
        new_block = body.with_changes(body=statements)
        module = tree
    module = module.with_changes(body=[klass.with_changes(body=new_block)])
    new_ends = (ends[:first] + tuple(start + end for end in span_ends) +
                tuple(end + shift for end in ends[last + 1:]))
    return module, Layout(layout.body_start, new_ends)


def _has_code(text: str) -> bool:
    return any(line.strip() and not line.lstrip().startswith("#")
               for line in text.splitlines())


def _footer_length(module: cst.Module, body: cst.IndentedBlock) -> int:
    """How much of the module's text comes after its class's last body statement."""
    state = CodegenState(module.default_indent, module.default_newline)
    state.increase_indent(module.default_indent if body.indent is None else body.indent)
    for line in body.footer:
        line._codegen(state)
    state.decrease_indent()
    for line in module.footer:
        line._codegen(state)
    if not module.has_trailing_newline and state.tokens:
        state.pop_trailing_newline()  # else it was the statement's own line end
    return sum(len(token) for token in state.tokens)


def _pieces(text: str, start: int, ends: tuple[int, ...]) -> list[str]:
    starts = (start,) + ends[:-1]
    return [text[a:b] for a, b in zip(starts, ends, strict=True)]


def _keep_unchanged(old: list[cst.BaseStatement], old_texts: list[str],
                    new: list[cst.BaseStatement], new_texts: list[str]
                    ) -> list[cst.BaseStatement]:
    """``new``, with the statements at either end whose text is unchanged given back
    their earlier nodes (a method typed after another leaves that one as it was)."""
    kept = list(new)
    front = 0
    while front < min(len(old), len(new)) and old_texts[front] == new_texts[front]:
        kept[front] = old[front]
        front += 1
    back = 1
    while back <= min(len(old), len(new)) - front and old_texts[-back] == new_texts[-back]:
        kept[-back] = old[-back]
        back += 1
    return kept


def _parse_span(span: str, tree: cst.Module
                ) -> tuple[cst.Module, cst.IndentedBlock, tuple[int, ...]] | None:
    """``span`` parsed as the body of a stand-in class, in the context of ``tree``."""
    header = _STAND_IN + tree.default_newline
    text = header + span
    try:
        stand_in = cst.parse_module(text)
    except (cst.ParserSyntaxError, RecursionError):
        return None
    # The same indentation unit and line end make the same nodes as a parse in place.
    if (stand_in.default_indent, stand_in.default_newline) != (tree.default_indent,
                                                               tree.default_newline):
        return None
    found = _class_body(stand_in)
    if found is None:
        return None
    if len(found[1].body) == 1:  # most edits: no codegen of the statement needed
        return stand_in, found[1], (len(span) - _footer_length(stand_in, found[1]),)
    layout = layout_of(stand_in, text)
    if layout is None or layout.body_start != len(header):
        return None
    ends = [end - len(header) for end in layout.ends]
    return stand_in, found[1], tuple(ends)
