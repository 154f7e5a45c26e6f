"""GradGuard's dependency arrows point one way: text -> analysis -> fixes -> front ends.

Read from the package's own source with ``ast`` (imports under ``TYPE_CHECKING`` and
inside functions count too: a cycle hidden there is still a cycle). A layer may import
only the layers below it; the front ends' modules import each other without cycles.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "server" / "gradguard"

# Each layer with what it may import (besides itself). Listed bottom up.
MAY_IMPORT: dict[str, set[str]] = {
    "text": set(),
    "cells": set(),
    "runtime": set(),
    "rules": set(),
    "facts": set(),
    "settings_schema": set(),
    "progress": set(),
    "settings_read": {"rules", "settings_schema"},
    "config": {"rules", "settings_read"},
    "analysis": {"text", "facts", "rules", "config"},
    "fixes": {"text", "cells", "analysis", "rules"},
    "explain": {"text", "facts", "rules", "config", "analysis"},
    "probe": {"text", "rules", "config", "settings_schema", "progress"},
    "checking": {"__init__", "text", "cells", "runtime", "rules", "config", "analysis",
                 "fixes", "settings_schema"},
    "server": {"__init__", "text", "cells", "runtime", "rules", "config", "facts",
               "analysis", "fixes", "explain", "probe", "checking", "settings_schema",
               "settings_read"},
    "cli": {"__init__", "text", "cells", "runtime", "rules", "config", "facts",
            "analysis", "fixes", "explain", "probe", "checking", "server", "progress"},
    "__main__": {"cli"},
    "__init__": set(),
}


def _modules() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


MODULES = _modules()


def _imports(path: Path) -> Iterator[str]:
    """The gradguard modules a file imports (``from pkg import module`` is ``pkg.module``)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.startswith("gradguard"))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.startswith("gradguard"):
            submodules = [f"{node.module}.{a.name}" for a in node.names
                          if f"{node.module}.{a.name}" in MODULES]
            yield from submodules or [node.module]


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


GRAPH = {module: {m for m in _imports(path) if m in MODULES and m != module}
         for module, path in MODULES.items()}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_a_module_imports_only_its_own_layer_and_the_layers_below(module: str) -> None:
    layer = _layer(module)
    assert layer in MAY_IMPORT, f"{layer} is a new layer: say where it sits"
    wrong = sorted(m for m in GRAPH[module]
                   if _layer(m) != layer and _layer(m) not in MAY_IMPORT[layer])
    assert wrong == []


def _cycles(modules: set[str]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in GRAPH[module] & modules:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(modules):
        if module not in index:
            visit(module)
    return found


@pytest.mark.parametrize("layer", ["text", "analysis", "fixes", "checking", "server", "cli",
                                   "probe"])
def test_the_modules_of_a_layer_import_each_other_without_cycles(layer: str) -> None:
    assert _cycles({m for m in MODULES if _layer(m) == layer}) == []


# The interpreter's parts, bottom up: each imports only those before it. The way back up
# (an expression that is a call, or binds a name) is handed over by the evaluator, which
# builds the parts; no part declares what another provides.
INTERPRETER = ["state", "classes", "expressions", "fix_planning", "torch_api", "statements",
               "calls", "evaluator"]


def test_the_interpreter_parts_import_only_the_parts_below_them() -> None:
    prefix = "gradguard.analysis.interpreter."
    assert {m.removeprefix(prefix) for m in MODULES if m.startswith(prefix)} == \
        set(INTERPRETER), "a new part of the interpreter: say where it sits"
    for index, name in enumerate(INTERPRETER):
        above = {prefix + part for part in INTERPRETER[index + 1:]}
        assert sorted(GRAPH[prefix + name] & above) == [], name


def test_the_rule_catalogue_and_the_text_module_import_no_libcst() -> None:
    for name in ("gradguard.text", "gradguard.rules"):
        if name in MODULES:
            source = MODULES[name].read_text(encoding="utf-8")
            assert "libcst" not in {alias.name.split(".")[0]
                                    for node in ast.walk(ast.parse(source))
                                    if isinstance(node, (ast.Import, ast.ImportFrom))
                                    for alias in (node.names if isinstance(node, ast.Import)
                                                  else [ast.alias(node.module or "")])}


def test_the_fixes_are_reached_through_one_entry_point() -> None:
    """Outside ``gradguard.fixes`` only the package itself is imported: what fixing
    offers is what its ``__init__`` exports, and its modules can be rearranged freely."""
    reaching_inside = sorted(f"{module} imports {m}" for module, imports in GRAPH.items()
                             if _layer(module) != "fixes"
                             for m in imports if m.startswith("gradguard.fixes."))
    assert reaching_inside == []
