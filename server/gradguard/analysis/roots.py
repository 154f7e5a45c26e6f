"""Where interpretation starts: the module's statements, each function, each class's
methods (on an instance its ``__init__`` built), and running one of them."""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from gradguard.analysis.autograd import Autograd
from gradguard.analysis.findings import Finding, RootStopped, Site
from gradguard.analysis.interpreter import Evaluator, OutOfBudget, SummaryCache
from gradguard.analysis.interpreter.state import RunState
from gradguard.analysis.program import ClassInfo, FunctionInfo, Program, Reads
from gradguard.facts import load


@dataclass(frozen=True)
class Root:
    """One entry point the interpreter starts from: a method, a function, or the script."""

    key: str
    # The statements it starts from: its results hold while they are the same nodes.
    anchors: tuple[ast.AST, ...]
    start: Callable[[Evaluator], None]
    # The class holding the method, when the root is one.
    owner: ClassInfo | None = None
    # Where it starts (what a note that it could not be followed to its end points at).
    site: Site | None = None


@dataclass(frozen=True)
class RootResult:
    findings: tuple[Finding, ...]
    reads: Reads


def roots(program: Program, wanted: set[str] | None = None,
          per_method: bool = False,
          methods: Mapping[str, set[str]] | None = None) -> list[Root]:
    """Where interpretation starts; ``wanted`` limits it to the definitions named, and
    ``methods`` a class to the methods named (a class it leaves out has none).

    A class is one root whose methods each run on a copy of one instance ``__init__``
    built, or, with ``per_method``, one root per method, each building its own instance
    (an edit to one method then re-runs that method's root alone, which is what an
    editor needs; the instance is a summary's replay either way).
    """
    def keep(name: str) -> bool:
        return wanted is None or name in wanted

    found = []
    if program.statements and keep("<module>"):
        statements = program.statements
        found.append(Root("<module>", tuple(statement for _, statement in statements),
                          lambda ev: ev.run_module_statements(program, statements),
                          site=statements[0]))
    for name, function in program.functions.items():
        if keep(name):
            found.append(Root(f"def {name}", (function.node,), _function_start(function),
                              site=(function.piece, function.node)))
    for info in program.classes.values():
        chosen = None if methods is None else methods.get(info.name, set())
        run = [m for name, m in info.methods.items()
               if name != "__init__" and (chosen is None or name in chosen)]
        if not run or not keep(info.name):
            continue
        if not per_method:
            found.append(Root(f"class {info.name}", (info.node,), _class_start(info, run),
                              info, (run[0].piece, run[0].node)))
            continue
        for method in run:
            found.append(Root(f"class {info.name}.{method.name}", (method.node,),
                              _class_start(info, [method]), info, (method.piece, method.node)))
    return found


def _function_start(function: FunctionInfo) -> Callable[[Evaluator], None]:
    def start(evaluator: Evaluator) -> None:
        evaluator.run_function(function, None, None)

    return start


def _class_start(info: ClassInfo,
                 methods: list[FunctionInfo]) -> Callable[[Evaluator], None]:
    """The methods of a class, each on a fresh copy of the instance ``__init__`` built."""

    def start(evaluator: Evaluator) -> None:
        instance = evaluator.instantiate(info, None, [], {})
        built = dict(instance.attrs or {})
        for method in methods:
            instance.attrs = dict(built)
            evaluator.state.run.autograd.forget_graph()
            evaluator.state.steps = 0
            is_static = method.name in info.staticmethods
            site = (method.piece, method.node)
            try:
                evaluator.run_function(method, None if is_static else instance, info)
            except OutOfBudget:  # the others are still followed
                _stopped(evaluator.state.run.autograd, site, f"{info.name}.{method.name}",
                         too_long(evaluator))
            except RecursionError:
                _stopped(evaluator.state.run.autograd, site, f"{info.name}.{method.name}",
                         TOO_DEEP)

    return start


def run_root(programs: Mapping[str, Program | None], root: Root,
             cache: SummaryCache, inline_methods: bool = False) -> RootResult:
    """``inline_methods``: run modules' methods in their caller's world rather than
    through summaries (faster over a tree; an editor keeps the summaries, which it
    compares after an edit to cut off what it re-runs)."""
    autograd = Autograd()
    evaluator = Evaluator(load(), programs, cache, RunState(autograd), inline_methods)
    # What was found before the analysis stopped still stands; the user is told where
    # it stopped.
    try:
        root.start(evaluator)
    except OutOfBudget:
        _stopped(autograd, root.site, root.key, too_long(evaluator))
    except RecursionError:
        _stopped(autograd, root.site, root.key, TOO_DEEP)
    finally:
        evaluator.close()
    release(autograd)
    return RootResult(tuple(autograd.findings.values()), evaluator.state.run.reads)


def too_long(evaluator: Evaluator) -> str:
    return f"more than {evaluator.state.max_steps:,} steps to follow"
TOO_DEEP = "calls nested too deeply"


def _stopped(autograd: Autograd, site: Site | None, name: str, why: str) -> None:
    """A note (GG901) at the first line of a function the analysis stopped in."""
    if site is not None:
        piece, node = site
        autograd.report(RootStopped(piece, node, name, why=why))


def release(autograd: Autograd) -> None:
    """Break the cycles of a finished world (a save's source holds the storage holding
    the save), so that its values are freed as soon as they are dropped rather than
    left to the cyclic collector, which an editor runs only when typing pauses."""
    for storage in autograd.storages:
        storage.saves = []
        storage.pending = []
