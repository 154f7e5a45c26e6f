"""The interpreter, assembled from its parts (one module each)."""

from __future__ import annotations

import ast
from collections.abc import Sequence

from gradguard.analysis.interpreter.calls import Calls
from gradguard.analysis.interpreter.expressions import Expressions
from gradguard.analysis.interpreter.fix_planning import FixPlanning
from gradguard.analysis.interpreter.state import Frame, Position
from gradguard.analysis.interpreter.statements import Statements
from gradguard.analysis.interpreter.torch_api import TorchApi
from gradguard.analysis.program import Program
from gradguard.analysis.syntax import Piece


class Evaluator(Statements, Expressions, Calls, TorchApi, FixPlanning):
    """Abstract interpretation of Python over tensors, modules and optimizers."""

    def run_module_statements(self, program: Program,
                              statements: Sequence[tuple[Piece, ast.stmt]]) -> None:
        """The module's own statements, in order, as one script (each from its piece)."""
        if not statements:
            return
        frame = Frame({}, statements[0][0], program)
        block = [statement for _, statement in statements]
        outer = self.run.block
        self.run.block = block
        position = Position(block)
        self.run.positions.append(position)
        self.scripts[program.path] = frame
        try:
            for index, (piece, statement) in enumerate(statements):
                position.index = index
                frame.piece = piece
                self.exec_statement(statement, frame)
        finally:
            self.scripts.pop(program.path, None)
            self.run.positions.pop()
            self.run.block = outer
