"""A finding's chain: from the op that saved a tensor for backward to the write that
overwrote it, one step per line with its place.

A pure function of the analysis' ``Finding``: its saving op (``Save``) and the call
sites that save came back out through (``Save.via``), the call sites the write was
reached through (``Finding.via``), and the texts of the pieces they were parsed from.
The two paths share the calls down to the function where the saved tensor went from one
to the other; the steps are the save, each call it was returned from (innermost
first), the assignments that carry it in that function (a view, an alias, an item, an
attribute: read from the code, as ``local.py`` explains), each call it is passed into,
the same in the function that writes it, and the write. The first step is always the
saving line and the last the writing line.

The language server's hover and ``gradguard explain`` both print ``render``'s text.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable
from dataclasses import dataclass

from gradguard.analysis.findings import Finding, Site
from gradguard.analysis.syntax import Piece, char_column
from gradguard.analysis.values import Save
from gradguard.explain.hover import torch_call_at
from gradguard.explain.local import (
    Carried,
    Scope,
    call_of,
    carried_into,
    names_calling,
    node_at,
    parsed,
    returned_from,
    scope_of,
    written_base,
)
from gradguard.explain.ops import aten_reads, backward_reads
from gradguard.facts.formulas import load_formulas
from gradguard.facts.table import Facts, load
from gradguard.rules import (
    PARAMETERS_UPDATED_BEFORE_BACKWARD,
    SAVED_TENSOR_CHANGED_SILENTLY,
    SAVED_TENSOR_OVERWRITTEN,
)

# The rules whose findings have a saving op to start a chain from.
CHAINED = (SAVED_TENSOR_OVERWRITTEN, SAVED_TENSOR_CHANGED_SILENTLY,
           PARAMETERS_UPDATED_BEFORE_BACKWARD)
# Source quoted in a step longer than this is cut (a call spread over many lines).
LONGEST_QUOTE = 72
ROLE_NOUNS = {"input": "its input", "other": "its second operand", "output": "its output"}


@dataclass(frozen=True)
class Step:
    """One link of a chain: where (a file and 1-based line and column) and what."""

    kind: str  # save, return, call, view, alias, item, attribute, write
    path: str
    line: int
    column: int
    text: str


@dataclass(frozen=True)
class Chain:
    code: str
    path: str
    line: int
    column: int
    steps: tuple[Step, ...]
    # GG004: the other saves the same step breaks (only the one backward reaches first
    # is followed).
    also: tuple[Step, ...] = ()


def chain_of(finding: Finding, facts: Facts | None = None,
             texts: Callable[[str], str | None] | None = None) -> Chain | None:
    """The chain of a finding that has a saving op; None for the others.

    ``texts`` gives the whole text of a file the analysis parsed in pieces (an editor's
    document, block by block), so that a function's assignments are read across them.
    """
    if finding.code not in CHAINED or not finding.saves:
        return None
    facts = facts or load()
    whole = _Whole(texts)
    save = _followed(finding.saves)
    saved = whole.site(save.piece, save.node)
    written = whole.site(finding.piece, finding.node)
    span = written[0].span(written[1])
    steps = [_save_step(save, saved, facts)]
    save_via = tuple(whole.site(*site) for site in save.via)
    write_via = tuple(whole.site(*site) for site in finding.via)
    common = _shared(save_via, write_via)
    returns, calls = _met(save_via[common:], write_via[common:], saved, written)
    # Back out of the calls the saved tensor was returned from, innermost first.
    # An op's output was made inside the calls: they hand it back. An operand (or a
    # layer's weight) came into them from the caller: the save was made inside them.
    made_inside = save.role == "output" and finding.code != PARAMETERS_UPDATED_BEFORE_BACKWARD
    if returns and made_inside:
        returned = returned_from(*saved)
        if returned is not None:
            steps.append(_step("return", saved[0], returned,
                               f"`{_quote(saved[0], returned)}` returns it"))
    for piece, node in reversed(returns):
        if made_inside:
            steps.append(_step("return", piece, node, _returned_text(piece, node)))
        else:
            steps.append(_step("call", piece, node,
                               f"`{_quote(piece, node)}`: the save above is made inside "
                               "this call"))
    # In the function the two paths share: from where it arrived to where it leaves.
    arrived: Site = returns[0] if returns else saved
    if calls:
        piece, call = calls[0]
        carried, name = carried_into(piece, call, arrived, facts)
        steps += [_carried_step(piece, c) for c in carried]
        passed = f"`{name}`" if name else "it"
        steps.append(_step("call", piece, call,
                           f"`{_quote(piece, call)}` passes {passed} into the call"))
        for piece, call in calls[1:]:
            steps.append(_step("call", piece, call,
                               f"`{_quote(piece, call)}` passes it into the call"))
    # In the function that writes it: from where it arrived to the write.
    base = None if finding.code == PARAMETERS_UPDATED_BEFORE_BACKWARD else \
        written_base(*written, facts)
    if base is not None:
        start: Site | None = None if calls else arrived
        carried, _ = carried_into(*written, start, facts, target=base)
        steps += [_carried_step(written[0], c) for c in carried]
    steps.append(Step("write", finding.piece.path, span.line, span.column,
                      _write_text(finding, written, base)))
    also = tuple(_save_step(other, whole.site(other.piece, other.node), facts, brief=True)
                 for other in finding.saves if other is not save)
    return Chain(finding.code, finding.piece.path, span.line, span.column,
                 _without_repeats(steps), also)


class _Whole:
    """Places moved into the whole text of their file, where the analysis parsed it in
    pieces: the same node found again in a parse of the whole text."""

    def __init__(self, texts: Callable[[str], str | None] | None) -> None:
        self.texts = texts
        self.pieces: dict[str, Piece] = {}

    def site(self, piece: Piece, node: ast.AST) -> Site:
        text = None if self.texts is None else self.texts(piece.path)
        if text is None or text == piece.text:
            return piece, node
        whole = self.pieces.get(piece.path)
        if whole is None or whole.text != text:
            whole = self.pieces[piece.path] = Piece(piece.path, text)
        line = getattr(node, "lineno", None)
        end_line = getattr(node, "end_lineno", None)
        if line is None or end_line is None:
            return piece, node
        found = node_at(text, type(node).__name__, piece.document_line(line),
                        getattr(node, "col_offset", 0), piece.document_line(end_line),
                        getattr(node, "end_col_offset", 0))
        return (piece, node) if found is None else (whole, found)


def render(chain: Chain) -> str:
    """The chain as text: markdown that reads as plain text too (a hover shows it as
    markdown, ``gradguard explain`` prints it). Places are relative to the finding's
    file, as its message names them."""
    where = os.path.basename(chain.path)
    lines = [f"**{chain.code}** at {where}:{chain.line}: how the saved tensor reaches "
             "the write", ""]
    for number, step in enumerate(chain.steps, 1):
        lines.append(f"{number}. {_place(step, chain.path)} ({step.kind}): {step.text}")
    if chain.also:
        lines += ["", f"The same write also breaks {len(chain.also)} other "
                  f"save{'s' if len(chain.also) > 1 else ''}:"]
        lines += [f"- {_place(step, chain.path)}: {step.text}" for step in chain.also]
    return "\n".join(lines)


# The analysis' paths leave out the calls a root makes from its own statements (a
# script's ``out = act(x)``): when the save or the write is in another function than
# the one they meet in, that call is found in it by the function's name.


def _met(returns: tuple[Site, ...], calls: tuple[Site, ...], saved: Site,
         written: Site) -> tuple[tuple[Site, ...], tuple[Site, ...]]:
    """The two paths, with the call a root made from its own statements added to the
    one that lacks it: the outermost places of the two must be in one function."""
    up = returns[0] if returns else saved
    down = calls[0] if calls else written
    up_scope, down_scope = scope_of(*up), scope_of(*down)
    if up_scope is None or down_scope is None or up_scope is down_scope:
        return returns, calls
    # The save was made in a function the root called before the paths meet ...
    call = _call_into(up, down_scope, before=getattr(down[1], "lineno", 0), last=True)
    if call is not None:
        return ((down[0], call), *returns), calls
    # ... or the write is in a function the root called after the tensor arrived.
    call = _call_into(down, up_scope, after=getattr(up[1], "lineno", 0) - 1)
    if call is not None:
        return returns, ((up[0], call), *calls)
    return returns, calls


def _call_into(inside: Site, scope: Scope, after: int = 0, before: int | None = None,
               last: bool = False) -> ast.Call | None:
    """A call in ``scope`` of the function holding ``inside`` (not a constructor: a
    layer built there is called elsewhere)."""
    piece, node = inside
    function = scope_of(piece, node)
    tree = parsed(piece.text)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or \
            function.name == "__init__" or tree is None:
        return None
    return call_of(scope, names_calling(tree, function, scope), after, before, last)


def _followed(saves: tuple[Save, ...]) -> Save:
    """The save a chain follows: the only one, or (a step breaking many, GG004) the one
    backward reaches first, the last made, taken as the one furthest down its file."""
    if len(saves) == 1:
        return saves[0]
    last = saves[-1].piece.path
    same_file = [s for s in saves if s.piece.path == last]
    return max(same_file, key=lambda s: s.piece.span(s.node))


def _shared(a: tuple[Site, ...], b: tuple[Site, ...]) -> int:
    """How many call sites two paths from the root share before they part."""
    count = 0
    for (piece_a, node_a), (piece_b, node_b) in zip(a, b, strict=False):
        if node_a is not node_b and (piece_a.path, piece_a.span(node_a)) != \
                (piece_b.path, piece_b.span(node_b)):
            break
        count += 1
    return count


def _step(kind: str, piece: Piece, node: ast.AST, text: str) -> Step:
    span = piece.span(node)
    return Step(kind, piece.path, span.line, span.column, text)


def _carried_step(piece: Piece, carried: Carried) -> Step:
    return _step(carried.kind, piece, carried.node, carried.text)


def _quote(piece: Piece, node: ast.AST) -> str:
    text = " ".join(piece.segment(node).split())
    if len(text) > LONGEST_QUOTE and isinstance(node, ast.Call):
        text = " ".join(piece.segment(node.func).split()) + "(...)"  # a layer list built
    return text if len(text) <= LONGEST_QUOTE else text[:LONGEST_QUOTE - 3] + "..."


def _save_step(save: Save, site: Site, facts: Facts, brief: bool = False) -> Step:
    label, _, aten = save.op.partition("|")
    piece, node = site
    span = piece.span(node)
    call = None
    if isinstance(node, (ast.Call, ast.BinOp, ast.AugAssign, ast.UnaryOp)):
        # Found in the piece's own text (lines as parsed), whose imports name the call
        # as the hover names it.
        call = torch_call_at(piece.text, *_text_range(piece, node), facts)
    what = ROLE_NOUNS.get(save.role, "a tensor")
    if call is not None:
        operand = {"input": call.input, "other": call.other}.get(save.role)
        if save.role == "other" and call.layer:
            what = "its weight"
        if operand and len(operand) <= LONGEST_QUOTE and "\n" not in operand:
            what += f" `{operand}`"
        reads = backward_reads(call.effect, facts, load_formulas())
    else:
        reads = aten_reads(aten or label, facts, load_formulas())
    if save.role == "output":
        bound = _bound_name(piece, node)
        if bound is not None:
            what += f" `{bound}`"
    text = f"`{_label(piece, node, label)}` saves {what} for backward"
    if reads and not brief:
        text += ". " + " ".join(reads)
    return Step("save", piece.path, span.line, span.column, text)


def _text_range(piece: Piece, node: ast.AST) -> tuple[int, int, int, int]:
    """A node's range in its piece's text: 0-based lines, code-point columns."""
    line = getattr(node, "lineno", 1)
    end_line = getattr(node, "end_lineno", None) or line
    return (line - 1, char_column(piece.line(line), getattr(node, "col_offset", 0)),
            end_line - 1, char_column(piece.line(end_line), getattr(node, "end_col_offset", 0)))


def _label(piece: Piece, node: ast.AST, label: str) -> str:
    if label and "(" not in label and isinstance(node, ast.Call):
        return _quote(piece, node)
    return label or _quote(piece, node)


def _bound_name(piece: Piece, node: ast.AST) -> str | None:
    """The name an op's output is bound to (``y`` of ``y = torch.sigmoid(x)``)."""
    tree = parsed(piece.text)
    if tree is None:
        return None
    for statement in ast.walk(tree):
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and \
                _same_place(statement.value, node) and \
                isinstance(statement.targets[0], (ast.Name, ast.Attribute)):
            return piece.segment(statement.targets[0])
    return None


def _same_place(a: ast.AST, b: ast.AST) -> bool:
    return all(getattr(a, f, None) == getattr(b, f, None)
               for f in ("lineno", "col_offset", "end_lineno", "end_col_offset"))


def _returned_text(piece: Piece, call: ast.AST) -> str:
    bound = _bound_name(piece, call)
    into = f", bound to `{bound}`" if bound else ""
    return f"`{_quote(piece, call)}` returns it{into}"


def _write_text(finding: Finding, site: Site, base: str | None) -> str:
    op = finding.op
    written = _written_view(site, base)
    if finding.code == PARAMETERS_UPDATED_BEFORE_BACKWARD:
        return f"`{op}` updates the parameters in place before the backward that needs them"
    if finding.code == SAVED_TENSOR_CHANGED_SILENTLY:
        return (f"`{op}` writes it through `.data`: autograd sees no change, backward "
                "silently reads the new values")
    if finding.layer is not None:
        return (f"`{op}` (an in-place layer) writes it in place: backward then fails "
                "with \"modified by an inplace operation\"")
    return f"`{op}` writes it in place{written}: backward then fails with \"modified by " \
        "an inplace operation\""


def _written_view(site: Site, base: str | None) -> str:
    """``, through `preds[..., 2:4]`, a view of `preds` ...`` when a view is written."""
    piece, node = site
    target = node.targets[0] if isinstance(node, ast.Assign) else \
        node.target if isinstance(node, ast.AugAssign) else node
    if base is None or not isinstance(target, ast.Subscript):
        return ""
    return (f" through `{_quote(piece, target)}`, a view of `{base}` (every view "
            f"of `{base}` shares its version counter)")


def _place(step: Step, home: str) -> str:
    if os.path.isabs(step.path) and os.path.isabs(home):
        path = os.path.relpath(step.path, os.path.dirname(home))
    else:
        path = step.path if step.path != home else os.path.basename(step.path)
    return f"{path}:{step.line}"


def _without_repeats(steps: list[Step]) -> tuple[Step, ...]:
    """Each place once (a call that both returns the tensor and is where it is
    assigned), the first step and the last always kept."""
    kept: list[Step] = []
    for index, step in enumerate(steps):
        last = index == len(steps) - 1
        if not last and index > 0 and any(
                (k.path, k.line, k.kind) == (step.path, step.line, step.kind) for k in kept):
            continue
        kept.append(step)
    return tuple(kept)

