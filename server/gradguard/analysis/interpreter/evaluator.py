"""The interpreter, assembled from its parts (one module each), and where a run starts."""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence

from gradguard.analysis.findings import Site
from gradguard.analysis.interpreter.calls import Calls
from gradguard.analysis.interpreter.expressions import Expressions
from gradguard.analysis.interpreter.fix_planning import FixPlanning
from gradguard.analysis.interpreter.state import (
    MAX_STEPS,
    MAX_STEPS_INLINE,
    Frame,
    Position,
    RunState,
    State,
    SummaryCache,
)
from gradguard.analysis.interpreter.statements import Statements
from gradguard.analysis.interpreter.torch_api import TorchApi
from gradguard.analysis.program import ClassInfo, FunctionInfo, Program
from gradguard.analysis.syntax import Piece
from gradguard.analysis.values import Value
from gradguard.facts.table import Facts


class Evaluator:
    """Abstract interpretation of Python over tensors, modules and optimizers.

    One :class:`State` shared by five parts, each holding the parts below it: the
    expressions; fix planning (which evaluates the names a rewrite starts from); the
    torch API (which plans a fix where a function writes in place); the statements; the
    calls (which run a user function's body as statements). An expression may be a call
    or bind a name (``:=``): those two ways back up are handed to the expressions once
    the parts above exist.
    """

    def __init__(self, facts: Facts, programs: Mapping[str, Program | None],
                 cache: SummaryCache, run: RunState, inline_methods: bool = False) -> None:
        self.state = state = State(
            facts, programs, cache, run, inline_methods=inline_methods,
            max_steps=MAX_STEPS_INLINE if inline_methods else MAX_STEPS)
        self.expressions = Expressions(state)
        self.plans = FixPlanning(state, self.expressions)
        self.torch_api = TorchApi(state, self.plans)
        self.statements = Statements(state, self.expressions, self.plans, self.torch_api)
        self.calls = Calls(state, self.expressions, self.statements, self.torch_api,
                           self.plans)
        self.expressions.connect(self.calls.eval_call, self.statements.bind)

    def close(self) -> None:
        """Break the cycle the ways back up close through the parts, so that they and
        what the run made are freed as soon as the evaluator is dropped (by reference
        counting, not left to the cyclic collector)."""
        self.expressions.disconnect()

    # -- entry points -------------------------------------------------------------------

    def run_function(self, function: FunctionInfo, self_value: Value | None,
                     info: ClassInfo | None) -> None:
        """Run a function as an entry point, with the arguments a caller would pass."""
        self.calls.run_function(function, self_value, info)

    def instantiate(self, info: ClassInfo, site: Site | None, args: list[Value],
                    kwargs: dict[str, Value]) -> Value:
        """A user class instance, built by its ``__init__``."""
        return self.calls.instantiate(info, site, args, kwargs)

    def run_module_statements(self, program: Program,
                              statements: Sequence[tuple[Piece, ast.stmt]]) -> None:
        """The module's own statements, in order, as one script (each from its piece)."""
        if not statements:
            return
        state = self.state
        frame = Frame({}, statements[0][0], program)
        block = [statement for _, statement in statements]
        outer = state.run.block
        state.run.block = block
        position = Position(block)
        state.run.positions.append(position)
        state.scripts[program.path] = frame
        try:
            for index, (piece, statement) in enumerate(statements):
                position.index = index
                frame.piece = piece
                self.statements.exec_statement(statement, frame)
        finally:
            state.scripts.pop(program.path, None)
            state.run.positions.pop()
            state.run.block = outer
