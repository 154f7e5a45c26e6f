"""Notebook cells as Python: the lines of IPython syntax a code cell may hold, blanked.

Shared by the language server (notebook documents) and ``gradguard check`` (``.ipynb``
files), as is the program their fix-all fixes (``program_to_fix``) and its split back
into cells. A code cell's IPython lines (``%magic``, ``!shell``) are not Python: each becomes
``pass`` (same line count, same indentation) so that line numbers in the cell and in the
program read from it agree. A cell whose first line is a cell magic (``%%bash``,
``%%writefile``...) holds no Python at all, except under the few cell magics that run
their body as Python (``%%time`` and its kin): such a cell is blanked whole.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

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


# Put between cells (and after IPython lines) in the program that is fixed; comments, so
# the fixes see the same code.
_CELL_BREAK = "# gradguard: cell break {index}"
_CELL_BREAK_LINE = re.compile(r"^# gradguard: cell break (\d+)$")
_IPYTHON_MARK = "  # gradguard: ipython line"


def program_to_fix(cells: Sequence[str]) -> str:
    """The program of the code cells ``cells`` (their texts, in order) with a marker line
    between cells and on each IPython line, so that the fixed program splits back into
    cells (``cells_of_fixed``) where a fix added or moved a line."""
    parts = []
    for position, text in enumerate(cells):
        if position:
            parts.append(_CELL_BREAK.format(index=position) + "\n")
        parts.append(python_of_cell(text, _IPYTHON_MARK) + "\n")
    return "".join(parts)


def cells_of_fixed(cells: Sequence[str], fixed: str) -> list[str] | None:
    """The cells' texts from a fixed ``program_to_fix(cells)``, IPython lines put back;
    None when a fix moved a cell boundary."""
    pieces: list[list[str]] = [[]]
    for line in fixed.split("\n"):
        match = _CELL_BREAK_LINE.match(line)
        if match and int(match.group(1)) == len(pieces):
            pieces.append([])
        else:
            pieces[-1].append(line)
    if len(pieces) != len(cells):
        return None
    texts = []
    for original, piece in zip(cells, pieces, strict=True):
        # Each cell was followed by one line break of its own: drop that empty line.
        text = "\n".join(piece[:-1] if piece and piece[-1] == "" else piece)
        texts.append(_restore_ipython(original, text))
    return texts


def _restore_ipython(original: str, fixed: str) -> str:
    """Put back the IPython lines that ``program_to_fix`` replaced, in their order."""
    if _IPYTHON_MARK not in fixed:
        return fixed
    old_lines = original.split("\n")
    magic = iter(old_lines[number] for number, line in
                 enumerate(python_of_cell(original, _IPYTHON_MARK).split("\n"))
                 if line.endswith(_IPYTHON_MARK))
    return "\n".join(next(magic, line) if line.endswith(_IPYTHON_MARK) else line
                     for line in fixed.split("\n"))
