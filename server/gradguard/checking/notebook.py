"""``.ipynb`` files for ``gradguard check``: code cells in order, read as one program.

A notebook's cells run top to bottom in one namespace, so a model defined in one cell and
trained in another is one program (as the language server reads notebook documents).
Each code cell contributes its text and one line break, so cell k starts on the line
after cell k-1's last line; a finding's program line maps back to (cell, line in cell).
Cells are numbered as a reader counts them: 1-based, markdown and raw cells included.

``--fix`` fixes the program and splits it back into cells at marker comments put between
them, so a fix that adds a line (``x = x.clone()``) or moves one (``optimizer.step()``)
lands in the right cell; only the ``source`` of changed cells is rewritten, outputs and
metadata are kept as they were.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gradguard.cells import python_of_cell
from gradguard.text import lines_with_ends


class NotebookError(ValueError):
    """The file is not a notebook this reader understands."""


@dataclass(frozen=True)
class CellMap:
    """Where each code cell's lines are in the program read from a notebook."""

    # 1-based number of each code cell among all cells, and the program line it starts on.
    numbers: tuple[int, ...]
    starts: tuple[int, ...]

    def locate(self, line: int) -> tuple[int, int]:
        """(cell number, 1-based line in that cell) of a 1-based program line."""
        index = max(bisect.bisect_right(self.starts, line) - 1, 0)
        return self.numbers[index], line - self.starts[index] + 1


@dataclass(frozen=True)
class Notebook:
    data: dict[str, Any]
    # Indices into data["cells"] of the Python code cells, in order, and their texts.
    code: tuple[int, ...]
    texts: tuple[str, ...]
    # How the file was written, to write it back the same way (Jupyter: 1, True).
    indent: int = 1
    final_newline: bool = True

    @property
    def program(self) -> str:
        return "".join(python_of_cell(text) + "\n" for text in self.texts)

    @property
    def cells(self) -> CellMap:
        starts = []
        line = 1
        for text in self.texts:
            starts.append(line)
            line += text.count("\n") + 1
        return CellMap(tuple(index + 1 for index in self.code), tuple(starts))

    def with_cells(self, texts: Sequence[str]) -> Notebook:
        """This notebook with its code cells' texts replaced (only the ``source`` of the
        cells that changed is rewritten)."""
        data = json.loads(json.dumps(self.data))
        for index, old, new in zip(self.code, self.texts, texts, strict=True):
            if new != old:
                data["cells"][index]["source"] = _as_source(new, data["cells"][index]["source"])
        return Notebook(data, self.code, tuple(texts), self.indent, self.final_newline)

    def dumps(self) -> str:
        # As the file was written (Jupyter: one-space indent, UTF-8 kept, final newline).
        text = json.dumps(self.data, indent=self.indent, ensure_ascii=False)
        return text + "\n" if self.final_newline else text


def _as_source(text: str, like: object) -> str | list[str]:
    # nbformat stores a cell's source as a list of lines or as one string: keep its form.
    return lines_with_ends(text) if isinstance(like, list) else text


def _text_of(source: object) -> str:
    if isinstance(source, str):
        return source
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        return "".join(source)
    raise NotebookError("a cell's source is neither a string nor a list of strings")


def parse_notebook(text: str) -> Notebook:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise NotebookError(f"not a notebook: invalid JSON at line {error.lineno}") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise NotebookError("not a notebook: no list of cells (nbformat 4 is read)")
    language = (data.get("metadata", {}).get("language_info", {}) or {}).get("name", "python")
    if language != "python":
        return Notebook(data, (), ())  # an R or Julia notebook: nothing to check
    code = []
    texts = []
    for index, cell in enumerate(data["cells"]):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            code.append(index)
            texts.append(_text_of(cell.get("source", "")).replace("\r\n", "\n"))
    indent = re.match(r"\{\r?\n( +)\"", text)
    return Notebook(data, tuple(code), tuple(texts), len(indent.group(1)) if indent else 1,
                    text.endswith("\n"))


def program_of(path: str, text: str) -> tuple[str, CellMap | None]:
    """The Python text to analyse for a file, and for a notebook where its cells are."""
    if not path.endswith(".ipynb"):
        return text, None
    notebook = parse_notebook(text)
    return notebook.program, notebook.cells
