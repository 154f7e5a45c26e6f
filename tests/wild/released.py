"""Helpers for reproducing a hazard in a released package's own code: no download, ever.

Every model is built from a config object with tiny sizes on CPU. Importing this module
switches the hub off (each test module imports it before transformers), so a code path
that would fetch weights or kernels fails instead of downloading.

``fixed`` applies a report's fix to the released source of one function, as a patch
would: the function's text is read from the installed module, each line the report
quotes must be there exactly once, and the edited function replaces the released one
for the duration of a ``with`` block.
"""

from __future__ import annotations

import ast
import inspect
import os
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"

SAVED_TENSOR_MODIFIED = "modified by an inplace operation"


def _definition(tree: ast.Module, owner: Any, name: str) -> ast.FunctionDef:
    scope: list[ast.stmt] = tree.body
    if not isinstance(owner, ModuleType):
        scope = next(node.body for node in tree.body
                     if isinstance(node, ast.ClassDef) and node.name == owner.__name__)
    return next(node for node in scope
                if isinstance(node, ast.FunctionDef) and node.name == name)


def released_source(owner: Any, name: str) -> tuple[str, int]:
    """The text of function ``name`` of a module or class as released (without its
    decorators), and the line of its ``def`` in its file."""
    module = owner if isinstance(owner, ModuleType) else sys.modules[owner.__module__]
    source = inspect.getsource(module)
    node = _definition(ast.parse(source), owner, name)
    segment = ast.get_source_segment(source, node, padded=True)
    assert segment is not None
    return textwrap.dedent(segment), node.lineno


def line_of(owner: Any, name: str, text: str) -> int:
    """The line number, in its file, of the one line of a released function holding
    ``text`` (what ``gradguard check`` reports)."""
    source, first = released_source(owner, name)
    found = [i for i, line in enumerate(source.splitlines()) if text in line]
    assert len(found) == 1, f"{text!r} is not on exactly one line of {name}"
    return first + found[0]


@contextmanager
def fixed(owner: Any, name: str, *edits: tuple[str, str]) -> Iterator[None]:
    """Run with function ``name`` of a module or class replaced by its released text
    with each ``(old, new)`` of ``edits`` applied, ``old`` replaced by ``new``
    (decorators left out: on CPU they choose this very torch implementation)."""
    module = owner if isinstance(owner, ModuleType) else sys.modules[owner.__module__]
    source, _ = released_source(owner, name)
    for before, after in edits:
        assert source.count(before) == 1, \
            f"{before!r} is not in the released {name} exactly once"
        source = source.replace(before, after)
    path = str(Path(inspect.getfile(module)))
    defined: dict[str, Any] = {}
    if isinstance(owner, ModuleType):
        exec(compile(source, path, "exec"), module.__dict__, defined)
        function = defined[name]
    else:
        # Defined in a class body of the owner's name, as in its file: a zero-argument
        # super() needs the __class__ cell only a class body gives, and private names
        # are mangled with the class's name. The cell then names that stand-in class:
        # it is pointed at the released one.
        body = f"class {owner.__name__}:\n" + textwrap.indent(source, "    ")
        exec(compile(body, path, "exec"), module.__dict__, defined)
        function = defined[owner.__name__].__dict__[name]
        for free, cell in zip(function.__code__.co_freevars, function.__closure__ or (),
                              strict=True):
            if free == "__class__":
                cell.cell_contents = owner
    released = owner.__dict__[name]
    setattr(owner, name, function)
    try:
        yield
    finally:
        setattr(owner, name, released)


def backward_fails(loss: Any) -> str:
    """The message of the RuntimeError backward raises (the test fails if none)."""
    with pytest.raises(RuntimeError, match=SAVED_TENSOR_MODIFIED) as raised:
        loss.backward()
    return str(raised.value)
