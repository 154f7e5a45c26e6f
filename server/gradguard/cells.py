"""Notebook cells as Python: the lines of IPython syntax a code cell may hold, blanked.

Shared by the language server (notebook documents) and ``gradguard check`` (``.ipynb``
files). A code cell's IPython lines (``%magic``, ``!shell``) are not Python: each becomes
``pass`` (same line count, same indentation) so that line numbers in the cell and in the
program read from it agree. A cell whose first line is a cell magic (``%%bash``,
``%%writefile``...) holds no Python at all, except under the few cell magics that run
their body as Python (``%%time`` and its kin): such a cell is blanked whole.
"""

from __future__ import annotations

import re

_IPYTHON_LINE = re.compile(r"^([ \t]*)[%!]")
_CELL_MAGIC = re.compile(r"^[ \t]*%%(\w+)")
# Cell magics whose body is Python that runs in the notebook's namespace.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})


def ipython_lines(cell: str) -> list[int]:
    """0-based numbers of the lines of ``cell`` that are IPython syntax, not Python."""
    lines = cell.split("\n")
    magic = _CELL_MAGIC.match(lines[0])
    if magic and magic.group(1) not in PYTHON_CELL_MAGICS:
        return [number for number, line in enumerate(lines) if line.strip()]
    return [number for number, line in enumerate(lines) if _IPYTHON_LINE.match(line)]


def python_of_cell(cell: str, marker: str = "") -> str:
    """The cell with each IPython line replaced by ``pass`` (plus ``marker``, if given)."""
    if "%" not in cell and "!" not in cell:
        return cell
    lines = cell.split("\n")
    for number in ipython_lines(cell):
        indent = _IPYTHON_LINE.match(lines[number])
        lines[number] = (indent.group(1) if indent else "") + "pass" + marker
    return "\n".join(lines)
