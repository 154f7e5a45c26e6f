"""Notebooks (``notebookDocument/*`` sync): the code cells, in order, read as one program.

A notebook's cells run top to bottom in one namespace, so a model defined in one cell
and trained in another is one program. The unit's program is the text of its Python
code cells joined in notebook order; each cell is a target whose ``first_line`` says
where it starts, so a finding is shown in the cell that holds it and related locations
can point into other cells.

IPython lines (``%magic``, ``!shell``, ``%%cell magic``) are not Python: each is replaced
by ``pass`` (same line count, same indentation) in the program, never in the cell
(``gradguard.cells``, shared with ``gradguard check``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lsprotocol import types

from gradguard.cells import python_of_cell
from gradguard.server.documents import Target, TextBuffer, Unit
from gradguard.server.positions import Encoding


@dataclass(eq=False)
class NotebookUnit(Unit):
    notebook_version: int = 0
    # Cell document URIs in notebook order, and which of them are code cells.
    order: list[str] = field(default_factory=list)
    code: set[str] = field(default_factory=set)
    cells: dict[str, TextBuffer] = field(default_factory=dict)

    @property
    def version(self) -> int:
        return self.notebook_version

    def _code_cells(self) -> list[TextBuffer]:
        return [self.cells[uri] for uri in self.order
                if uri in self.code and uri in self.cells
                and self.cells[uri].language_id in ("python", "")]

    def targets(self) -> tuple[Target, ...]:
        targets = []
        line = 0
        for cell in self._code_cells():
            targets.append(Target(cell.uri, cell.version, line, cell.index))
            line += cell.index.line_count
        return tuple(targets)

    def program(self) -> str:
        # Every cell ends with exactly one line break of its own, so cell k starts at the
        # line after cell k-1's last line, which is what ``targets`` counts.
        return "".join(python_of_cell(cell.text) + "\n" for cell in self._code_cells())

    def buffer(self, uri: str) -> TextBuffer | None:
        return self.cells.get(uri)

    def open(self, params: types.DidOpenNotebookDocumentParams) -> None:
        notebook = params.notebook_document
        self.notebook_version = notebook.version
        self.order = [cell.document for cell in notebook.cells]
        self.code = {cell.document for cell in notebook.cells
                     if cell.kind == types.NotebookCellKind.Code}
        for item in params.cell_text_documents:
            self.cells[item.uri] = TextBuffer(item.uri, item.text, item.version,
                                              item.language_id)

    def change(self, params: types.DidChangeNotebookDocumentParams, encoding: Encoding) -> None:
        self.notebook_version = params.notebook_document.version
        cells = params.change.cells
        if cells is None:
            return
        if cells.structure is not None:
            array = cells.structure.array
            new = list(array.cells or [])
            self.order[array.start: array.start + array.delete_count] = [
                cell.document for cell in new]
            for cell in new:
                if cell.kind == types.NotebookCellKind.Code:
                    self.code.add(cell.document)
                else:
                    self.code.discard(cell.document)
            for item in cells.structure.did_open or []:
                self.cells[item.uri] = TextBuffer(item.uri, item.text, item.version,
                                                  item.language_id)
            for closed in cells.structure.did_close or []:
                self.cells.pop(closed.uri, None)
                self.code.discard(closed.uri)
        for data in cells.data or []:
            if data.kind == types.NotebookCellKind.Code:
                self.code.add(data.document)
            else:
                self.code.discard(data.document)
        for content in cells.text_content or []:
            buffer = self.cells.get(content.document.uri)
            if buffer is not None:
                buffer.apply(content.changes, content.document.version, encoding)

