"""The accuracy judge's command line: judge the corpus's labels under torch, score
``gradguard check`` (and ``gradguard probe``) on it; the judging and scoring are
``tools/corpus.py``, which tests/test_corpus.py uses too.

Usage::

    python -m bench.accuracy                       # labels, then check scores
    python -m bench.accuracy --write-scores tests/corpus/scores.json
    python -m bench.accuracy --no-labels           # scores only
    python -m bench.accuracy --labels-only --only masked
    python -m bench.accuracy --only family=6        # one family of issue 16
    # issue 28: recall by transformation (tests/metamorphic needs tests/ on the path)
    python -m bench.accuracy --metamorphic
    python -m bench.accuracy --metamorphic --no-labels \
        --write-scores tests/metamorphic/scores.json
    python -m bench.accuracy --metamorphic \
        --transformation lambda_call --only corpus/

``--metamorphic`` applies every transformation of tests/metamorphic to every corpus case,
rule case and family case, checks each result with ``gradguard check`` and (unless
``--no-labels``) runs each under torch next to its original: a transformed program must
end as its original does (the same in-place error, or cleanly) having computed the same
values, else the transformation is wrong.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tools.corpus import (
    FAMILIES,
    KINDS,
    LABEL_TIMEOUT,
    MANIFEST,
    ManifestError,
    judge_labels,
    load_manifest,
    marker_problems,
    probe_status,
    score_check,
    score_tool,
    select,
)

REPO = Path(__file__).resolve().parent.parent

# --------------------------------------------------------------------------- output

def print_table(title: str, scores: dict[str, Any], out: Callable[[str], None] = print) -> None:
    out(f"\n{title}")
    header = f"  {'pattern':<42} {'pos':>4} {'found':>5} {'missed':>6} {'clean':>5} {'FP':>4}"
    out(header)
    out("  " + "-" * (len(header) - 2))
    for name, row in scores["patterns"].items():
        out(f"  {name:<42} {row['positives']:>4} {row['found']:>5} {row['missed']:>6} "
            f"{row['clean_files']:>5} {row['false_positives']:>4}")
    t = scores["totals"]
    out("  " + "-" * (len(header) - 2))
    out(f"  {'total':<42} {t['positives']:>4} {t['found']:>5} {t['missed']:>6} "
        f"{t['clean_files']:>5} {t['false_positives']:>4}")
    out(f"  recall {t['recall']:.1%}   false positives {t['false_positives']} of "
        f"{t['clean_files']} clean files (fixed + negative)   precision {t['precision']:.1%}")
    print_families(scores, out)
    for name, row in scores.get("layouts", {}).items():
        out(f"  {name + ' cases':<42} {row['positives']:>4} {row['found']:>5} "
            f"{row['missed']:>6} {row['clean_files']:>5} {row['false_positives']:>4}")
    for miss in scores["missed"]:
        why = f"tool error: {miss['tool_error']}" if miss["tool_error"] else \
            f"findings: {', '.join(miss['findings']) or 'none'}"
        out(f"  missed  {miss['file']} (in-place op on line {miss['inplace_line']}; {why})")
    for fp in scores["false_positives"]:
        out(f"  FP      {fp['file']}: {'; '.join(fp['findings'])}")
    for err in scores["tool_errors"]:
        out(f"  error   {err['file']}: {err['error']}")


def print_families(scores: dict[str, Any], out: Callable[[str], None] = print) -> None:
    """Recall per family (issue 16's 1..9, issue 28's 10..14: found/total positives), and
    false positives on the family's fixed files."""
    families = scores.get("families", {})
    if not families:
        return
    out(f"  {'family':<42} {'found/total':>11} {'recall':>7} {'FP':>4}")
    for number, name in FAMILIES.items():
        row = families.get(number)
        if row is None:
            continue
        out(f"  {number + ' ' + name:<42} {str(row['found']) + '/' + str(row['positives']):>11} "
            f"{row['recall']:>7.0%} {row['false_positives']:>4}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--only", help="cases whose file or pattern contains this text, or "
                        "family=N: the positives and fixed files of family N (1..14)")
    parser.add_argument("--jobs", type=int, default=None, help="scripts run at once")
    parser.add_argument("--timeout", type=float, default=LABEL_TIMEOUT)
    parser.add_argument("--labels-only", action="store_true", help="skip the scores")
    parser.add_argument("--no-labels", action="store_true", help="skip running the scripts")
    parser.add_argument("--write-scores", type=Path, metavar="PATH",
                        help="write the scores as JSON (e.g. tests/corpus/scores.json)")
    parser.add_argument("--metamorphic", action="store_true",
                        help="recall by transformation (tests/metamorphic)")
    parser.add_argument("--transformation", action="append", metavar="NAME",
                        help="with --metamorphic: only this transformation (repeatable)")
    args = parser.parse_args(argv)
    if args.metamorphic:
        return metamorphic(args)

    try:
        cases = select(load_manifest(args.manifest), args.only)
    except ManifestError as exc:
        print(f"manifest error:\n{exc}", file=sys.stderr)
        return 1
    problems = [p for case in cases for p in marker_problems(case)]
    counts = {k: sum(c.kind == k for c in cases) for k in KINDS}
    print(f"{len(cases)} cases: {counts['positive']} positive, {counts['fixed']} fixed, "
          f"{counts['negative']} negative")

    failed = len(problems)
    for problem in problems:
        print(f"MARKER MISMATCH {problem}")
    if not args.no_labels:
        with warnings.catch_warnings():  # torch warns when numpy is missing
            warnings.simplefilter("ignore")
            import torch  # noqa: F401  (the judge itself needs torch installed)

        start = time.monotonic()
        results = judge_labels(cases, args.jobs, args.timeout)
        bad = [r for r in results if not r.ok]
        failed += len(bad)
        for r in bad:
            print(f"MISLABELLED {r.case.file}: {r.detail}")
        slowest = max(results, key=lambda r: r.seconds, default=None)
        print(f"labels: {len(results) - len(bad)}/{len(results)} hold under torch "
              f"{sys.modules['torch'].__version__} ({time.monotonic() - start:.0f} s"
              + (f"; slowest {slowest.case.file} {slowest.seconds:.1f} s)" if slowest else ")"))

    if args.labels_only:
        return 1 if failed else 0

    report: dict[str, Any] = {"cases": counts}
    report["check"] = score_check(cases)
    print_table("gradguard check", report["check"])
    why_not = probe_status()
    report["probe"] = None if why_not else score_tool("probe", cases, batch=False)
    if report["probe"] is None:
        print(f"\ngradguard probe: skipped ({why_not})")
    else:
        print_table("gradguard probe", report["probe"])

    if args.write_scores:
        args.write_scores.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"\nscores written to {args.write_scores}")
    return 1 if failed else 0


def metamorphic(args: argparse.Namespace) -> int:
    """Issue 28's table: transformation x (applied, judged under torch, found, false
    positives), and recall on the transformed positives against the originals'."""
    from tests.metamorphic.report import print_details
    from tests.metamorphic.run import metamorphic_run, scores_of
    from tests.metamorphic.scores import RECORDED, print_scores

    jobs = args.jobs or min(2, os.cpu_count() or 1)
    outcome = metamorphic_run(names=args.transformation, judge=not args.no_labels, jobs=jobs,
                              only=args.only, log=lambda line: print(line, flush=True))
    print("\nrecall by transformation (gradguard check; torch ok = runs as its original)")
    print_scores(outcome.scores)
    failed = print_details(outcome)
    corpus = scores_of(outcome, ("corpus",))
    print("\ntests/corpus alone (what tests/metamorphic/test_corpus_transformed.py holds):")
    print_scores(corpus)
    if args.write_scores:
        # the corpus alone is what the CI test recomputes and holds to these figures
        recorded = {name: {key: scores[key] for key in RECORDED}
                    for name, scores in (("corpus", corpus), ("all", outcome.scores))}
        args.write_scores.write_text(json.dumps(recorded, indent=2) + "\n", encoding="utf-8")
        print(f"\nscores written to {args.write_scores}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
