"""Source text in, hazards out: the analysis entry point (pure, no torch, no I/O)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from gradguard.analysis.autograd import Autograd
from gradguard.analysis.blocks import defined_name, split_blocks, split_lines
from gradguard.analysis.evaluator import Evaluator, OutOfBudget
from gradguard.analysis.findings import Finding
from gradguard.analysis.hazard import Hazard
from gradguard.analysis.program import ClassInfo, Program, Reads, build_program
from gradguard.analysis.report import to_hazard
from gradguard.analysis.suppression import is_suppressed
from gradguard.facts import load

# Every hazard needs an in-place write, an optimizer step or a backward; text with none
# of these cannot hold one, and skipping its parse is most of the speed on real trees.
_CANDIDATE = re.compile(
    r"inplace|[A-Za-z0-9]_\s*\(|[-+*/@%&|]=|\]\s*=[^=]|\bout\s*=|\.step\s*\(|backward"
)


def _better(new: Finding, old: Finding) -> bool:
    """Of two reports of one hazard, the surer one, then the one with the shorter path."""
    rank = {"high": 0, "medium": 1}
    return (rank[new.confidence], len(new.via)) < (rank[old.confidence], len(old.via))


# Without torch in sight nothing can be known to require grad (no parameters, no
# requires_grad=True, no nn.Module): only uncertain findings are possible there.
_TORCH = re.compile(r"torch|requires_grad|\bnn\.|\bF\.")


def may_hold_hazards(source: str, uncertain: bool = False) -> bool:
    if _CANDIDATE.search(source) is None:
        return False
    return uncertain or _TORCH.search(source) is not None


class SourceError(Exception):
    """The text cannot be analysed (it does not parse)."""

    def __init__(self, message: str, line: int = 0, column: int = 0) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


def syntax_error(source: str, error: cst.ParserSyntaxError) -> SourceError:
    """The error a user reads: CPython's wording where it has one (it names the cause)."""
    try:
        compile(source, "<source>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as python_error:
        if python_error.lineno:
            return SourceError(f"syntax error: {python_error.msg}", python_error.lineno,
                               python_error.offset or 1)
    except (ValueError, RecursionError, MemoryError):
        pass
    return SourceError(f"syntax error: {error.message}", error.raw_line, error.raw_column + 1)


@dataclass(frozen=True)
class Selection:
    """Which findings a run reports: rule codes (prefixes), and whether uncertain ones.

    A finding is uncertain when it holds only if a tensor whose origin the analysis
    cannot see requires grad (a plain function's argument, say); those are left out
    unless asked for, because on real code most of them are data that never does.
    """

    select: frozenset[str] | None = None
    ignore: frozenset[str] = frozenset()
    uncertain: bool = False

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
        raise syntax_error(source, error) from None
    except RecursionError:
        raise SourceError("too deeply nested to parse") from None


@dataclass(frozen=True)
class Root:
    """One entry point the interpreter starts from: a method, a function, or the script."""

    key: str
    statement: cst.BaseStatement | None
    start: Callable[[Evaluator], None]
    # The top-level statement holding ``statement`` when that is a method.
    owner: cst.BaseStatement | None = None


@dataclass(frozen=True)
class RootResult:
    findings: tuple[Finding, ...]
    used: frozenset[str]
    reads: Reads


_WORD = re.compile(r"\w+")


def reaching(source: str) -> set[str]:
    """The top-level definitions whose interpretation can meet a write, a step or a
    backward: those whose own text has one, and those that name such a definition.
    ``"<module>"`` stands for the module's own statements."""
    texts: dict[str, list[str]] = {}
    for block in split_blocks(source):
        texts.setdefault(defined_name(block.text) or "<module>", []).append(block.text)
    names = set(texts)
    mentions = {name: set(_WORD.findall("".join(parts))) & names
                for name, parts in texts.items()}
    found = {name for name, parts in texts.items()
             if any(_CANDIDATE.search(part) for part in parts)}
    grew = True
    while grew:
        grew = False
        for name, used in mentions.items():
            if name not in found and used & found:
                found.add(name)
                grew = True
    return found


def roots(program: Program, wanted: set[str] | None = None,
          per_method: bool = False) -> list[Root]:
    """Where interpretation starts; ``wanted`` limits it to the definitions named.

    A class is one root whose methods each run on a copy of one instance ``__init__``
    built, or, with ``per_method``, one root per method, each building its own instance:
    slower in all (``__init__`` runs once per method), but an edit to one method then
    re-runs that method alone, which is what an editor needs.
    """
    def keep(name: str) -> bool:
        return wanted is None or name in wanted

    found = []
    script = [s for s in program.statements
              if not isinstance(s, (cst.FunctionDef, cst.ClassDef))]
    if script and keep("<module>"):
        found.append(Root("<module>", None, lambda ev: ev.run_module_statements(script)))
    for name, function in program.functions.items():
        if keep(name):
            found.append(Root(f"def {name}", function, _function_start(function)))
    for info in program.classes.values():
        methods = [m for name, m in info.methods.items() if name != "__init__"]
        if not methods or not keep(info.name):
            continue
        if not per_method:
            found.append(Root(f"class {info.name}", info.node, _class_start(info, methods)))
            continue
        for method in methods:
            found.append(Root(f"class {info.name}.{method.name.value}", method,
                              _class_start(info, [method]), info.node))
    return found


def _function_start(function: cst.FunctionDef) -> Callable[[Evaluator], None]:
    def start(evaluator: Evaluator) -> None:
        evaluator.run_function(function, None, None)

    return start


def _class_start(info: ClassInfo,
                 methods: list[cst.FunctionDef]) -> Callable[[Evaluator], None]:
    """The methods of a class, each on a fresh copy of the instance ``__init__`` built."""

    def start(evaluator: Evaluator) -> None:
        instance = evaluator.instantiate(info, None, [], {})
        built = dict(instance.attrs or {})
        for method in methods:
            instance.attrs = dict(built)
            evaluator.autograd.forget_graph()
            evaluator.steps = 0
            is_static = method.name.value in info.staticmethods
            try:
                evaluator.run_function(method, None if is_static else instance, info.name)
            except OutOfBudget:
                pass  # this method was too long to follow; the others still are

    return start


def run_root(program: Program, root: Root) -> RootResult:
    findings: dict[tuple[object, ...], Finding] = {}
    evaluator = Evaluator(program, load(), Autograd(findings=findings))
    try:
        root.start(evaluator)
    except (OutOfBudget, RecursionError):
        pass  # what was found before the budget ran out still stands
    return RootResult(tuple(findings.values()), frozenset(evaluator.used), evaluator.reads)


def merge(results: Iterable[RootResult]) -> list[Finding]:
    merged: dict[tuple[object, ...], Finding] = {}
    for result in results:
        for finding in result.findings:
            known = merged.get(finding.key())
            if known is None or _better(finding, known):
                merged[finding.key()] = finding
    return list(merged.values())


def to_hazards(
    findings: list[Finding],
    ranges: Mapping[cst.CSTNode, CodeRange],
    lines: Sequence[str],
    selection: Selection | None,
) -> list[Hazard]:
    chosen = selection or Selection()
    hazards: dict[tuple[object, ...], Hazard] = {}
    for finding in findings:
        if not chosen.wants(finding.code):
            continue
        if finding.confidence == "medium" and not chosen.uncertain:
            continue
        hazard = to_hazard(finding, ranges, lines)
        if is_suppressed(hazard.code, lines, [hazard.span.line, hazard.span.end_line]):
            continue
        # ``x.add_(a).sub_(b)``: every call of the chain writes the same tensor; the
        # first one, which is the innermost and starts where the others do, is reported.
        key = (hazard.code, hazard.span.line, hazard.span.column,
               tuple(r.span for r in hazard.related))
        known = hazards.get(key)
        if known is None or hazard.span < known.span:
            hazards[key] = hazard
    return sorted(hazards.values(), key=lambda h: (h.span, h.code, h.message))


def analyze_source(source: str, selection: Selection | None = None) -> list[Hazard]:
    """The hazards in one Python source text, sorted by position."""
    if not may_hold_hazards(source, (selection or Selection()).uncertain):
        return []
    module = parse(source)
    program = build_program(list(module.body))
    findings = merge(run_root(program, root) for root in roots(program, reaching(source)))
    if not findings:
        return []
    ranges = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    lines = [line.rstrip("\r\n") for line in split_lines(source)]
    return to_hazards(findings, ranges, lines, selection)
