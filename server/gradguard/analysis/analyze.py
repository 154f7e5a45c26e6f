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
from gradguard.analysis.libraries import Libraries, installed
from gradguard.analysis.prefilter import candidate_methods, candidate_roots
from gradguard.analysis.program import ClassInfo, FunctionInfo, Program, Reads, build_program
from gradguard.analysis.project import Project, read_file
from gradguard.analysis.relocate import relocate
from gradguard.analysis.report import FixOf, to_hazard
from gradguard.analysis.roots import RootResult, roots, run_root
from gradguard.analysis.signs import CANDIDATE, STRONG, TORCH
from gradguard.analysis.suppression import is_suppressed
from gradguard.analysis.syntax import Piece, SourceError, parse
from gradguard.config import Selection
from gradguard.text import source_lines

__all__ = ["ProjectFindings", "ProjectRun", "Selection", "SourceError", "analyze_source",
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
               selection: Selection | None, fix_of: FixOf | None = None) -> list[Hazard]:
    """The hazards of ``findings`` located in ``path``, suppression comments applied;
    with their fixes when ``fix_of`` renders them (``gradguard.fixes.edits.fix_of``)."""
    chosen = selection or Selection()
    hazards: dict[tuple[object, ...], Hazard] = {}
    for finding in findings:
        if finding.piece.path != path or not chosen.wants(finding.code):
            continue
        if finding.confidence == "medium" and not chosen.uncertain:
            continue
        hazard = to_hazard(finding, fix_of)
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
                   path: str = "<source>", fix_of: FixOf | None = None) -> list[Hazard]:
    """The hazards in one Python source text, sorted by position (with their fixes
    when ``fix_of`` renders them)."""
    if not may_hold_hazards(source, (selection or Selection()).uncertain):
        return []
    program = program_of(path, source)
    cache = SummaryCache()
    programs = {path: program}
    wanted = candidate_roots(source)
    findings = merge(run_root(programs, root, cache, inline_methods=True) for root in
                     roots(program, wanted, methods=candidate_methods(source, program, wanted)))
    if not findings:
        return []
    lines = source_lines(source)
    return to_hazards(findings, path, lines, selection, fix_of)


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


def _candidates_of(text: str, strong: bool) -> set[str]:
    return candidate_roots(text, candidate=STRONG if strong else CANDIDATE)


def project_for(roots: list[str],
                read: Callable[[str], str | None] = read_file,
                libraries: Libraries | None = None) -> Project:
    """A project whose files are read (from disk, by default), parsed and pre-filtered
    on first use; its imports of installed packages followed into the packages of the
    interpreter this process runs on."""
    return Project(roots, read=read, parse=_parsed_or_none, candidates=_candidates_of,
                   libraries=libraries or installed())


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
    before any is selected, located or silenced (``ProjectRun.file``'s hazards, and the
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

    wanted = candidate_roots(source, imported)
    if not wanted or not (may_hold_hazards(source, uncertain) or
                          _imports_torch_code(program, project, uncertain, looked)):
        return ProjectFindings([], looked.paths() - {path})
    methods = candidate_methods(source, program, wanted, lambda name: imported(name) is not None)
    cache = cache or SummaryCache()
    results = []
    for root in roots(program, wanted, methods=methods):
        results.append(run_root(project.programs, root, cache, inline_methods=True))
        _trim(project, cache)
    read = (looked.paths() | frozenset(p for result in results
                                       for p in result.reads.paths())) - {path}
    findings = merge(results)
    if not project.in_library(path):  # a library's own file, checked: its findings stay
        findings = relocate(findings, project.in_library, project.programs)
    return ProjectFindings(findings, read)


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


class ProjectRun:
    """Analysing files of one project as ``check`` does: each file from its own roots,
    its imports followed, the project's parsed files and their functions' summaries
    shared by all (a file is parsed once, a function summarised once per calling
    context). The one way ``check`` (its workers), ``check --fix``, the fix engine
    and the server's fix-all analyse a project's files.

    Hazards come with their fixes when ``fix_of`` renders them
    (``gradguard.fixes.edits.fix_of``). ``texts`` stand in for the files' own (the texts
    a round of fixes made); a run is meant for one set of texts: the texts of another
    round get a run of their own, so that no analysis reads a text of an earlier one.
    """

    def __init__(self, roots: Sequence[str], read: Callable[[str], str | None] = read_file,
                 selection: Selection | None = None,
                 texts: Mapping[str, str] | None = None, fix_of: FixOf | None = None,
                 libraries: Libraries | None = None) -> None:
        self.read = _overlaid(texts, read) if texts else read
        self.project = project_for(list(roots), self.read, libraries)
        self.summaries = SummaryCache()
        self.selection = selection
        self.fix_of = fix_of

    def file(self, path: str, source: str) -> FileAnalysis:
        """The hazards one file's code leads to, by the file each is in: its own, and
        those in the project's files it imports (a loss module writing into what the
        model saved). The file's program and summaries are kept only if another file
        imports it: the files of a run are many, and each is analysed once."""
        project, cache = self.project, self.summaries
        imported = project.programs.get(path) is not None
        try:
            analysis = findings_in_project(path, source, project,
                                           (self.selection or Selection()).uncertain, cache)
            by_path: dict[str, list[Finding]] = {}
            for finding in analysis.findings:
                by_path.setdefault(finding.piece.path, []).append(finding)
            found = {}
            for where, located in by_path.items():
                # Read while the file's own text is still the project's.
                lines = source_lines(project.text_of(where))
                hazards = to_hazards(located, where, lines, self.selection, self.fix_of)
                if hazards:
                    found[where] = hazards
            return FileAnalysis(found, analysis.read)
        finally:
            if imported:
                project.unpin(path)
            else:
                project.discard(path)
                cache.forget_file(path)

    def files(self, paths: Iterable[str]) -> dict[str, list[Hazard]]:
        """The hazards of the files ``paths``, by the file each is in (a write in an
        imported loss module is found from the training script that calls it), each
        once, as ``check`` shows them. A file that cannot be analysed is left out: the
        caller reports it (GG900)."""
        found: list[tuple[str, Hazard]] = []
        for path in paths:
            source = self.read(path)
            if source is None:
                continue
            try:
                analysis = self.file(path, source)
            except (SourceError, RecursionError):
                continue
            found += [(where, hazard) for where, hazards in analysis.found.items()
                      for hazard in hazards]
        return distinct(found)


def _overlaid(texts: Mapping[str, str],
              read: Callable[[str], str | None]) -> Callable[[str], str | None]:
    def read_overlaid(path: str) -> str | None:
        return texts[path] if path in texts else read(path)

    return read_overlaid


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
    if isinstance(found, ClassInfo) and found.name in project.candidates(found.path,
                                                                       reads=reads):
        return "class"
    if isinstance(found, FunctionInfo) and \
            found.name in project.candidates(found.path, strong=True, reads=reads):
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
