"""A fixed sample of transformed programs judged under torch: for each transformation,
the first rule or family case it applies to among the positives and among the clean
cases. Each must end as its original does (the same in-place error, or cleanly), having
computed the same values at each backward.
``python -m bench.accuracy --metamorphic`` judges every transformed
program of the corpus and the case files the same way.
"""

from __future__ import annotations

import pytest

from tests.metamorphic import TRANSFORMATIONS
from tests.metamorphic.programs import POSITIVE
from tests.metamorphic.run import chosen_subjects, judge_variants
from tests.metamorphic.variants import Variant, apply_all

pytest.importorskip("torch")


def sample() -> list[Variant]:
    chosen = chosen_subjects(("rule", "family"))
    kinds = {s.name: s.kind for s in chosen}
    applied = apply_all([t.name for t in TRANSFORMATIONS], 2, [s.name for s in chosen])
    assert not applied.broken, [f"{v.name}: {why}" for v, why in applied.broken]
    picked: dict[tuple[str, bool], Variant] = {}
    for variant in applied.variants:
        picked.setdefault((variant.transformation, kinds[variant.subject] == POSITIVE),
                          variant)
    return list(picked.values())


def test_a_sample_of_transformed_cases_runs_as_the_originals_do() -> None:
    variants = sample()
    assert {v.transformation for v in variants} == {t.name for t in TRANSFORMATIONS}
    judged = judge_variants(variants, {s.name: s for s in chosen_subjects(("rule", "family"))},
                            jobs=2)
    wrong = {name: why for name, why in judged.items() if why is not None}
    assert not wrong, "\n".join(f"{name}: {why}" for name, why in sorted(wrong.items()))
