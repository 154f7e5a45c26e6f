"""The analysis' findings (with their saves and paths, not yet hazards) of one file, as
``check`` analyses it, and which of them ``check`` would show at a line.

``analyze_file`` turns findings into hazards at once; a chain needs the findings
themselves, so this runs the same steps (the pre-filter's roots, the project's imports
followed) and keeps them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gradguard.analysis.analyze import _imported_candidate, merge, program_of
from gradguard.analysis.findings import Finding
from gradguard.analysis.interpreter import SummaryCache
from gradguard.analysis.prefilter import methods_reaching, reaching
from gradguard.analysis.program import Reads
from gradguard.analysis.project import Project
from gradguard.analysis.roots import roots, run_root
from gradguard.analysis.suppression import is_suppressed
from gradguard.config import Selection


def findings_of_file(path: str, source: str, project: Project,
                     cache: SummaryCache | None = None) -> list[Finding]:
    """Every finding the analysis of ``path`` makes, in it and in the files it imports.
    Raises ``SourceError`` when ``source`` does not parse."""
    program = program_of(path, source)
    project.add(program, source)
    looked = Reads()
    answers: dict[str, str | None] = {}

    def imported(name: str) -> str | None:
        if name not in answers:
            answers[name] = _imported_candidate(program, project, name, looked)
        return answers[name]

    wanted = reaching(source, imported)
    if not wanted:
        return []
    methods = methods_reaching(source, program, wanted, lambda name: imported(name) is not None)
    cache = cache or SummaryCache()
    return merge(run_root(project.programs, root, cache)
                 for root in roots(program, wanted, methods=methods))


def shown_at(findings: Iterable[Finding], path: str, line: int, lines: Sequence[str],
             selection: Selection | None = None, column: int | None = None) -> list[Finding]:
    """The findings ``check`` reports in ``path`` whose range holds ``line`` (1-based;
    and ``column``, 1-based code points, if given): selected, sure enough, not silenced
    by a comment. Sorted by place, one per place."""
    chosen = selection or Selection()
    found: dict[tuple[object, ...], Finding] = {}
    for finding in findings:
        if finding.piece.path != path or not chosen.wants(finding.code):
            continue
        if finding.confidence == "medium" and not chosen.uncertain:
            continue
        span = finding.piece.span(finding.node)
        if not span.line <= line <= span.end_line or column is not None and \
                not (span.line, span.column) <= (line, column) <= (span.end_line, span.end_column):
            continue
        if is_suppressed(finding.code, lines, [span.line, span.end_line]):
            continue
        saves = tuple((s.piece.path, s.piece.span(s.node)) for s in finding.saves)
        found.setdefault((finding.code, span, saves), finding)
    return [found[key] for key in sorted(found, key=lambda k: (k[1], k[0], str(k[2])))]
