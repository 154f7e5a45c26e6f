"""The accuracy corpus (tests/corpus): its labels hold under torch, and its size and
scores ratchet (in total, per pattern, per family of issue 16, per layout) on the figures
recorded in tests/corpus/scores.json.

Every script of the manifest runs under torch in a subprocess (the judge in
tools/corpus.py, which bench/accuracy.py runs too): positives must raise their in-place
RuntimeError, fixed and negative scripts must run cleanly. Then ``gradguard check`` is
scored on the corpus, and neither its findings nor its false positives may get worse
than the figures recorded in
tests/corpus/scores.json (record new ones with
``python -m bench.accuracy --write-scores tests/corpus/scores.json``).
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent

from tools import corpus as accuracy  # noqa: E402

CASES = accuracy.load_manifest()
BY_ID = {case.id: case for case in CASES}


@functools.cache
def label_results() -> dict[str, Any]:
    """Every script judged once per session, side by side on all cores."""
    pytest.importorskip("torch")
    results = accuracy.judge_labels(CASES, jobs=os.cpu_count())
    return {result.case.id: result for result in results}


# The first of these judges the whole corpus (a few hundred torch runs on two cores):
# the hang guard's 900 s is for one test, not for that.
@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("case_id", sorted(BY_ID))
def test_label_holds_under_torch(case_id: str) -> None:
    result = label_results()[case_id]
    assert result.ok, f"{case_id} ({result.case.kind}, {result.case.pattern}): {result.detail}"


def test_manifest_lines_match_the_markers() -> None:
    problems = [p for case in CASES for p in accuracy.marker_problems(case)]
    assert not problems, "\n".join(problems)


def test_every_positive_has_its_fixed_twin() -> None:
    kinds = {kind: [c for c in CASES if c.kind == kind] for kind in accuracy.KINDS}
    # paired by their path below positive/ and fixed/ (NAME.py, or NAME/entry.py for a
    # multi-file case)
    positives = {Path(c.file).relative_to("positive").as_posix() for c in kinds["positive"]}
    fixed = {Path(c.file).relative_to("fixed").as_posix() for c in kinds["fixed"]}
    assert positives == fixed, f"positives without a fix: {sorted(positives - fixed)}; " \
                               f"fixes without a positive: {sorted(fixed - positives)}"
    for case in kinds["positive"]:
        head = case.path.read_text(encoding="utf-8").splitlines()[:20]
        if not case.source.startswith("seeds/"):
            assert any(case.source in line for line in head), f"{case.file}: no Source header"


def _recorded_scores() -> dict[str, Any]:
    return json.loads(accuracy.SCORES.read_text(encoding="utf-8"))


def test_the_corpus_holds_at_least_the_cases_its_scores_were_recorded_on() -> None:
    # A ratchet: cases are added, never lost (the recorded counts move up when scores
    # are recorded again).
    recorded = _recorded_scores()["cases"]
    counts = {kind: sum(c.kind == kind for c in CASES) for kind in accuracy.KINDS}
    fewer = {kind: f"{counts.get(kind, 0)} cases, {number} recorded"
             for kind, number in recorded.items() if counts.get(kind, 0) < number}
    assert not fewer, fewer


def test_each_family_holds_at_least_its_recorded_positives() -> None:
    recorded = _recorded_scores()["check"]["families"]
    positives = [c for c in CASES if c.kind == "positive"]
    counts = {number: sum(c.family == number for c in positives)
              for number in accuracy.FAMILIES}
    fewer = {number: f"{counts.get(number, 0)} positives, {row['positives']} recorded"
             for number, row in recorded.items() if counts.get(number, 0) < row["positives"]}
    assert not fewer, fewer


# Issue 28 ("Recall that generalises"): the mechanisms the corpus barely covered, grown by
# the search procedure of tests/corpus/README.md, at least 4 real reports each, each with
# the query that found its thread (the manifest's `query`, shared by its fixed twin).
ISSUE_28_FAMILIES = ("10", "11", "12", "13", "14")
ISSUE_28_PER_FAMILY = 4


def test_issue_28_mechanisms_have_their_searched_reports() -> None:
    positives = [c for c in CASES if c.kind == "positive"]
    counts = {n: sum(c.family == n for c in positives) for n in ISSUE_28_FAMILIES}
    assert all(count >= ISSUE_28_PER_FAMILY for count in counts.values()), counts
    unsearched = [c.file for c in positives if c.family in ISSUE_28_FAMILIES and not c.query]
    assert not unsearched, f"positives of issue 28's families without their query: {unsearched}"
    queries = {Path(c.file).relative_to("positive"): c.query for c in positives}
    for case in CASES:
        if case.kind == "fixed":
            assert case.query == queries[Path(case.file).relative_to("fixed")], case.file


def test_fixed_twins_share_their_positives_family() -> None:
    families = {Path(c.file).relative_to("positive"): c.family
                for c in CASES if c.kind == "positive"}
    for case in CASES:
        if case.kind == "fixed":
            assert case.family == families[Path(case.file).relative_to("fixed")], case.file
        if case.kind == "negative":
            assert case.family == "", case.file


def test_family_selects_its_positives_and_fixed_files() -> None:
    selected = accuracy.select(CASES, "family=9")
    assert selected and {c.kind for c in selected} == {"positive", "fixed"}
    assert all(c.family == "9" for c in selected)


def _recorded(tool: str) -> dict[str, Any]:
    if not accuracy.SCORES.is_file():
        pytest.skip(f"{accuracy.SCORES.relative_to(ROOT)} does not exist yet: record it with "
                    "`python -m bench.accuracy --write-scores tests/corpus/scores.json`")
    recorded = json.loads(accuracy.SCORES.read_text(encoding="utf-8")).get(tool)
    if recorded is None:
        pytest.skip(f"no {tool} scores recorded in {accuracy.SCORES.name}")
    return recorded


def _rows(scores: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The total, each pattern, each family and each layout (single-file / multi-file
    cases)."""
    return {"total": scores["totals"], **scores["patterns"],
            **{f"family {number}": row for number, row in scores.get("families", {}).items()},
            **{f"{name} cases": row for name, row in scores.get("layouts", {}).items()}}


def _regressions(recorded: dict[str, Any], now: dict[str, Any]) -> list[str]:
    problems = []
    current = _rows(now)
    for name, before in _rows(recorded).items():
        after = current.get(name)
        if after is None:
            problems.append(f"{name}: no longer in the corpus")
            continue
        if after["found"] < before["found"]:
            problems.append(f"{name}: found {after['found']}, recorded {before['found']}")
        if after["false_positives"] > before["false_positives"]:
            problems.append(f"{name}: false positives {after['false_positives']}, "
                            f"recorded {before['false_positives']}")
    if problems:
        problems += [f"missed: {m['file']}" for m in now["missed"]]
        problems += [f"FP: {fp['file']}: {fp['findings']}" for fp in now["false_positives"]]
    return problems


def test_check_scores_do_not_regress() -> None:
    recorded = _recorded("check")
    now = accuracy.score_check(CASES)
    assert not now["tool_errors"], now["tool_errors"]
    problems = _regressions(recorded, now)
    assert not problems, "\n".join(problems)


@pytest.mark.torch
@pytest.mark.slow
def test_probe_scores_do_not_regress() -> None:
    recorded = _recorded("probe")
    why_not = accuracy.probe_status()
    if why_not is not None:
        pytest.fail(f"probe scores are recorded, but the probe cannot be scored: {why_not}")
    now = accuracy.score_tool("probe", CASES, batch=False)
    problems = _regressions(recorded, now)
    assert not problems, "\n".join(problems)
