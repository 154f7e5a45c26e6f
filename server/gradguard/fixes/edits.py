"""Turns a finding's fix plan into text edits, from the source the plan's nodes were
parsed from (``fix_of``; the analysis records the plan while it runs, ``fix_plans``).

Edits replace the smallest stretch of text that holds the change; everything else,
comments and formatting included, stays as written. Where an argument list changes,
the call's own text is rewritten with libcst, which keeps its commas and comments.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gradguard.analysis.findings import Finding
from gradguard.analysis.fix_plans import (
    AugmentedToBinary,
    CallEdit,
    CloneArgument,
    CloneFirst,
    CloneIfUsedLater,
    DataToGraph,
    DropArgument,
    DropData,
    DropOut,
    MoveAfter,
    OutOfPlace,
    Place,
    Plan,
    Rename,
    SelectRows,
    SelectsForUnbind,
    UnderNoGrad,
    dotted_text,
)
from gradguard.analysis.hazard import Fix, Span, TextEdit
from gradguard.analysis.syntax import Piece, contains_skipped
from gradguard.analysis.values import NnModule, Save

if TYPE_CHECKING:
    import libcst as cst

# Expressions that need no parentheses as the right operand of a binary operator.
_ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant, ast.List)


def layer_fix(layer: NnModule) -> Fix | None:
    """``nn.ReLU(inplace=True)`` -> ``nn.ReLU()``, on the instance that wrote."""
    call = layer.node
    flag = layer.facts.ctor_inplace
    if not isinstance(call, ast.Call) or flag is None or contains_skipped(call):
        return None
    piece = layer.piece
    if any(k.arg == flag.name for k in call.keywords):
        changed = edited_call(piece, call, DropArgument(flag.name, None))
    elif flag.position is not None and flag.position < len(call.args) and \
            not any(isinstance(a, ast.Starred) for a in call.args):
        changed = _with_false_at(piece.segment(call), flag.position)
    elif (mapping := _only_double_star(call)) is not None:
        # ``nn.Dropout(p, **params)`` with ``params = {"inplace": inplace}`` (torchvision's
        # MLP): the keywords given, the flag turned off after them.
        name = layer.facts.name.rsplit(".", 1)[-1]
        text = f'{{**{piece.segment(mapping)}, "{flag.name}": False}}'
        return Fix(f"Build this {name} out of place (inplace=False)",
                   (TextEdit(piece.span(mapping), text),))
    else:
        return None
    if changed is None:
        return None
    name = layer.facts.name.rsplit(".", 1)[-1]
    message = f"Build this {name} out of place (inplace=False)"
    others = len(layer.calls) - 1
    if others > 0:
        message += (f"; the same instance is called at {others} other place"
                    f"{'s' if others > 1 else ''}, which stop writing in place too")
    return Fix(message, (TextEdit(piece.span(call), changed),))


def _only_double_star(call: ast.Call) -> ast.expr | None:
    """The mapping of a call's one ``**`` argument, when nothing else could set a flag
    (no ``*`` argument: a flag given by position would be set twice)."""
    mappings = [k.value for k in call.keywords if k.arg is None]
    if len(mappings) != 1 or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    return mappings[0]


def switch_fix(piece: Piece, statement: ast.AST) -> Fix | None:
    """``m.inplace = True`` (a loop switching layers in place) -> ``m.inplace = False``:
    the layers compute the same out of place."""
    if not isinstance(statement, ast.Assign) or contains_skipped(statement):
        return None
    value = statement.value
    if not (isinstance(value, ast.Constant) and value.value is True):
        return None
    return Fix("Leave these layers out of place (inplace = False)",
               (TextEdit(piece.span(value), "False"),))


def plan_fix(plan: Plan) -> Fix | None:
    if contains_skipped(plan.place.statement):
        return None  # part of it was never analysed (nor could a parser take it again)
    if isinstance(plan, OutOfPlace):
        return _out_of_place(plan)
    if isinstance(plan, AugmentedToBinary):
        piece = plan.place.piece
        target = piece.segment(plan.node.target)
        value = plan.node.value
        right = piece.segment(value)
        if not isinstance(value, _ATOMS) and not (isinstance(value, ast.Tuple) and
                                                   right.startswith("(")):
            right = f"({right})"
        text = f"{target} = {target} {plan.symbol} {right}"
        return Fix(f"Compute `{text}` out of place",
                   (TextEdit(piece.span(plan.node), text),))
    if isinstance(plan, DataToGraph):
        piece = plan.place.piece
        assert isinstance(plan.node.target, ast.Attribute)
        name = piece.segment(plan.node.target.value)
        value = plan.node.value
        right = piece.segment(value)
        if not isinstance(value, _ATOMS):
            right = f"({right})"
        text = f"{name} = {name} {plan.symbol} {right}"
        return Fix(f"Make the change in the graph: `{text}`",
                   (TextEdit(piece.span(plan.node), text),))
    if isinstance(plan, DropData):
        piece = plan.place.piece
        edits = tuple(TextEdit(piece.span(node), plan.name)
                      for node in ast.walk(plan.place.statement)
                      if isinstance(node, ast.Attribute) and node.attr == "data" and
                      isinstance(node.value, ast.Name) and node.value.id == plan.name)
        if not edits:
            return None
        return Fix(f"Make the change through `{plan.name}` itself, where autograd sees it "
                   f"(drop `.data`)", edits)
    if isinstance(plan, CloneIfUsedLater):
        if not _mentions(plan.later, plan.place.piece.segment(plan.root)):
            return None
        return plan_fix(CloneFirst(plan.root, plan.place))
    if isinstance(plan, CloneFirst):
        piece = plan.place.piece
        root = piece.segment(plan.root)
        line = plan.place.statement.lineno
        indent = _indent(piece.line(line))
        at = piece.document_line(line)
        text = f"{root} = {root}.clone()\n{indent}"
        column = len(indent) + 1
        return Fix(f"Write into a copy: `{root} = {root}.clone()` first",
                   (TextEdit(Span(at, column, at, column), text),))
    if isinstance(plan, CloneArgument):
        piece = plan.place.piece
        given = piece.segment(plan.argument)
        if not isinstance(plan.argument, _ATOMS):
            given = f"({given})"
        return Fix(f"Hand the library a copy: `{given}.clone()`",
                   (TextEdit(piece.span(plan.argument), f"{given}.clone()"),))
    if isinstance(plan, DropOut):
        return _drop_out(plan)
    if isinstance(plan, MoveAfter):
        return _move_after(plan)
    if isinstance(plan, UnderNoGrad):
        return _under_no_grad(plan)
    if isinstance(plan, SelectsForUnbind):
        return _selects_for_unbind(plan)
    if isinstance(plan, SelectRows):
        return _select_rows(plan)
    return None


def edited_call(piece: Piece, call: ast.Call, edit: CallEdit) -> str | None:
    """The text of ``call`` after ``edit``."""
    text = piece.segment(call)
    if isinstance(edit, Rename):
        if not isinstance(call.func, ast.Attribute):
            return None
        func = piece.segment(call.func)
        if not func.endswith(call.func.attr) or not text.startswith(func):
            return None
        return func[: len(func) - len(call.func.attr)] + edit.name + text[len(func):]
    parsed = _parse_call(text)
    if parsed is None:
        return None
    args = list(parsed.args)
    for index, arg in enumerate(args):
        named = arg.keyword is not None and arg.keyword.value == edit.keyword
        positional = arg.keyword is None and not arg.star and index == edit.position
        if named or positional:
            del args[index]
            break
    else:
        return text
    import libcst

    if args:
        args[-1] = args[-1].with_changes(comma=libcst.MaybeSentinel.DEFAULT)
    return libcst.Module(body=[]).code_for_node(parsed.with_changes(args=args))


def _parse_call(text: str) -> cst.Call | None:
    """A call's text as a libcst node (imported here: only fixes need it)."""
    import libcst

    try:
        parsed = libcst.parse_expression(text)
    except (libcst.ParserSyntaxError, RecursionError, MemoryError):
        return None
    return parsed if isinstance(parsed, libcst.Call) else None


def _with_false_at(text: str, position: int) -> str | None:
    import libcst

    parsed = _parse_call(text)
    if parsed is None or position >= len(parsed.args):
        return None
    args = list(parsed.args)
    args[position] = args[position].with_changes(value=libcst.Name("False"))
    return libcst.Module(body=[]).code_for_node(parsed.with_changes(args=args))


def _out_of_place(plan: OutOfPlace) -> Fix | None:
    piece = plan.place.piece
    small = plan.place.statement
    replacement = edited_call(piece, plan.call, plan.edit)
    if replacement is None or plan.rebind is None:
        return None
    message = f"Use the out-of-place `{replacement}`"
    name = piece.segment(plan.rebind)
    if isinstance(small, ast.Expr) and _chain_starts_with(small.value, plan.call):
        value = _replaced(piece, small.value, plan.call, replacement)
        text = f"{name} = {value}"
        return Fix(f"{message}: `{text}`", (TextEdit(piece.span(small), text),))
    if isinstance(small, ast.Assign) and _chain_starts_with(small.value, plan.call):
        targets = [piece.segment(t) for t in small.targets]
        if name not in targets:
            targets.append(name)
        value = _replaced(piece, small.value, plan.call, replacement)
        text = "".join(f"{t} = " for t in targets) + value
        return Fix(f"{message}, assigned back to `{name}`",
                   (TextEdit(piece.span(small), text),))
    if isinstance(small, ast.Return) and small.value is plan.call and \
            isinstance(plan.rebind, ast.Name):
        return Fix(message, (TextEdit(piece.span(plan.call), replacement),))
    if isinstance(plan.rebind, ast.Name):
        return Fix(f"{message}, assigned back to `{name}`",
                   (TextEdit(piece.span(plan.call), f"({name} := {replacement})"),))
    return None


def _replaced(piece: Piece, outer: ast.expr, inner: ast.expr, replacement: str) -> str:
    """The text of ``outer`` with ``inner`` (which starts where it does) replaced."""
    whole = piece.segment(outer)
    return replacement + whole[len(piece.segment(inner)):]


def _chain_starts_with(value: ast.expr, call: ast.Call) -> bool:
    """Whether ``value`` is ``call`` or a chain of method calls on its result."""
    node: ast.expr = value
    while True:
        if node is call:
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value
        else:
            return False


def _drop_out(plan: DropOut) -> Fix | None:
    piece = plan.place.piece
    small = plan.place.statement
    target = piece.segment(plan.target)
    call = edited_call(piece, plan.call, DropArgument("out", None))
    if call is None:
        return None
    if isinstance(small, ast.Expr) and small.value is plan.call:
        text = f"{target} = {call}"
    elif isinstance(small, ast.Assign) and small.value is plan.call:
        text = "".join(f"{piece.segment(t)} = " for t in small.targets) + \
            f"{target} = {call}"
    else:
        return None
    return Fix(f"Assign the result instead of writing with out=: `{text}`",
               (TextEdit(piece.span(small), text),))


def _move_after(plan: MoveAfter) -> Fix | None:
    piece = plan.place.piece
    moved, after = plan.place.statement, plan.after.statement
    first, last = moved.lineno, moved.end_lineno or moved.lineno
    after_last = after.end_lineno or after.lineno
    if _indent(piece.line(first)) != _indent(piece.line(after.lineno)):
        return None
    text = "".join(piece.line(n) + "\n" for n in range(first, last + 1))
    delete = TextEdit(Span(piece.document_line(first), 1, piece.document_line(last + 1), 1),
                      "")
    end = piece.document_line(after_last)
    if piece.has_line_after(after_last):
        insert = TextEdit(Span(end + 1, 1, end + 1, 1), text)
    else:
        column = len(piece.line(after_last)) + 1
        insert = TextEdit(Span(end, column, end, column), "\n" + text.rstrip("\n"))
    statement = piece.segment(moved).strip().splitlines()[0]
    if isinstance(moved, ast.With):
        statement += " ..."  # the whole block moves
    return Fix(f"Move `{statement}` after the backward at line "
               f"{piece.document_line(after.lineno)} that still "
               "needs the parameters it updates (their gradients then include that "
               "backward's too)", (delete, insert))


def _indent(text: str) -> str:
    return text[: len(text) - len(text.lstrip(" \t"))]


def _mentions(statements: tuple[ast.stmt, ...], dotted: str) -> bool:
    """Whether any of the statements reads ``dotted`` (a name or ``self.x``)."""
    head = dotted.split(".")[0]
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and node.id == head and dotted == head:
                return True
            if isinstance(node, ast.Attribute) and dotted_text(node) == dotted:
                return True
    return False


def _under_no_grad(plan: UnderNoGrad) -> Fix | None:
    """The statement moved into a ``with torch.no_grad():`` block of its own."""
    torch = next((name for name, qualified in plan.place.aliases.items()
                  if qualified == "torch"), None)
    piece, statement = plan.place.piece, plan.place.statement
    if torch is None or _spans_a_string(statement):
        return None  # torch not imported by a name; re-indenting would change a string
    first, last = statement.lineno, statement.end_lineno or statement.lineno
    lines = [piece.line(n) for n in range(first, last + 1)]
    indent = _indent(lines[0])
    span = piece.span(statement)
    # Alone on its lines: not after a ``for ...:`` on the same line, nor beside another
    # statement (``a; b``); a comment after it moves with it.
    rest = lines[-1][span.end_column - 1:].strip()
    if span.column != len(indent) + 1 or (rest and not rest.startswith("#")):
        return None
    unit = "\t" if "\t" in indent else "    "
    body = "\n".join(unit + line if line.strip() else line for line in lines)
    text = f"{indent}with {torch}.no_grad():\n{body}"
    end = piece.document_line(last)
    root = piece.segment(plan.root)
    return Fix(f"Write `{root}` under `{torch}.no_grad()`: it is {plan.reason}, and "
               "the leaf stays a leaf that requires grad",
               (TextEdit(Span(piece.document_line(first), 1, end, len(lines[-1]) + 1), text),))


def _spans_a_string(statement: ast.stmt) -> bool:
    """Whether a string literal of the statement runs over more than one line."""
    return any((isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and
                                                    isinstance(node.value, (str, bytes))))
               and (node.end_lineno or node.lineno) > node.lineno
               for node in ast.walk(statement))


def _selects_for_unbind(plan: SelectsForUnbind) -> Fix | None:
    piece, call = plan.place.piece, plan.call
    assert isinstance(call.func, ast.Attribute)
    base = piece.segment(call.func.value)
    dims = call.args + [k.value for k in call.keywords if k.arg == "dim"]
    dim = piece.segment(dims[0]) if dims else "0"
    used = {node.id for node in ast.walk(call) if isinstance(node, ast.Name)}
    index = "i"
    while index in used:  # the generator's own name must not hide the base's or dim's
        index += "_"
    text = f"tuple({base}.select({dim}, {index}) for {index} in range({base}.size({dim})))"
    return Fix(f"Make the pieces single views, which autograd lets you write into (the "
               f"writes still reach `{base}`): `{text}`",
               (TextEdit(piece.span(call), text),))


_PURE = (ast.Name, ast.Attribute, ast.Subscript, ast.Constant, ast.Slice, ast.Tuple,
         ast.expr_context, ast.UnaryOp, ast.USub)


def _select_rows(plan: SelectRows) -> Fix | None:
    piece, iterated = plan.place.piece, plan.iterated
    # The expression is written out twice: it must read the same tensor each time.
    if not all(isinstance(node, _PURE) for node in ast.walk(iterated)):
        return None
    base = piece.segment(iterated)
    used = {node.id for node in ast.walk(iterated) if isinstance(node, ast.Name)}
    index = "i"
    while index in used:
        index += "_"
    text = f"({base}.select(0, {index}) for {index} in range({base}.size(0)))"
    return Fix(f"Iterate single views, which autograd lets you write into (the writes "
               f"still reach `{base}`): `{text}`", (TextEdit(piece.span(iterated), text),))


def clone_saved_input(saves: Sequence[Save], piece: Piece, root: ast.expr) -> Fix | None:
    """The saving call given a copy of its input, when that input is read from the
    tensor the same statement writes (``x[1] = conv(x[1])``)."""
    written = ast.dump(root)
    edits = []
    for save in saves:
        node = save.node
        if isinstance(node, ast.BinOp) and save.role in ("input", "other") and \
                save.piece is piece:
            operand = node.left if save.role == "input" else node.right  # ``h[1] @ w``
        elif save.role != "input" or not isinstance(node, ast.Call) or not node.args or \
                save.piece is not piece or isinstance(node.args[0], ast.Starred):
            return None
        else:
            operand = node.args[0]
        if not any(ast.dump(part) == written for part in ast.walk(operand)):
            return None
        text = piece.segment(operand)
        if not isinstance(operand, _ATOMS):
            text = f"({text})"
        edits.append(TextEdit(piece.span(operand), f"{text}.clone()"))
    if not edits:
        return None
    shown = edits[0].new_text
    return Fix(f"Give the op a copy: `{shown}`", tuple(dict.fromkeys(edits)))


def _in_statement(save: Save, place: Place) -> bool:
    # Line numbers count from the start of each piece (a block of the editor's text).
    line = getattr(save.node, "lineno", 0)
    statement = place.statement
    return save.piece is place.piece and \
        statement.lineno <= line <= (statement.end_lineno or statement.lineno)


def fix_of(finding: Finding) -> Fix | None:
    """The fix of a finding: its plan (or its in-place layer) as edits of the source, or
    None when there is none, or when it would edit another file than the finding's."""
    plan = finding.plan
    if isinstance(plan, (CloneFirst, CloneIfUsedLater)) and \
            any(_in_statement(save, plan.place) for save in finding.saves):
        # ``x[1] = conv(x[1])``: a copy made before the statement is what the conv
        # reads too; the conv gets the copy instead.
        fix = clone_saved_input(finding.saves, plan.place.piece, plan.root)
        written = ast.dump(plan.root)
        if fix is None and not any(ast.dump(part) == written for save in finding.saves
                                   for part in ast.walk(save.node)):
            # The op saved a view taken earlier (``h_t[layer] = tanh(input_t @ w)``): a
            # copy made before the statement leaves that view alone.
            fix = plan_fix(plan)
    else:
        fix = plan_fix(plan) if plan is not None else None
    if fix is None and finding.layer is not None and \
            finding.layer.piece.path == finding.piece.path:
        fix = layer_fix(finding.layer)
    if fix is None and finding.layer is not None and finding.layer.switched is not None:
        fix = switch_fix(*finding.layer.switched)
    if fix is not None and finding.plan is not None and \
            finding.plan.place.piece.path != finding.piece.path:
        return None  # an edit in another file than the one reported on
    return fix
