"""Inside one function: the assignments that carry a tensor from where it arrived to
where it is used (``z = y.view(-1)``, ``h = y``, ``self.h = h``, ``hs.append(h)``).

The analysis follows values, not names, and keeps no record of the assignments a
value went through; a chain only needs to show them, so they are read back from the
code: from the use, the latest earlier assignment of the name used, then of the name
that one read, and so on, until the place the tensor arrived at (a call that returned
it, or the saving op) or a parameter. A walk that meets anything else (a new tensor
computed, a name bound by something it cannot read) shows nothing rather than a guess.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache

from gradguard.analysis.findings import Site
from gradguard.analysis.names import dotted_name
from gradguard.analysis.syntax import Piece, SourceError, parse
from gradguard.facts.table import Facts

# Longest walk back through assignments (a chain is read by a person).
MOST_STEPS = 12
# Results that are their input or share its storage: an assignment from one carries it.
SHARING = ("view", "views", "view_pieces", "input")
# Module functions written as ``module.f(x)``: the tensor written is an operand, not
# the receiver.
MODULES = ("torch", "F", "nn", "np", "math")

Scope = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Carried:
    """One assignment a tensor went through: the statement, and the name it is then."""

    kind: str  # view, alias, attribute, item
    node: ast.AST
    text: str
    # The name the tensor goes by after this step (what is passed on, or written).
    name: str


@lru_cache(maxsize=8)
def parsed(text: str) -> ast.Module | None:
    """A piece's text parsed again: its nodes lie where the analysis' nodes lie."""
    try:
        return parse(text)
    except SourceError:
        return None


def node_at(text: str, kind: str, line: int, column: int, end_line: int,
            end_column: int) -> ast.AST | None:
    """The node of a parse of ``text`` of this type at this place (``ast``'s lines and
    UTF-8 columns)."""
    return _places(text).get((kind, line, column, end_line, end_column))


@lru_cache(maxsize=4)
def _places(text: str) -> dict[tuple[str, int, int, int, int], ast.AST]:
    tree = parsed(text)
    found: dict[tuple[str, int, int, int, int], ast.AST] = {}
    for node in ast.walk(tree) if tree is not None else ():
        line, end_line = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        if line is not None and end_line is not None:
            found.setdefault((type(node).__name__, line, node.col_offset,  # type: ignore[attr-defined]
                              end_line, node.end_col_offset), node)  # type: ignore[attr-defined]
    return found


def enclosing_function(tree: ast.Module, line: int) -> Scope:
    """The innermost function holding ``line``, else the module."""
    found: Scope = tree
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.lineno <= line <= (node.end_lineno or node.lineno):
                if not isinstance(node, ast.ClassDef):
                    found = node
                todo = list(node.body)
            continue
        todo.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt))
    return found


def _statements(scope: Scope) -> list[ast.stmt]:
    """The scope's statements in source order, nested blocks included, nested
    functions and classes left out (their names are theirs)."""
    found: list[ast.stmt] = []
    todo: list[ast.stmt] = list(reversed(scope.body))
    while todo:
        statement = todo.pop()
        found.append(statement)
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        children = [child for child in ast.iter_child_nodes(statement)
                    if isinstance(child, ast.stmt)]
        for handler in getattr(statement, "handlers", []):
            children += handler.body
        todo.extend(reversed(children))
    found.sort(key=lambda s: (s.lineno, s.col_offset))
    return found


def _contains(outer: ast.AST, inner: ast.AST) -> bool:
    start = (getattr(outer, "lineno", 0), getattr(outer, "col_offset", 0))
    end = (getattr(outer, "end_lineno", 0), getattr(outer, "end_col_offset", 0))
    at = (getattr(inner, "lineno", -1), getattr(inner, "col_offset", -1))
    return start <= at < end or at == start


def _peeled(node: ast.AST, facts: Facts) -> str | None:
    """The name a written or read expression is a part of: ``x`` of ``x[..., 2:4]``,
    of ``x.view(-1)[0]`` and of ``x.data``."""
    while True:
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                _shares(node.func.attr, facts):
            node = node.func.value
        elif isinstance(node, ast.Attribute) and node.attr == "data":
            node = node.value
        else:
            return dotted_name(node)


def _shares(method: str, facts: Facts) -> bool:
    effect = facts.methods.get(method) or facts.inplace_method(method)
    return effect is not None and effect.returns in SHARING


def written_base(piece: Piece, node: ast.AST, facts: Facts) -> str | None:
    """The name of the tensor a write writes (``preds`` of ``preds[..., 2:4] = ...``);
    None for a write made inside a layer."""
    target: ast.AST | None = None
    if isinstance(node, ast.Call):
        out = next((k.value for k in node.keywords if k.arg == "out"), None)
        func = node.func
        head = (dotted_name(func) or "").split(".")[0]
        if out is not None:
            target = out
        elif isinstance(func, ast.Attribute) and head not in MODULES:
            target = func.value
        elif node.args:
            target = node.args[0]
    elif isinstance(node, ast.AugAssign):
        target = node.target
    elif isinstance(node, ast.Assign):
        target = node.targets[0]
    elif isinstance(node, (ast.Subscript, ast.Name, ast.Attribute)):
        target = node
    return None if target is None else _peeled(target, facts)


def returned_from(piece: Piece, node: ast.AST) -> ast.Return | None:
    """The ``return`` that hands back what the op at ``node`` made: the first one after
    it in its function (none in ``__init__``, where layers are only built)."""
    tree = parsed(piece.text)
    line = getattr(node, "lineno", 0)
    if tree is None:
        return None
    scope = enclosing_function(tree, line)
    if isinstance(scope, ast.Module) or scope.name == "__init__":
        return None
    for statement in _statements(scope):
        if isinstance(statement, ast.Return) and statement.value is not None and \
                statement.lineno > line:
            return statement
    return None


def carried_into(piece: Piece, at: ast.AST, start: Site | None, facts: Facts,
                 target: str | None = None) -> tuple[list[Carried], str | None]:
    """The assignments that carry the tensor from ``start`` (a call that returned it or
    the op that saved it; None: a parameter) to ``at``: the write of ``target``, or, when
    ``target`` is None, the call ``at`` it is passed into (through one of its arguments).
    In the order they run, with the name it is used by at ``at``; no steps when the
    walk cannot tell."""
    tree = parsed(piece.text)
    if tree is None:
        return [], None
    scope = enclosing_function(tree, getattr(at, "lineno", 0))
    statements = _statements(scope)
    stop = start[1] if start is not None and start[0].text == piece.text and \
        _inside(scope, start[1]) else None
    walk = _Walk(piece, statements, _parameters(scope), stop, facts)
    if target is not None:
        return walk.back_from(target, at) or [], target
    if not isinstance(at, ast.Call):
        return [], None
    arguments = [*at.args, *(k.value for k in at.keywords)]
    fallback: tuple[list[Carried], str | None] = ([], None)
    for argument in arguments:
        name = _peeled(argument, facts)
        if name is None:
            continue
        found = walk.back_from(name, at)
        if found is None:
            continue
        if walk.reached:
            return found, name
        if fallback[1] is None:
            fallback = (found, name)
    return fallback


def _inside(scope: Scope, node: ast.AST) -> bool:
    line = getattr(node, "lineno", 0)
    if isinstance(scope, ast.Module):
        return True
    return scope.lineno <= line <= (scope.end_lineno or scope.lineno)


def _parameters(scope: Scope) -> set[str]:
    if isinstance(scope, ast.Module):
        return set()
    arguments = scope.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return {a.arg for a in every}


class _Walk:
    """Back from a use through the assignments of one function (see the module)."""

    def __init__(self, piece: Piece, statements: list[ast.stmt], parameters: set[str],
                 stop: ast.AST | None, facts: Facts) -> None:
        self.piece = piece
        self.statements = statements
        self.parameters = parameters
        self.stop = stop
        self.facts = facts
        # Whether the last walk ended at ``stop`` (rather than at a parameter).
        self.reached = False

    def back_from(self, name: str, use: ast.AST) -> list[Carried] | None:
        """The steps from where the tensor arrived to ``use``, or None when the walk
        cannot tell where it came from."""
        self.reached = False
        steps: list[Carried] = []
        before = getattr(use, "lineno", 0)
        stop_line = getattr(self.stop, "lineno", None)
        for _ in range(MOST_STEPS):
            binder = self._binder(name, before)
            if binder is None:
                # Nothing binds it in this function: it came in as a parameter (or
                # through ``self``), or is the saved operand itself.
                if name.split(".")[0] in self.parameters | {"self"} or stop_line is not None:
                    return steps[::-1]
                return None
            if self.stop is not None and _contains(binder, self.stop):
                self.reached = True
                return steps[::-1]
            if stop_line is not None and binder.lineno < stop_line:
                return steps[::-1]  # bound before the save: the saved operand itself
            step = self._step(binder, name)
            if step is None:
                return None
            steps.append(step[0])
            name, before = step[1], binder.lineno
        return steps[::-1]

    def _binder(self, name: str, before: int) -> ast.stmt | None:
        found = None
        for statement in self.statements:
            if statement.lineno >= before:
                break
            if name in _bound(statement):
                found = statement
        return found

    def _step(self, binder: ast.stmt, name: str) -> tuple[Carried, str] | None:
        quote = " ".join(self.piece.segment(binder).split())
        if isinstance(binder, ast.Expr):  # ``hs.append(h)``
            call = binder.value
            assert isinstance(call, ast.Call)
            item = _peeled(call.args[0], self.facts) if call.args else None
            if item is None:
                return None
            return Carried("item", binder, f"`{quote}` puts `{item}` into `{name}`",
                           name), item
        if isinstance(binder, (ast.For, ast.AsyncFor)):
            source = _peeled(binder.iter, self.facts)
            if source is None:
                return None
            return Carried("item", binder, f"`{name}` is each item of `{source}` "
                           f"(`{_head(quote)}`)", name), source
        value = _assigned(binder, name)
        if value is None:
            return None
        source = _peeled(value, self.facts)
        if source is None:
            return None
        if isinstance(value, (ast.Name, ast.Attribute)):
            kind = "alias" if "." not in name and "." not in source else "attribute"
            said = f"`{name}` is `{source}`, the same tensor"
            if kind == "attribute":
                said = f"the attribute `{name}` holds `{source}`" if "." in name \
                    else f"`{name}` is read from the attribute `{source}`"
        else:
            kind = "view"
            said = f"`{name}` is a view or an item of `{source}`: it shares its storage " \
                "and version counter"
        return Carried(kind, binder, f"`{quote}`: {said}", name), source


def _head(text: str) -> str:
    return text.split(":")[0] + ":" if ":" in text else text


def _bound(statement: ast.stmt) -> set[str]:
    """The names (and ``self.x`` attributes) a statement binds a value to, and the
    lists it appends to."""
    targets: list[ast.expr] = []
    if isinstance(statement, ast.Assign):
        targets = list(statement.targets)
    elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
        targets = [statement.target]
    elif isinstance(statement, (ast.For, ast.AsyncFor)):
        targets = [statement.target]
    elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) and \
            isinstance(statement.value.func, ast.Attribute) and \
            statement.value.func.attr == "append":
        name = dotted_name(statement.value.func.value)
        return {name} if name else set()
    names: set[str] = set()
    for target in targets:
        for part in ast.walk(target):
            if isinstance(part, (ast.Name, ast.Attribute)):
                name = dotted_name(part)
                if name:
                    names.add(name)
    return names


def _assigned(binder: ast.stmt, name: str) -> ast.expr | None:
    """The expression ``binder`` assigns to ``name`` (its part, when unpacked from a
    tuple written out)."""
    if isinstance(binder, ast.Assign):
        targets, value = binder.targets, binder.value
    elif isinstance(binder, ast.AnnAssign) and binder.value is not None:
        targets, value = [binder.target], binder.value
    else:
        return None
    for target in targets:
        if dotted_name(target) == name:
            return value
        if isinstance(target, (ast.Tuple, ast.List)):
            for index, part in enumerate(target.elts):
                if dotted_name(part) == name:
                    if isinstance(value, (ast.Tuple, ast.List)) and \
                            len(value.elts) == len(target.elts):
                        return value.elts[index]
                    return value  # unpacked from one op's results (``chunk``)
    return None


def scope_of(piece: Piece, node: ast.AST) -> Scope | None:
    """The function (or module) of ``piece`` holding ``node``."""
    tree = parsed(piece.text)
    return None if tree is None else enclosing_function(tree, getattr(node, "lineno", 0))


def call_of(scope: Scope, names: set[str], after: int = 0, before: int | None = None,
            last: bool = False) -> ast.Call | None:
    """The first (or ``last``) call of a function named one of ``names`` (``name(...)``,
    ``x.name(...)``) in ``scope``'s own statements between two lines."""
    found = None
    for statement in _statements(scope):
        if statement.lineno <= after or before is not None and statement.lineno > before:
            continue
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Call) and _called_name(node.func) in names and \
                    (before is None or node.lineno <= before) and node.lineno > after:
                if not last:
                    return node
                found = node
    return found


def names_calling(tree: ast.Module, function: ast.FunctionDef | ast.AsyncFunctionDef,
                  scope: Scope) -> set[str]:
    """The names a call of ``function`` goes by in ``scope``: its own, and for a layer's
    ``forward`` (or ``__call__``) the names ``scope`` binds instances of its class to
    (``model = Net()``, then ``model(x)``)."""
    names = {function.name}
    if function.name not in ("forward", "__call__"):
        return names
    owner = next((node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
                  and function in node.body), None)
    if owner is None:
        return names
    for statement in _statements(scope):
        if not isinstance(statement, ast.Assign):
            continue
        for target in statement.targets:
            pairs = [(target, statement.value)]
            if isinstance(target, ast.Tuple) and isinstance(statement.value, ast.Tuple) and \
                    len(target.elts) == len(statement.value.elts):
                pairs = list(zip(target.elts, statement.value.elts, strict=True))
            for name, value in pairs:
                if isinstance(value, ast.Call) and _called_name(value.func) == owner and \
                        isinstance(name, (ast.Name, ast.Attribute)):
                    names.add(name.id if isinstance(name, ast.Name) else name.attr)
    return names


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None
