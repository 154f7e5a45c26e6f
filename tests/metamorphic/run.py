"""One metamorphic run: transform, check, (optionally) judge under torch, score. Shared
by ``bench/accuracy.py --metamorphic`` and tests/metamorphic/test_corpus_transformed.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tests.metamorphic import TRANSFORMATIONS
from tests.metamorphic.base import Transformation
from tests.metamorphic.judge import detach_mode, expected, run_programs, same
from tests.metamorphic.programs import Subject, subjects
from tests.metamorphic.scores import score
from tests.metamorphic.static import Verdict, check_variants, originals
from tests.metamorphic.variants import Applied, Variant, apply_all


@dataclass(frozen=True)
class Outcome:
    scores: dict[str, Any]
    applied: Applied
    verdicts: list[Verdict]
    original_verdicts: list[Verdict]
    judged: dict[str, str | None] | None
    seconds: dict[str, float]
    transformations: list[Transformation]


def chosen_subjects(origins: Sequence[str], only: str | None = None) -> list[Subject]:
    return [s for s in subjects() if s.origin in origins and (not only or only in s.name)]


def metamorphic_run(origins: Sequence[str] = ("corpus", "rule", "family"),
                    names: Sequence[str] | None = None, judge: bool = False, jobs: int = 2,
                    only: str | None = None,
                    log: Callable[[str], None] = lambda _: None) -> Outcome:
    """Transform the subjects of ``origins`` with the named transformations (all by
    default), check every result, and with ``judge`` run each under torch next to its
    original."""
    chosen = chosen_subjects(origins, only)
    by_name = {s.name: s for s in chosen}
    transformations = [t for t in TRANSFORMATIONS if names is None or t.name in names]
    seconds: dict[str, float] = {}
    start = time.monotonic()
    applied = apply_all([t.name for t in transformations], jobs, [s.name for s in chosen])
    seconds["transform"] = time.monotonic() - start
    log(f"{len(applied.variants)} transformed programs ({seconds['transform']:.0f} s)")
    start = time.monotonic()
    before = check_variants(originals(chosen), by_name, jobs)
    verdicts = check_variants(applied.variants, by_name, jobs)
    seconds["check"] = time.monotonic() - start
    log(f"checked ({seconds['check']:.0f} s)")
    judged = None
    if judge:
        start = time.monotonic()
        judged = judge_variants(applied.variants, by_name, jobs)
        seconds["judge"] = time.monotonic() - start
        log(f"judged under torch ({seconds['judge']:.0f} s)")
    outcome = Outcome({}, applied, verdicts, before, judged, seconds, transformations)
    return replace(outcome, scores=scores_of(outcome, origins))


def scores_of(outcome: Outcome, origins: Sequence[str]) -> dict[str, Any]:
    """The scores of the subjects of ``origins`` only."""
    kept = {v.subject for v in outcome.original_verdicts
            if v.subject.split("/", 1)[0] in origins}
    broken: dict[str, int] = {}
    for variant, _ in outcome.applied.broken:
        if variant.subject in kept:
            broken[variant.transformation] = broken.get(variant.transformation, 0) + 1
    return score(outcome.transformations,
                 [v for v in outcome.original_verdicts if v.subject in kept],
                 [v for v in outcome.verdicts if v.subject in kept], broken, outcome.judged)


def judge_variants(variants: Sequence[Variant], subjects_by_name: dict[str, Subject],
                   jobs: int) -> dict[str, str | None]:
    """Each variant's name -> None when torch ran it as it runs its original (same ending,
    same values at each backward), else what changed. Variants of an original that does
    not behave as labelled under this runner are judged wrong too."""
    from tests.metamorphic.static import originals as as_variants

    needed = [subjects_by_name[name] for name in sorted({v.subject for v in variants})]
    runs = run_programs(
        [(v.name, v, detach_mode(subjects_by_name[v.subject]))
         for v in [*as_variants(needed), *variants]], jobs)
    judged: dict[str, str | None] = {}
    for variant in variants:
        subject = subjects_by_name[variant.subject]
        original = runs[f"original:{subject.name}"]
        if not expected(subject, original):
            judged[variant.name] = f"the original does not run as labelled: {original.outcome}"
            continue
        judged[variant.name] = same(original, runs[variant.name])
    return judged
