"""The index of one module: its imports, classes, functions and script statements.

Definitions found in other files of the project are reached through
``Program.project`` (:mod:`gradguard.analysis.project`); a program alone knows only
its own file.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from gradguard.analysis.names import CONVENTIONAL_ALIASES, dotted_name, imported_names, qualify
from gradguard.analysis.syntax import Piece


class Project(Protocol):
    """What a program asks of the project it belongs to (``analysis.project.Project``;
    named here by its shape, so that the two modules do not import each other)."""

    def resolve(self, importer: Program, qualified: str,
                reads: Reads | None = None) -> Definition | None: ...

    def module_file(self, importer: str, module: str,
                    reads: Reads | None = None) -> str | None: ...

    def program(self, path: str, reads: Reads | None = None) -> Program | None: ...

    def in_library(self, path: str) -> bool: ...

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(eq=False)
class FunctionInfo:
    node: FunctionNode
    piece: Piece
    # The file it is in (its program is found by path: no cycle between the two).
    path: str
    # Defined inside another function (a closure the analysis runs like a method).
    nested: bool = False
    # The functions a nested function sees in the function around it (defined there
    # before it, and itself): ``def norm_range(t): norm_ip(t, ...)`` calls its sibling.
    outer: dict[str, FunctionInfo] = field(default_factory=dict)
    # A closure's defining frame (an interpreter ``Frame``; ``object`` here so that the
    # index does not import the interpreter): the names its body reads and does not bind
    # are looked up there when it is called, as Python binds them late.
    scope: object = None
    # Its parameters' default values, evaluated where it was defined (interpreter
    # ``Value``s), as Python evaluates them once, at the ``def`` or ``lambda``.
    defaults: dict[str, object] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.node.name


@dataclass(eq=False)
class ClassInfo:
    name: str
    node: ast.ClassDef
    path: str
    bases: tuple[str, ...]  # qualified through the module's imports
    methods: dict[str, FunctionInfo] = field(default_factory=dict)
    staticmethods: frozenset[str] = frozenset()
    # The piece holding the class statement (its class-level assignments are read there).
    piece: Piece | None = None


Definition = ClassInfo | FunctionInfo


@dataclass
class Reads:
    """What an analysis looked up in programs, and what it found then.

    Its results hold as long as every lookup would find the same again: the same
    function and method nodes (or still none), the same base classes.
    Keys: (path, "class" | "function", name) or (path, "method", class, name).
    """

    found: dict[tuple[str, ...], object] = field(default_factory=dict)
    # Every file whose text, or whose being there or not, an answer depended on: the
    # files read, and the names an import was looked for under that did not exist (a
    # file created there later changes where the import leads).
    files: set[str] = field(default_factory=set)
    # The memoised lookups' reads merged in already, by identity (held, so that an id is
    # not reused): a name is resolved at each evaluation, its reads merged each time.
    _merged: dict[int, Reads] = field(default_factory=dict, compare=False, repr=False)

    def names(self) -> frozenset[tuple[str, str]]:
        """(path, what was looked up) of every lookup, as ``definition_names`` has them:
        ``C`` for a class's bases, ``C.m`` for a method, ``f`` for a function,
        ``alias n`` for an imported name, ``module m`` for an import's file."""
        return frozenset((key[0], _name(key)) for key in self.found)

    def paths(self) -> frozenset[str]:
        return frozenset(key[0] for key in self.found) | self.files

    def update(self, other: Reads) -> None:
        self.found.update(other.found)
        self.files |= other.files

    def update_once(self, other: Reads) -> None:
        """``update`` with reads that no longer change (a memoised lookup's): merging
        them again would add nothing."""
        if self._merged.get(id(other)) is not other:
            self._merged[id(other)] = other
            self.update(other)

    def still_hold(self, programs: Mapping[str, Program | None]) -> bool:
        # Bases compare by value, nodes by identity (ast nodes have no __eq__).
        return all(_look(programs.get(key[0]), key) == seen
                   for key, seen in self.found.items())


def _name(key: tuple[str, ...]) -> str:
    kind = key[1]
    if kind == "method":
        return f"{key[2]}.{key[3]}"
    if kind in ("alias", "module"):
        return f"{kind} {key[2]}"
    return key[2]


def changed_names(before: Program | None, after: Program | None,
                  path: str | None = None) -> set[tuple[str, str]]:
    """What a lookup could find differently in ``after`` than in ``before`` (either may
    be missing: a file that does not parse), named as ``Reads.names`` names lookups: an
    edit inside one method changes that method only."""
    empty = Program(path or "", [], {}, {}, {})
    before, after = before or empty, after or empty
    path = path or after.path
    changed = {(path, f"alias {name}") for name in before.aliases.keys() | after.aliases.keys()
               if before.aliases.get(name) != after.aliases.get(name)}
    for name in before.classes.keys() | after.classes.keys():
        old, new = before.classes.get(name), after.classes.get(name)
        if old is None or new is None or old.bases != new.bases:
            changed.add((path, name))
        old_methods = {} if old is None else old.methods
        new_methods = {} if new is None else new.methods
        for method in old_methods.keys() | new_methods.keys():
            old_m, new_m = old_methods.get(method), new_methods.get(method)
            if old_m is None or new_m is None or old_m.node is not new_m.node:
                changed.add((path, f"{name}.{method}"))
    for name in before.functions.keys() | after.functions.keys():
        old_f, new_f = before.functions.get(name), after.functions.get(name)
        if old_f is None or new_f is None or old_f.node is not new_f.node:
            changed.add((path, name))
    return changed


def _look(program: Program | None, key: tuple[str, ...]) -> object:
    if program is None:
        return None
    kind = key[1]
    if kind == "alias":
        return program.aliases.get(key[2])
    if kind == "module":
        project = program.project
        return None if project is None else project.module_file(key[0], key[2])
    if kind == "class":
        info = program.classes.get(key[2])
        return None if info is None else info.bases
    if kind == "function":
        function = program.functions.get(key[2])
        return None if function is None else function.node
    info = program.classes.get(key[2])
    method = None if info is None else info.methods.get(key[3])
    return None if method is None else method.node


@dataclass(eq=False)
class Program:
    path: str
    # Module-level statements other than definitions, each with the piece holding it.
    statements: list[tuple[Piece, ast.stmt]]
    aliases: dict[str, str]
    classes: dict[str, ClassInfo]
    functions: dict[str, FunctionInfo]
    project: Project | None = None

    def qualify(self, node: ast.AST, reads: Reads | None = None) -> str | None:
        name = dotted_name(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        full = self.alias(head, reads)
        if full is None:
            return name
        return f"{full}.{rest}" if rest else full

    def alias(self, name: str, reads: Reads | None = None) -> str | None:
        """What an imported name stands for (recorded: an import can change it)."""
        found = self.aliases.get(name)
        if reads is not None:
            reads.found[(self.path, "alias", name)] = found
        return found

    # -- lookups (each recorded in ``reads``) -------------------------------------------

    def class_info(self, name: str, reads: Reads | None = None) -> ClassInfo | None:
        """A class by the name this module uses for it (its own, or imported)."""
        info = self.classes.get(name)
        if reads is not None:
            reads.found[(self.path, "class", name)] = None if info is None else info.bases
        if info is None and self.project is not None:
            qualified = self.alias(name, reads)
            if qualified is not None:
                found = self.project.resolve(self, qualified, reads)
                return found if isinstance(found, ClassInfo) else None
        return info

    def function(self, name: str, reads: Reads | None = None) -> FunctionInfo | None:
        function = self.functions.get(name)
        if reads is not None:
            reads.found[(self.path, "function", name)] = \
                None if function is None else function.node
        if function is None and self.project is not None:
            qualified = self.alias(name, reads)
            if qualified is not None:
                found = self.project.resolve(self, qualified, reads)
                return found if isinstance(found, FunctionInfo) else None
        return function

    def definition(self, qualified: str, reads: Reads | None = None) -> Definition | None:
        """A class or function of the project by qualified name (``models.Net``)."""
        if self.project is None:
            return None
        return self.project.resolve(self, qualified, reads)

    def program_of(self, path: str) -> Program | None:
        """The program of a file: this one, or another of the project."""
        if path == self.path:
            return self
        return None if self.project is None else self.project.program(path)

    def base_class(self, info: ClassInfo, base: str,
                   reads: Reads | None = None) -> ClassInfo | None:
        program = self.program_of(info.path)
        if program is None:
            return None
        local = program.classes.get(base)
        if reads is not None:
            reads.found[(program.path, "class", base)] = None if local is None else local.bases
        if local is not None:
            return local
        found = program.definition(base, reads)
        return found if isinstance(found, ClassInfo) else None

    def is_module_class(self, info: ClassInfo, reads: Reads | None = None) -> bool:
        seen: set[int] = set()
        todo = [info]
        while todo:
            current = todo.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            for base in current.bases:
                if base.startswith("torch.nn."):
                    return True
                found = self.base_class(current, base, reads)
                if found is not None:
                    todo.append(found)
        return False

    def method(self, info: ClassInfo, name: str,
               reads: Reads | None = None) -> tuple[ClassInfo, FunctionInfo] | None:
        """A method looked up through the class and its bases in the project."""
        seen: set[int] = set()
        todo = [info]
        while todo:
            current = todo.pop(0)
            if id(current) in seen:
                continue
            seen.add(id(current))
            found = current.methods.get(name)
            if reads is not None:
                path = current.path
                reads.found[(path, "class", current.name)] = current.bases
                reads.found[(path, "method", current.name, name)] = \
                    None if found is None else found.node
            if found is not None:
                return current, found
            for base in current.bases:
                base_info = self.base_class(current, base, reads)
                if base_info is not None:
                    todo.append(base_info)
        return None


def decorator_names(node: FunctionNode) -> list[str]:
    names = []
    for decorator in node.decorator_list:
        expr = decorator.func if isinstance(decorator, ast.Call) else decorator
        names.append(dotted_name(expr) or "")
    return names


@dataclass(frozen=True)
class StatementIndex:
    """What one top-level statement adds to the index: found once per parsed statement
    (an editor session keeps it while the statement's node is unchanged)."""

    imports: tuple[tuple[str, str], ...] = ()
    class_name: str | None = None
    bases: tuple[str, ...] = ()  # dotted, as written
    methods: tuple[tuple[str, FunctionNode], ...] = ()
    staticmethods: frozenset[str] = frozenset()
    function: FunctionNode | None = None


def index_statement(statement: ast.stmt) -> StatementIndex:
    if isinstance(statement, ast.ClassDef):
        bases = tuple(name for name in (dotted_name(base) for base in statement.bases)
                      if name is not None)
        methods = tuple((item.name, item) for item in statement.body
                        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)))
        static = frozenset(name for name, item in methods
                           if "staticmethod" in decorator_names(item))
        return StatementIndex(class_name=statement.name, bases=bases, methods=methods,
                              staticmethods=static)
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return StatementIndex(function=statement)
    return StatementIndex(imports=tuple(imported_names(statement)))


def build_program(
    path: str,
    statements: Iterable[tuple[Piece, ast.stmt]],
    indexes: list[StatementIndex] | None = None,
    method_pieces: Mapping[ast.AST, Piece] | None = None,
    project: Project | None = None,
) -> Program:
    """Index top-level statements (of one module, or of a document's blocks in order).

    ``indexes`` are the statements' own, if known already; ``method_pieces`` says which
    piece holds a method when it is not its class's (an editor reparses methods apart).
    """
    entries = list(statements)
    if indexes is None:
        indexes = [index_statement(statement) for _, statement in entries]
    aliases = dict(CONVENTIONAL_ALIASES)
    for index in indexes:
        aliases.update(index.imports)
    program = Program(path, [], aliases, {}, {}, project)
    pieces = method_pieces or {}
    for (piece, statement), index in zip(entries, indexes, strict=True):
        if index.class_name is not None and isinstance(statement, ast.ClassDef):
            info = ClassInfo(index.class_name, statement, path,
                             tuple(qualify(base, aliases) for base in index.bases),
                             staticmethods=index.staticmethods, piece=piece)
            info.methods = {name: FunctionInfo(node, pieces.get(node, piece), path)
                            for name, node in index.methods}
            program.classes[info.name] = info
        elif index.function is not None:
            program.functions[index.function.name] = FunctionInfo(index.function, piece, path)
        elif not isinstance(statement, ast.ClassDef):
            program.statements.append((piece, statement))
    return program
