"""Source text in, hazards out: the analysis entry point (pure, no torch, no I/O)."""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from gradguard.analysis.findings import Finding, better
from gradguard.analysis.hazard import Hazard, distinct
from gradguard.analysis.interpreter import SummaryCache
from gradguard.analysis.prefilter import methods_reaching, reaching
from gradguard.analysis.program import ClassInfo, FunctionInfo, Program, Reads, build_program
from gradguard.analysis.project import Project, read_file
from gradguard.analysis.report import to_hazard
from gradguard.analysis.roots import RootResult, roots, run_root
from gradguard.analysis.signs import CANDIDATE, STRONG, TORCH
from gradguard.analysis.suppression import is_suppressed
from gradguard.analysis.syntax import Piece, SourceError, parse
from gradguard.config import Selection
from gradguard.text import source_lines

__all__ = ["ProjectFindings", "Selection", "SourceError", "analysis_in_project",
           "analysis_of_run", "analyze_file", "analyze_in_run", "analyze_source",
           "findings_in_project", "may_hold_hazards", "project_for"]


def may_hold_hazards(source: str, uncertain: bool = False) -> bool:
    if not CANDIDATE.search(source):
        return False
    return uncertain or TORCH.search(source)


def merge(results: Iterable[RootResult]) -> list[Finding]:
    merged: dict[tuple[object, ...], Finding] = {}
    for result in results:
        for finding in result.findings:
            known = merged.get(finding.key())
            if known is None or better(finding, known):
                merged[finding.key()] = finding
    return list(merged.values())


def to_hazards(findings: Iterable[Finding], path: str, lines: Sequence[str],
               selection: Selection | None) -> list[Hazard]:
    """The hazards of ``findings`` located in ``path``, suppression comments applied."""
    chosen = selection or Selection()
    hazards: dict[tuple[object, ...], Hazard] = {}
    for finding in findings:
        if finding.piece.path != path or not chosen.wants(finding.code):
            continue
        if finding.confidence == "medium" and not chosen.uncertain:
            continue
        hazard = to_hazard(finding)
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


def analyze_source(source: str, selection: Selection | None = None,
                   path: str = "<source>") -> list[Hazard]:
    """The hazards in one Python source text, sorted by position."""
    if not may_hold_hazards(source, (selection or Selection()).uncertain):
        return []
    program = program_of(path, source)
    cache = SummaryCache()
    programs = {path: program}
    wanted = reaching(source)
    findings = merge(run_root(programs, root, cache, inline_methods=True) for root in
                     roots(program, wanted, methods=methods_reaching(source, program, wanted)))
    if not findings:
        return []
    lines = source_lines(source)
    return to_hazards(findings, path, lines, selection)


def program_of(path: str, source: str) -> Program:
    """One file's program: parsed whole, one piece."""
    module = parse(source)
    piece = Piece(path, source)
    return build_program(path, ((piece, statement) for statement in module.body))


def _parsed_or_none(path: str, source: str) -> Program | None:
    try:
        return program_of(path, source)
    except SourceError:
        return None


def _reaching_of(text: str, strong: bool) -> set[str]:
    return reaching(text, candidate=STRONG if strong else CANDIDATE)


def project_for(roots: list[str],
                read: Callable[[str], str | None] = read_file) -> Project:
    """A project whose files are read (from disk, by default), parsed and pre-filtered
    on first use."""
    return Project(roots, read=read, parse=_parsed_or_none, reaching=_reaching_of)


@dataclass(frozen=True)
class FileAnalysis:
    # The hazards, by the file each is in.
    found: dict[str, list[Hazard]]
    # The other files of the project the analysis read definitions from.
    read: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ProjectFindings:
    # Every finding of the file's analysis, in whichever file each is.
    findings: list[Finding]
    # The other files of the project the analysis read definitions from.
    read: frozenset[str] = frozenset()


def findings_in_project(path: str, source: str, project: Project, uncertain: bool = False,
                        cache: SummaryCache | None = None) -> ProjectFindings:
    """What the analysis of one file finds, in it and in the project's files it imports,
    before any is selected, located or silenced (``analyze_file``'s hazards, and the
    chains ``gradguard explain`` follows, are made from these)."""
    program = project.programs.get(path)
    if program is None or project.texts.get(path) != source:
        program = program_of(path, source)  # raises SourceError for the file itself
    project.add(program, source)  # kept while it is analysed, whatever the budget
    # What the pre-filter looks at in other files decides what runs: recorded too.
    looked = Reads()
    answers: dict[str, str | None] = {}

    def imported(name: str) -> str | None:
        if name not in answers:
            answers[name] = _imported_candidate(program, project, name, looked)
        return answers[name]

    wanted = reaching(source, imported)
    if not wanted or not (may_hold_hazards(source, uncertain) or
                          _imports_torch_code(program, project, uncertain, looked)):
        return ProjectFindings([], looked.paths() - {path})
    methods = methods_reaching(source, program, wanted, lambda name: imported(name) is not None)
    cache = cache or SummaryCache()
    results = []
    for root in roots(program, wanted, methods=methods):
        results.append(run_root(project.programs, root, cache, inline_methods=True))
        _trim(project, cache)
    read = (looked.paths() | frozenset(p for result in results
                                       for p in result.reads.paths())) - {path}
    return ProjectFindings(merge(results), read)


def analyze_file(path: str, source: str, project: Project,
                 selection: Selection | None = None,
                 cache: SummaryCache | None = None) -> FileAnalysis:
    """The hazards one file's code leads to, by the file each is in: its own, and those
    in the project's files it imports (a loss module writing into what the model saved).

    ``cache`` keeps summaries between files of one project (each file is parsed once).
    """
    uncertain = (selection or Selection()).uncertain
    analysis = findings_in_project(path, source, project, uncertain, cache)
    by_path: dict[str, list[Finding]] = {}
    for finding in analysis.findings:
        by_path.setdefault(finding.piece.path, []).append(finding)
    found = {}
    for where, located in by_path.items():
        lines = source_lines(project.text_of(where))
        hazards = to_hazards(located, where, lines, selection)
        if hazards:
            found[where] = hazards
    return FileAnalysis(found, analysis.read)


# The objects an analysis may keep between runs (Python's count of allocated small
# objects, about 80 bytes each): past it, the summaries and then the parsed files used
# least recently are dropped, and computed again if needed. A run over a whole tree
# then holds a bounded working set, however many files it checks.
MEMORY_BLOCKS = 3_000_000
# Counting the allocated blocks walks every arena (about a millisecond in a large
# process, as much as a small root's run): done at most this often (seconds).
TRIM_INTERVAL = 0.05
_next_count = 0.0


def _trim(project: Project, cache: SummaryCache) -> None:
    global _next_count
    now = time.monotonic()
    if now < _next_count:
        return
    _next_count = now + TRIM_INTERVAL
    if sys.getallocatedblocks() <= MEMORY_BLOCKS:
        return
    cache.trim(0.5)  # freed at once: a summary's cycles are broken when it is dropped
    if sys.getallocatedblocks() > MEMORY_BLOCKS * 3 // 4:
        for path in project.trim(0.5):
            cache.forget_file(path)
    if sys.getallocatedblocks() > MEMORY_BLOCKS * 3 // 4:
        # The cyclic collector runs seldom during an analysis (``runtime``): what is
        # left may be garbage it has not reached yet.
        gc.collect()


def analysis_in_project(path: str, roots: list[str],
                        read: Callable[[str], str | None] = read_file,
                        selection: Selection | None = None) -> Callable[[str], list[Hazard]]:
    """How the fix engine analyses the texts a fix makes of the file at ``path``: with the
    project's imports followed, as ``check`` reports its hazards (a step in a training
    script is a hazard because of what the model in another file saves). Each text gets
    a project of its own, so that no other analysis ever reads a text still on trial."""

    def analyse(text: str) -> list[Hazard]:
        return analyze_file(path, text, project_for(roots, read), selection).found.get(path, [])

    return analyse


def analyze_in_run(path: str, source: str, project: Project, selection: Selection | None,
                   cache: SummaryCache) -> FileAnalysis:
    """``analyze_file`` for one file of a run over many (``check``, ``check --fix``),
    sharing one project and its summaries. The file's program and summaries are kept
    only if another file imports it: the files of a run are many, and each is analysed
    once."""
    imported = project.programs.get(path) is not None
    try:
        return analyze_file(path, source, project, selection, cache)
    finally:
        if imported:
            project.unpin(path)
        else:
            project.discard(path)
            cache.forget_file(path)


def analysis_of_run(paths: Sequence[str], roots: list[str],
                    read: Callable[[str], str | None] = read_file,
                    selection: Selection | None = None,
                    ) -> Callable[[Mapping[str, str]], dict[str, list[Hazard]]]:
    """How ``check --fix`` analyses the texts its fixes make of the files of a run: as
    ``check`` does, every file of the run in one project, its imports followed, and
    the hazards gathered by the file each is in (a write in an imported loss module is
    found from the training script that calls it). A hazard found from several files
    counts once. The texts given replace the files' own; each analysis gets a project
    of its own, so that none reads a text of an earlier round."""

    def analyse(texts: Mapping[str, str]) -> dict[str, list[Hazard]]:
        def current(path: str) -> str | None:
            return texts[path] if path in texts else read(path)

        project = project_for(roots, current)
        cache = SummaryCache()
        found: list[tuple[str, Hazard]] = []
        for path in paths:
            source = current(path)
            if source is None:
                continue
            try:
                analysis = analyze_in_run(path, source, project, selection, cache)
            except (SourceError, RecursionError):
                continue  # not analysed: the caller reports the file (GG900)
            found += [(where, hazard) for where, hazards in analysis.found.items()
                      for hazard in hazards]
        return distinct(found)  # as ``check`` shows them

    return analyse


def _imported_candidate(program: Program, project: Project, name: str,
                        reads: Reads) -> str | None:
    """``"class"`` or ``"function"`` when ``name``, imported from a project file, can
    meet a write, a step or a backward there: a class whose code can, a function that
    surely does (a helper that fills a dictionary is not enough to make its callers
    entry points)."""
    qualified = program.aliases.get(name)
    if qualified is None or qualified.startswith("torch") or \
            not qualified.rpartition(".")[0].strip("."):
        return None
    found = project.resolve(program, qualified, reads)
    if isinstance(found, ClassInfo) and found.name in project.reaching(found.path,
                                                                       reads=reads):
        return "class"
    if isinstance(found, FunctionInfo) and \
            found.name in project.reaching(found.path, strong=True, reads=reads):
        return "function"
    return None


def _imports_torch_code(program: Program, project: Project, uncertain: bool,
                        reads: Reads) -> bool:
    return any(may_hold_hazards(project.text_of(path, reads), uncertain)
               for path in _imported_files(program, project, reads))


def _imported_files(program: Program, project: Project, reads: Reads) -> list[str]:
    files = []
    for qualified in program.aliases.values():
        module = qualified.rpartition(".")[0]
        if module.strip(".") and not qualified.startswith("torch"):
            path = project.module_file(program.path, module, reads) or \
                project.module_file(program.path, qualified, reads)
            if path is not None:
                files.append(path)
    return files
