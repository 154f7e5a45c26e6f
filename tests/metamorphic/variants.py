"""Every transformation applied to every subject: the transformed programs (as texts),
each checked to be valid Python that keeps a positive's hazard markers.

Transforming is the costly part of a run (libcst walks every tree in Python), so the
transformations are shared out among worker processes, each parsing the subjects once.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from tests.metamorphic.programs import POSITIVE, Subject, subjects


@dataclass(frozen=True)
class Variant:
    subject: str  # Subject.name
    transformation: str
    entry: str
    texts: dict[str, str]

    @property
    def name(self) -> str:
        return f"{self.transformation}:{self.subject}"


@dataclass(frozen=True)
class Applied:
    """What the transformations made of the subjects."""

    variants: list[Variant]
    # variants that are not valid Python or lost a positive's markers (a bug in the
    # transformation), with why
    broken: list[tuple[Variant, str]]
    skipped: dict[str, int]  # transformation -> subjects it does not apply to


def problem(subject: Subject, variant: Variant) -> str | None:
    for name, text in variant.texts.items():
        try:
            compile(text, name, "exec", dont_inherit=True)
        except SyntaxError as error:
            return f"{name}:{error.lineno}: {error.msg}"
    if subject.kind == POSITIVE and subject.marked_lines(subject.program.texts) and not (
            subject.marked_lines(variant.texts)):
        return "the hazard markers were lost"
    return None


def _apply(names: Sequence[str], chosen: Sequence[str] | None = None) -> Applied:
    from tests.metamorphic import BY_NAME

    variants: list[Variant] = []
    broken: list[tuple[Variant, str]] = []
    skipped = dict.fromkeys(names, 0)
    wanted = None if chosen is None else set(chosen)
    for name in names:
        for subject in subjects():
            if wanted is not None and subject.name not in wanted:
                continue
            program = BY_NAME[name].apply(subject.program)
            if program is None:
                skipped[name] += 1
                continue
            variant = Variant(subject.name, name, program.entry, program.texts)
            reason = problem(subject, variant)
            if reason is None:
                variants.append(variant)
            else:
                broken.append((variant, reason))
    return Applied(variants, broken, skipped)


def apply_all(names: Sequence[str], jobs: int = 2,
              chosen: Sequence[str] | None = None) -> Applied:
    """Every named transformation applied to every subject (or the ``chosen`` ones, by
    name), ``jobs`` processes at once."""
    if jobs <= 1:
        return _apply(names, chosen)
    shares = [list(names[i::jobs]) for i in range(jobs)]
    # Fresh processes (each parses the subjects again, about 2 s): the caller may be a
    # test runner with threads, which a forked child would inherit mid-lock.
    with ProcessPoolExecutor(max_workers=jobs,
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        parts = list(pool.map(_apply, shares, [chosen] * jobs))
    order = {name: i for i, name in enumerate(names)}
    variants = sorted((v for p in parts for v in p.variants),
                      key=lambda v: order[v.transformation])
    broken = [b for p in parts for b in p.broken]
    skipped = {name: count for p in parts for name, count in p.skipped.items()}
    return Applied(variants, broken, {name: skipped[name] for name in names})
