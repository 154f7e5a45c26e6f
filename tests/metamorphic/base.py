"""What every transformation shares: its interface, and the libcst plumbing to rewrite
one statement line into several, keep a marked line's comment on the lines that carry
its operation, and add module-level definitions.

A transformation keeps what the program computes. When the shape it rewrites is not in a
file it returns None (not applied); the harness counts that.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import libcst as cst

from tests.metamorphic.programs import Program

# Names the transformations introduce start with this: no corpus or case file uses it.
PREFIX = "_mm_"
MARKER = re.compile(r"\[inplace\]|expect:")
BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True)
class Transformation:
    """A named rewrite of whole programs; ``rewrite`` returns None when it does not
    apply."""

    name: str
    group: str
    rewrite: Callable[[Program], Program | None]

    @property
    def doc(self) -> str:
        return (self.rewrite.__doc__ or "").strip()

    def apply(self, program: Program) -> Program | None:
        return self.rewrite(program)


def per_file(rewrite_module: Callable[[cst.Module], cst.Module | None],
             needs: Sequence[str] = ()) -> Callable[[Program], Program | None]:
    """A program rewrite that rewrites each of its files on its own; applied when one
    file changed. A file whose text lacks one of ``needs`` is not walked at all (walking
    a tree is what a run spends its time on)."""

    def rewrite(program: Program) -> Program | None:
        changed = False
        modules = {}
        for name, module in program.modules.items():
            text = program.texts[name]
            new = None if not all(n in text for n in needs) else rewrite_module(module)
            changed |= new is not None
            modules[name] = module if new is None else new
        return Program(program.entry, modules) if changed else None

    rewrite.__doc__ = rewrite_module.__doc__
    return rewrite


def comment(line: cst.SimpleStatementLine) -> str:
    """The hazard marker of a line (its trailing comment, or a comment inside the
    statement, as in a call split over lines), with two spaces before it, else ''."""
    found = line.trailing_whitespace.comment
    if found is not None and MARKER.search(found.value):
        return "  " + found.value
    inner: list[str] = []

    class Comments(cst.CSTVisitor):
        def visit_Comment(self, node: cst.Comment) -> None:
            if MARKER.search(node.value):
                inner.append(node.value)

    line.visit(Comments())
    return "  " + inner[0] if inner else ""


def statements(code: str) -> list[cst.BaseStatement]:
    return list(cst.parse_module(code).body)


def has_name(node: cst.CSTNode, names: Sequence[str]) -> bool:
    """Whether a Name of ``names`` occurs below ``node``."""
    found = False

    class Finder(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            nonlocal found
            found = found or name.value in names

    node.visit(Finder())
    return found


# Expressions that do not survive being moved into another scope: zero-argument super()
# and the names only a function body can hold.
_UNMOVABLE = (cst.Yield, cst.Await, cst.NamedExpr)


def movable(node: cst.CSTNode) -> bool:
    bad = False

    class Finder(cst.CSTVisitor):
        def on_visit(self, child: cst.CSTNode) -> bool:
            nonlocal bad
            bad = bad or isinstance(child, _UNMOVABLE) or (
                isinstance(child, cst.Name) and child.value in ("super", "__class__"))
            return not bad

    node.visit(Finder())
    return not bad


def is_inplace_call(node: cst.BaseExpression) -> bool:
    """``obj.name_(...)``: a method whose name ends with one underscore (torch's in-place
    spelling)."""
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and node.func.attr.value.endswith("_") and not node.func.attr.value.startswith("_"))


def inplace_expression(line: cst.SimpleStatementLine) -> cst.Call | None:
    """The call of a line that is only an in-place method call (``y.relu_()``)."""
    if len(line.body) != 1 or not isinstance(line.body[0], cst.Expr):
        return None
    value = line.body[0].value
    return value if is_inplace_call(value) and isinstance(value, cst.Call) else None


def call_assignment(line: cst.SimpleStatementLine) -> tuple[cst.Assign, cst.Call] | None:
    """``target = f(...)`` with one plain-name target."""
    if len(line.body) != 1 or not isinstance(line.body[0], cst.Assign):
        return None
    assign = line.body[0]
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return None
    if not isinstance(assign.value, cst.Call):
        return None
    return assign, assign.value


class LineRewriter(cst.CSTTransformer):
    """Rewrites single-statement lines, one at a time, knowing the scope each is in
    ("module", "function" or "class"). Subclasses implement ``rewrite_line``: the
    replacement code (indented as at module level) or None to leave the line."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__()
        self.module = module
        self.scopes: list[str] = ["module"]
        self.count = 0
        self.top: list[str] = []  # module-level definitions to add, as code

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"{PREFIX}{stem}{self.count}"

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append("function")

    def leave_FunctionDef(self, original: cst.FunctionDef,
                          updated: cst.FunctionDef) -> cst.FunctionDef:
        self.scopes.pop()
        return updated

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scopes.append("class")

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self.scopes.pop()
        return updated

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine,
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        if len(original.body) != 1:
            return updated
        code = self.rewrite_line(original, self.scopes[-1])
        if code is None:
            return updated
        new = statements(code)
        # the line's own leading comments and blank lines stay in front of it
        new[0] = new[0].with_changes(leading_lines=original.leading_lines)
        return cst.FlattenSentinel(new)

    def rewrite_line(self, line: cst.SimpleStatementLine, scope: str) -> str | None:
        raise NotImplementedError


def run_rewriter(factory: Callable[[cst.Module], LineRewriter],
                 module: cst.Module) -> cst.Module | None:
    """Apply a line rewriter; None when it rewrote nothing. Its module-level definitions
    go after the imports at the head of the module."""
    rewriter = factory(module)
    new = module.visit(rewriter)
    if not rewriter.count:
        return None
    if rewriter.top:
        new = add_top(new, statements("\n".join(rewriter.top)))
    return new


def _is_future_or_docstring(statement: cst.BaseStatement, first: bool) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    if isinstance(small, cst.ImportFrom) and isinstance(small.module, cst.Name):
        return small.module.value == "__future__"
    return first and isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString)


def add_top(module: cst.Module, new: Sequence[cst.BaseStatement]) -> cst.Module:
    """The module with ``new`` after the imports at its head."""
    body = list(module.body)
    at = import_block_end(module)
    return module.with_changes(body=[*body[:at], *new, *body[at:]])


def keyword_param(name: str, default: cst.BaseExpression) -> cst.Param:
    """``name=default``, spelled as in a signature."""
    return cst.Param(cst.Name(name), default=default, equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))


def is_import(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)


def import_block_end(module: cst.Module) -> int:
    """Index after the imports at the head of the module (docstring and ``__future__``
    first): where a definition that reads imported names when it runs can go."""
    body = module.body
    at = 0
    while at < len(body) and (_is_future_or_docstring(body[at], at == 0) or is_import(body[at])):
        at += 1
    return at


def imported_names(module: cst.Module, end: int) -> set[str]:
    """Names bound by the imports among the first ``end`` statements."""
    names: set[str] = set()
    for statement in module.body[:end]:
        if not is_import(statement):
            continue
        assert isinstance(statement, cst.SimpleStatementLine)
        for small in statement.body:
            if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(
                    small.names, cst.ImportStar):
                for alias in small.names:
                    if alias.asname is not None:
                        names.add(cst.ensure_type(alias.asname.name, cst.Name).value)
                    elif isinstance(small, cst.Import):
                        names.add(module.code_for_node(alias.name).split(".")[0])
                    else:
                        names.add(module.code_for_node(alias.name))
    return names
