"""``gradguard check`` on the transformed programs, scored as the corpus is scored.

Each program is written to a folder of its own and its entry script checked by the
engine ``gradguard check`` runs (``checking.workers.check_paths``, worker processes and
all); the project's imports resolve in the program's own folder first, so one run checks
them all. A positive is *found* when a GG001-GG005 finding covers one of its marked lines
(its ``# [inplace]`` or ``# expect:`` lines, wherever the transformation moved them), in
the file that holds it; a clean program is a *false positive* when any error-severity
finding lands in one of its files.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gradguard.analysis.hazard import Hazard
from gradguard.checking.workers import check_paths, clean_context
from gradguard.config import Selection
from tests.metamorphic.programs import POSITIVE, Subject, write
from tests.metamorphic.variants import Variant

HAZARDS = ("GG001", "GG002", "GG003", "GG004", "GG005")
ORIGINAL = "original"  # the transformation name under which originals are scored


@dataclass(frozen=True)
class Verdict:
    """What ``check`` said of one program."""

    name: str  # Variant.name
    subject: str
    transformation: str
    positive: bool
    found: bool  # a positive's marked line covered
    false_positive: bool  # an error finding in a clean program
    findings: tuple[str, ...]  # "file:line CODE severity"
    error: str | None = None  # the file could not be analysed (GG900)


def originals(subjects: Sequence[Subject]) -> list[Variant]:
    return [Variant(s.name, ORIGINAL, s.program.entry, s.program.texts) for s in subjects]


def check_variants(variants: Sequence[Variant], subjects: dict[str, Subject],
                   jobs: int = 2) -> list[Verdict]:
    with tempfile.TemporaryDirectory(prefix="gradguard-metamorphic-") as scratch:
        root = Path(scratch)
        entries = [str(write(v.texts, v.entry, root / str(i))) for i, v in enumerate(variants)]
        results = check_paths(entries, Selection(), jobs, (str(root),), context=clean_context())
        verdicts = []
        for index, (variant, result) in enumerate(zip(variants, results, strict=True)):
            folder = root / str(index)
            found = [(Path(path).relative_to(folder).as_posix(), hazard)
                     for path, hazard in result.found
                     if Path(path).is_relative_to(folder)]
            verdicts.append(_verdict(variant, subjects[variant.subject], found, result.error))
    return verdicts


def _verdict(variant: Variant, subject: Subject, found: list[tuple[str, Hazard]],
             error: str | None) -> Verdict:
    marked = subject.marked_lines(variant.texts)
    positive = subject.kind == POSITIVE
    hit = any(hazard.code in HAZARDS and hazard.span.line <= line <= hazard.span.end_line
              and name == where for where, hazard in found for name, line in marked)
    false_positive = not positive and any(h.severity == "error" for _, h in found)
    described = tuple(sorted(f"{where}:{h.span.line} {h.code} {h.severity}"
                             for where, h in found))
    return Verdict(variant.name, variant.subject, variant.transformation, positive,
                   positive and hit, false_positive, described, error)


def default_jobs() -> int:
    return max(1, min(2, os.cpu_count() or 1))
