"""Source text in, hazards out: the analysis entry point (pure, no torch, no I/O)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from gradguard.analysis.autograd import Autograd
from gradguard.analysis.evaluator import Evaluator, OutOfBudget
from gradguard.analysis.findings import Finding
from gradguard.analysis.hazard import Hazard
from gradguard.analysis.program import Program, build_program
from gradguard.analysis.report import to_hazard
from gradguard.analysis.suppression import is_suppressed
from gradguard.facts import load

# Every hazard needs an in-place write, an optimizer step or a backward; text with none
# of these cannot hold one, and skipping its parse is most of the speed on real trees.
_CANDIDATE = re.compile(
    r"inplace|[A-Za-z0-9]_\s*\(|[-+*/@%&|]=|\]\s*=[^=]|\bout\s*=|\.step\s*\(|backward"
)


class SourceError(Exception):
    """The text cannot be analysed (it does not parse)."""

    def __init__(self, message: str, line: int = 0, column: int = 0) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Selection:
    select: frozenset[str] | None = None
    ignore: frozenset[str] = frozenset()

    def wants(self, code: str) -> bool:
        def matches(codes: Iterable[str]) -> bool:
            return any(code.startswith(prefix) for prefix in codes)

        if self.select is not None and not matches(self.select):
            return False
        return not matches(self.ignore)


def parse(source: str) -> cst.Module:
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        raise SourceError(f"syntax error: {error.message}", error.raw_line,
                          error.raw_column) from None


def analyze_source(source: str, selection: Selection | None = None) -> list[Hazard]:
    """The hazards in one Python source text, sorted by position."""
    if not _CANDIDATE.search(source):
        return []
    return analyze_module(parse(source), source, selection)


def analyze_module(
    module: cst.Module, source: str, selection: Selection | None = None
) -> list[Hazard]:
    findings = find(build_program(module))
    if not findings:
        return []
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    ranges = wrapper.resolve(PositionProvider)
    lines = source.splitlines()
    chosen = selection or Selection()
    hazards = []
    for finding in findings:
        if not chosen.wants(finding.code):
            continue
        hazard = to_hazard(finding, ranges)
        span = hazard.span
        if is_suppressed(hazard.code, lines, [span.line, span.end_line]):
            continue
        hazards.append(hazard)
    hazards.sort(key=lambda h: (h.span, h.code, h.message))
    return hazards


def find(program: Program) -> list[Finding]:
    """Interpret every root of the program: module statements, functions, methods."""
    facts = load()
    findings: dict[tuple[object, ...], Finding] = {}

    def run(action: object) -> None:
        autograd = Autograd(findings=findings)
        evaluator = Evaluator(program, facts, autograd)
        try:
            action(evaluator)  # type: ignore[operator]
        except OutOfBudget:
            pass
        except RecursionError:
            pass

    statements = [
        s for s in program.module.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef))
    ]
    run(lambda ev: ev.run_module_statements(statements))
    for function in program.functions.values():
        run(lambda ev, f=function: ev.run_function(f, None, None))
    for info in program.classes.values():
        for name, method in info.methods.items():
            if name == "__init__":
                continue
            is_static = name in info.staticmethods

            def root(ev: Evaluator, info=info, method=method, is_static=is_static) -> None:
                instance = None if is_static else ev.instantiate(info, None, [], {})
                ev.run_function(method, instance, info.name)

            run(root)
    return list(findings.values())
