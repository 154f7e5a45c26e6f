"""The index of one module: its imports, classes and functions, found without analysis."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from gradguard.analysis.names import dotted_name, import_aliases, qualify


@dataclass
class ClassInfo:
    name: str
    node: cst.ClassDef
    bases: list[str]
    methods: dict[str, cst.FunctionDef] = field(default_factory=dict)
    staticmethods: set[str] = field(default_factory=set)


@dataclass
class Program:
    statements: list[cst.BaseStatement]
    aliases: dict[str, str]
    classes: dict[str, ClassInfo]
    functions: dict[str, cst.FunctionDef]

    def qualify(self, node: cst.BaseExpression) -> str | None:
        name = dotted_name(node)
        return None if name is None else qualify(name, self.aliases)

    def is_module_class(self, name: str, seen: frozenset[str] = frozenset()) -> bool:
        info = self.classes.get(name)
        if info is None or name in seen:
            return False
        for base in info.bases:
            if base.startswith("torch.nn."):
                return True
            if self.is_module_class(base, seen | {name}):
                return True
        return False

    def method(
        self, class_name: str, name: str, visited: set[str] | None = None
    ) -> tuple[ClassInfo, cst.FunctionDef] | None:
        """A method looked up through the class and its in-file bases."""
        seen: set[str] = set()
        todo = [class_name]
        while todo:
            current = todo.pop(0)
            info = self.classes.get(current)
            if info is None or current in seen:
                continue
            seen.add(current)
            if visited is not None:
                visited.add(current)
            if name in info.methods:
                return info, info.methods[name]
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


def build_program(statements: list[cst.BaseStatement]) -> Program:
    """Index top-level statements (of one module, or of a document's blocks in order)."""
    aliases = import_aliases(statements)
    classes: dict[str, ClassInfo] = {}
    functions: dict[str, cst.FunctionDef] = {}
    for statement in statements:
        if isinstance(statement, cst.ClassDef):
            bases = []
            for arg in statement.bases:
                name = dotted_name(arg.value)
                if name is not None:
                    bases.append(qualify(name, aliases))
            info = ClassInfo(statement.name.value, statement, bases)
            for item in statement.body.body:
                if isinstance(item, cst.FunctionDef):
                    info.methods[item.name.value] = item
                    if "staticmethod" in _decorator_names(item):
                        info.staticmethods.add(item.name.value)
            classes[info.name] = info
        elif isinstance(statement, cst.FunctionDef):
            functions[statement.name.value] = statement
    return Program(list(statements), aliases, classes, functions)


def decorator_names(node: cst.FunctionDef) -> list[str]:
    return _decorator_names(node)
