"""The analysis' findings (with their saves and paths, not yet hazards) of one file, as
``check`` analyses it, and which of them ``check`` would show at a line.

``ProjectRun.file`` turns findings into hazards; a chain needs the findings themselves,
made the same way (``gradguard.analysis.analyze.findings_in_project``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gradguard.analysis.analyze import findings_in_project
from gradguard.analysis.findings import Finding
from gradguard.analysis.interpreter import SummaryCache
from gradguard.analysis.project import Project
from gradguard.analysis.suppression import is_suppressed
from gradguard.config import Selection


def findings_of_file(path: str, source: str, project: Project,
                     cache: SummaryCache | None = None) -> list[Finding]:
    """Every finding the analysis of ``path`` makes, in it and in the files it imports,
    uncertain ones included (``shown_at`` applies the selection). Raises
    ``SourceError`` when ``source`` does not parse."""
    return findings_in_project(path, source, project, uncertain=True, cache=cache).findings


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
