"""Every transformation over the whole accuracy corpus (tests/corpus), checked by
``gradguard check``: each transformed file is valid Python that keeps its markers, and
the recall on the transformed positives does not fall below the figures recorded in
tests/metamorphic/scores.json (``python -m bench.accuracy --metamorphic
--write-scores tests/metamorphic/scores.json``), nor do false positives on the
transformed negatives and fixed files grow. Torch's judgement of every transformed file
is the bench's (it runs each one); tests/metamorphic/test_sample_under_torch.py judges a
fixed sample.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from tests.metamorphic import TRANSFORMATIONS
from tests.metamorphic.run import Outcome, metamorphic_run
from tests.metamorphic.scores import SCORES

ORIGINS = ("corpus",)


@pytest.fixture(scope="module")
def outcome() -> Outcome:
    # Each stage's time on stderr, which pytest prints if the fixture fails or times out.
    return metamorphic_run(ORIGINS, log=lambda line: print(line, file=sys.stderr, flush=True))


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    scores: dict[str, Any] = json.loads(SCORES.read_text(encoding="utf-8"))["corpus"]
    return scores


def test_every_transformation_applies_and_makes_valid_python(outcome: Outcome) -> None:
    assert not outcome.applied.broken, [f"{v.name}: {why}" for v, why in outcome.applied.broken]
    rows = outcome.scores["transformations"]
    never = [t.name for t in TRANSFORMATIONS if rows[t.name]["applied"] == 0]
    assert not never, f"applied to no corpus file: {never}"


def test_the_recorded_figures_name_every_transformation(recorded: dict[str, Any]) -> None:
    assert sorted(recorded["transformations"]) == sorted(t.name for t in TRANSFORMATIONS)


def test_recall_on_transformed_positives_does_not_fall(outcome: Outcome,
                                                      recorded: dict[str, Any]) -> None:
    now = outcome.scores["transformations"]
    fallen = [f"{name}: found {now[name]['found']}/{now[name]['positives']}, recorded "
              f"{row['found']}/{row['positives']}"
              for name, row in recorded["transformations"].items()
              if now[name]["found"] < row["found"]]
    assert not fallen, "\n".join(fallen + [m["variant"] for m in outcome.scores["missed"]])
    assert outcome.scores["totals"]["found"] >= recorded["totals"]["found"]


def test_false_positives_on_transformed_clean_files_do_not_grow(
        outcome: Outcome, recorded: dict[str, Any]) -> None:
    now = outcome.scores["transformations"]
    grown = [f"{name}: {now[name]['false_positives']} false positives, recorded "
             f"{row['false_positives']}"
             for name, row in recorded["transformations"].items()
             if now[name]["false_positives"] > row["false_positives"]]
    assert not grown, "\n".join(grown + [f"{fp['variant']}: {fp['findings']}"
                                         for fp in outcome.scores["false_positives"]])


def test_no_false_positive_on_transformed_clean_files(outcome: Outcome) -> None:
    assert outcome.scores["totals"]["false_positives"] == 0, outcome.scores["false_positives"]
