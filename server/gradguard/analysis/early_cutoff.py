"""Summary-level early cut-off: an edited function whose summaries come out the same
leaves what calls it standing.

An edit inside a function gives it new nodes, and every root and summary that looked it
up would run again. Most keystrokes do not change what the function does to its
callers' tensors, though: a renamed local, a log line, a constant in a message. So
before anything that called it is dropped, each of its summaries is computed again, in
the context it was computed in (the placeholders as they were before that run), from
the new code. When every one comes out the same (the same saves, writes, findings,
result and changes on the inputs, at the same places in the function) the new
summaries replace the old ones and the function counts as unchanged for its callers.

The comparison takes each node of the function a summary mentions by its place in the
function and its text, statements included: a write carries the fix planned for it,
which reads the statements around it (is the tensor used later?), so an edit to any of
those makes its callers run again.

"The same places" is what lets the callers keep their findings: those point into the
earlier parse of the function, which from then on moves with the new one
(:meth:`Piece.lead`), so what they report stays where the new code has it.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Mapping
from typing import cast

from gradguard.analysis.autograd import Autograd
from gradguard.analysis.interpreter import Evaluator, OutOfBudget, SummaryCache
from gradguard.analysis.interpreter.state import RunState
from gradguard.analysis.program import ClassInfo, FunctionInfo, Program
from gradguard.analysis.summaries import Summary, context_again
from gradguard.analysis.syntax import Piece
from gradguard.analysis.values import Lineage
from gradguard.facts import load


def function_named(program: Program | None, name: str) -> FunctionInfo | None:
    """The function or method a changed name (``f`` or ``C.m``) stands for."""
    if program is None:
        return None
    owner, dot, method = name.partition(".")
    if dot:
        info = program.classes.get(owner)
        return None if info is None else info.methods.get(method)
    return program.functions.get(name)


def summaries_unchanged(cache: SummaryCache, programs: Mapping[str, Program | None],
                        before: FunctionInfo, after: FunctionInfo) -> bool:
    """Whether every summary of ``before`` comes out the same from ``after``'s code; if
    so, ``after``'s summaries are in the cache and the earlier parse follows the new."""
    if not _same_signature(before.node, after.node):
        return False
    old = cache.summaries_of(before.piece, before.node)
    if not old:
        return False  # nothing called it through a summary: what used it is unknown
    evaluator = Evaluator(load(), programs, cache, RunState(Autograd()))
    new: list[tuple[tuple[object, ...], Summary]] = []
    try:
        for key, summary in old:
            grad, allowed, repeating = bool(key[1]), bool(key[2]), bool(key[3])
            fills = cast(tuple[str | None, ...], key[4])
            context_key = key[5]
            context = context_again(summary)
            if context.key != context_key:
                return False
            evaluator.state.repeating = 1 if repeating else 0
            try:
                again = evaluator.calls._summarise(  # noqa: SLF001
                    after, context, fills, grad, allowed)
            except (OutOfBudget, RecursionError):
                return False
            if again.cut is not None or \
                    fingerprint(summary, before) != fingerprint(again, after):
                return False
            new.append(((id(after.node), *key[1:]), again))
    finally:
        evaluator.close()
    for key, summary in new:
        cache.add(key, summary)
    after.piece.lead(before.piece)
    return True


def _same_signature(a: ast.FunctionDef | ast.AsyncFunctionDef,
                    b: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    # How a call binds its arguments, and the decorators (no_grad...): both decide the
    # context a call gives the function, which the cut-off reuses.
    return type(a) is type(b) and a.name == b.name and \
        ast.dump(a.args) == ast.dump(b.args) and \
        [ast.dump(d) for d in a.decorator_list] == [ast.dump(d) for d in b.decorator_list]


def fingerprint(summary: Summary, function: FunctionInfo) -> object:
    """What ``summary`` does to a caller, with the function's own nodes by where they
    are in it and their text, and the objects it made numbered in the order met."""
    try:
        return _Canonical(function).of((
            summary.placeholders, summary.events, summary.findings, summary.result,
            summary.changes, summary.reads, summary.cut, summary.guard))
    except RecursionError:
        return object()  # too deep to compare: taken as changed


_PLAIN = (str, int, float, bool, bytes, complex, type(None))


class _Canonical:
    def __init__(self, function: FunctionInfo) -> None:
        self.piece = function.piece
        self.own = {id(node) for node in ast.walk(function.node)}
        self.numbers: dict[int, int] = {}
        # Held until the walk ends, so that no id is reused by a new object meanwhile.
        self.held: list[object] = []

    def of(self, obj: object) -> object:
        if isinstance(obj, _PLAIN):
            return obj
        if isinstance(obj, ast.AST):
            return self.node(obj)
        if isinstance(obj, Piece):
            return "piece" if obj is self.piece else ("piece", id(obj))
        if isinstance(obj, FunctionInfo):
            return ("def", self.node(obj.node))
        if isinstance(obj, ClassInfo):
            return ("class", obj.path, obj.name)
        if isinstance(obj, (list, tuple)):
            return (type(obj).__name__, tuple(self.of(item) for item in obj))
        if isinstance(obj, (set, frozenset)):
            return ("set", tuple(sorted((self.of(item) for item in obj), key=repr)))
        if isinstance(obj, dict):
            return ("dict", tuple((self.of(k), self.of(v)) for k, v in obj.items()))
        number = self.numbers.get(id(obj))
        if number is not None:
            return ("ref", number)
        if type(obj).__module__.startswith("gradguard.facts") or not (
                isinstance(obj, Lineage) or dataclasses.is_dataclass(obj)):
            return ("shared", id(obj))  # loaded once and never changed (the facts)
        self.numbers[id(obj)] = len(self.numbers)
        self.held.append(obj)
        if isinstance(obj, Lineage):
            parts: tuple[object, ...] = (obj.call, obj.inner)
        else:
            parts = tuple(getattr(obj, f.name) for f in dataclasses.fields(obj)  # type: ignore[arg-type]
                          if not f.name.startswith("_"))
        return (type(obj).__name__, tuple(self.of(part) for part in parts))

    def node(self, node: ast.AST) -> object:
        if id(node) not in self.own:
            return ("node", id(node))
        origin = self.piece.origin
        line = getattr(node, "lineno", None)
        if line is None:
            return ("own", type(node).__name__)
        end = getattr(node, "end_lineno", None) or line
        return ("own", type(node).__name__, line - origin, node.col_offset,  # type: ignore[attr-defined]
                end - origin, getattr(node, "end_col_offset", None),
                self.piece.segment(node))
