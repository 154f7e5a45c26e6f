"""The index of one module: its imports, classes and functions, found without analysis."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from gradguard.analysis.names import (
    CONVENTIONAL_ALIASES,
    dotted_name,
    imported_names,
    qualify,
)


@dataclass
class ClassInfo:
    name: str
    node: cst.ClassDef
    bases: list[str]
    methods: dict[str, cst.FunctionDef] = field(default_factory=dict)
    staticmethods: set[str] = field(default_factory=set)


@dataclass
class Reads:
    """What one interpretation looked up in the program, and what it found.

    Its results hold as long as every lookup would find the same again: the same
    function and method nodes (or still none), the same base classes.
    """

    classes: dict[str, tuple[str, ...] | None] = field(default_factory=dict)
    functions: dict[str, cst.FunctionDef | None] = field(default_factory=dict)
    # (class, name) -> the method the class itself defines under that name, if any.
    methods: dict[tuple[str, str], cst.FunctionDef | None] = field(default_factory=dict)

    def names(self) -> frozenset[str]:
        """Every class and function name a lookup asked for."""
        return frozenset(self.classes) | frozenset(self.functions) | \
            frozenset(class_name for class_name, _ in self.methods)

    def still_hold(self, program: Program) -> bool:
        for name, bases in self.classes.items():
            info = program.classes.get(name)
            if (None if info is None else tuple(info.bases)) != bases:
                return False
        for name, function in self.functions.items():
            if program.functions.get(name) is not function:
                return False
        for (class_name, name), method in self.methods.items():
            info = program.classes.get(class_name)
            if info is None or info.methods.get(name) is not method:
                return False
        return True


@dataclass
class Program:
    statements: list[cst.BaseStatement]
    aliases: dict[str, str]
    classes: dict[str, ClassInfo]
    functions: dict[str, cst.FunctionDef]

    def qualify(self, node: cst.BaseExpression) -> str | None:
        name = dotted_name(node)
        return None if name is None else qualify(name, self.aliases)

    def class_info(self, name: str, reads: Reads | None = None) -> ClassInfo | None:
        info = self.classes.get(name)
        if reads is not None:
            reads.classes[name] = None if info is None else tuple(info.bases)
        return info

    def function(self, name: str, reads: Reads | None = None) -> cst.FunctionDef | None:
        function = self.functions.get(name)
        if reads is not None:
            reads.functions[name] = function
        return function

    def is_module_class(self, name: str, reads: Reads | None = None,
                        seen: frozenset[str] = frozenset()) -> bool:
        info = self.class_info(name, reads)
        if info is None or name in seen:
            return False
        for base in info.bases:
            if base.startswith("torch.nn."):
                return True
            if self.is_module_class(base, reads, seen | {name}):
                return True
        return False

    def method(
        self, class_name: str, name: str, visited: set[str] | None = None,
        reads: Reads | None = None,
    ) -> tuple[ClassInfo, cst.FunctionDef] | None:
        """A method looked up through the class and its in-file bases."""
        seen: set[str] = set()
        todo = [class_name]
        while todo:
            current = todo.pop(0)
            if current in seen:
                continue
            info = self.class_info(current, reads)
            if info is None:
                continue
            seen.add(current)
            if visited is not None:
                visited.add(current)
            found = info.methods.get(name)
            if reads is not None:
                reads.methods[(current, name)] = found
            if found is not None:
                return info, found
            todo.extend(info.bases)
        return None


def _decorator_names(node: cst.FunctionDef) -> list[str]:
    names = []
    for decorator in node.decorators:
        expr = decorator.decorator
        if isinstance(expr, cst.Call):
            expr = expr.func
        names.append(dotted_name(expr) or "")
    return names


@dataclass(frozen=True)
class StatementIndex:
    """What one top-level statement adds to the index: found once per parsed statement
    (an editor session keeps it while the statement's node is unchanged)."""

    imports: tuple[tuple[str, str], ...] = ()
    class_name: str | None = None
    bases: tuple[str, ...] = ()  # dotted, as written
    methods: tuple[tuple[str, cst.FunctionDef], ...] = ()
    staticmethods: frozenset[str] = frozenset()
    function: cst.FunctionDef | None = None


def index_statement(statement: cst.BaseStatement) -> StatementIndex:
    if isinstance(statement, cst.ClassDef):
        bases = tuple(name for name in (dotted_name(arg.value) for arg in statement.bases)
                      if name is not None)
        methods = tuple((item.name.value, item) for item in statement.body.body
                        if isinstance(item, cst.FunctionDef))
        static = frozenset(name for name, item in methods
                           if "staticmethod" in _decorator_names(item))
        return StatementIndex(class_name=statement.name.value, bases=bases, methods=methods,
                              staticmethods=static)
    if isinstance(statement, cst.FunctionDef):
        return StatementIndex(function=statement)
    return StatementIndex(imports=tuple(imported_names(statement)))


def build_program(statements: list[cst.BaseStatement],
                  indexes: list[StatementIndex] | None = None) -> Program:
    """Index top-level statements (of one module, or of a document's blocks in order);
    ``indexes`` are the statements' own, if known already."""
    if indexes is None:
        indexes = [index_statement(statement) for statement in statements]
    aliases = dict(CONVENTIONAL_ALIASES)
    for index in indexes:
        aliases.update(index.imports)
    classes: dict[str, ClassInfo] = {}
    functions: dict[str, cst.FunctionDef] = {}
    for statement, index in zip(statements, indexes, strict=True):
        if index.class_name is not None and isinstance(statement, cst.ClassDef):
            info = ClassInfo(index.class_name, statement,
                             [qualify(base, aliases) for base in index.bases],
                             dict(index.methods), set(index.staticmethods))
            classes[info.name] = info
        elif index.function is not None:
            functions[index.function.name.value] = index.function
    return Program(list(statements), aliases, classes, functions)


def decorator_names(node: cst.FunctionDef) -> list[str]:
    return _decorator_names(node)
