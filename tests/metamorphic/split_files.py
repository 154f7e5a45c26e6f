"""The code split into two files joined by an import: a one-file program's classes and
functions move to ``_mm_model.py`` and the script imports them.

It applies when every name those definitions read from the module is an import (copied
into the new file) or another moved definition, as Python's own symbol table says; a
definition that reads a global the script sets (``DEVICE = ...``) would see another
module's globals, so such files are left alone.
"""

from __future__ import annotations

import symtable

import libcst as cst

from tests.metamorphic.base import BUILTINS, Transformation, imported_names, is_import, statements
from tests.metamorphic.programs import Program

MODEL = "_mm_model"


def _definition_name(statement: cst.BaseStatement) -> str | None:
    if isinstance(statement, (cst.ClassDef, cst.FunctionDef)):
        return statement.name.value
    return None


def _globals_read(table: symtable.SymbolTable) -> tuple[set[str], bool]:
    """The module-level names a definition's scopes read, and whether one declares a
    name ``global`` (it would bind another module's)."""
    names: set[str] = set()
    declares = False
    stack = [table]
    while stack:
        scope = stack.pop()
        for symbol in scope.get_symbols():
            if symbol.is_declared_global():
                declares = True
            if symbol.is_global() and symbol.is_referenced():
                names.add(symbol.get_name())
        stack.extend(scope.get_children())
    return names, declares


def split_module(program: Program) -> Program | None:
    """A one-file program: its top-level classes and functions -> ``_mm_model.py``, with
    the file's imports; where the first of them stood, ``from _mm_model import A, f, ...``.
    """
    if len(program.modules) != 1:
        return None
    module = program.modules[program.entry]
    definitions = [s for s in module.body if _definition_name(s) is not None]
    moved = [name for s in definitions if (name := _definition_name(s))]
    if not moved or len(set(moved)) != len(moved):
        return None
    tables = {table.get_name(): table
              for table in symtable.symtable(module.code, program.entry, "exec").get_children()
              if table.get_type() in ("function", "class")}
    allowed = BUILTINS | set(moved) | imported_names(module, len(module.body))
    for statement, name in zip(definitions, moved, strict=True):
        names, declares = _globals_read(tables[name])
        if declares or not (names | _header_names(statement)) <= allowed:
            return None
    first = module.body.index(definitions[0])
    kept = [s for s in module.body if _definition_name(s) is None]
    joined = statements(f"from {MODEL} import {', '.join(moved)}\n")
    entry = module.with_changes(body=[*kept[:first], *joined, *kept[first:]])
    imports = [s for s in module.body if is_import(s)]
    model = cst.Module(body=[*imports, *definitions])
    return Program(program.entry, {program.entry: entry, f"{MODEL}.py": model})


def _header_names(statement: cst.BaseStatement) -> set[str]:
    """Names a definition reads where it stands, at module level: its decorators, bases,
    defaults and annotations."""
    names: set[str] = set()

    class Collector(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            names.add(name.value)

        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            attribute.value.visit(self)
            return False

        def visit_Param(self, param: cst.Param) -> bool:
            for part in (param.default, param.annotation):
                if part is not None:
                    part.visit(self)
            return False

        def visit_Arg(self, arg: cst.Arg) -> bool:
            arg.value.visit(self)
            return False

    collector = Collector()
    for decorator in getattr(statement, "decorators", ()):
        decorator.visit(collector)
    if isinstance(statement, cst.ClassDef):
        for arg in (*statement.bases, *statement.keywords):
            arg.visit(collector)
    if isinstance(statement, cst.FunctionDef):
        statement.params.visit(collector)
        if statement.returns is not None:
            statement.returns.visit(collector)
    return names - {"True", "False", "None"}


TRANSFORMATIONS = [Transformation("split_module", "split files", split_module)]
