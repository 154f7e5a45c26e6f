"""What ``bench/accuracy.py --metamorphic`` prints below the table: the transformations
with the lowest recall, the smallest transformed program of each that ``check`` misses
(its original found), its false positives, and every transformed program that is broken
or that torch runs differently from its original (a bug in the transformation)."""

from __future__ import annotations

from collections.abc import Callable

from tests.metamorphic.run import Outcome

LOWEST = 8


def print_details(outcome: Outcome, out: Callable[[str], None] = print) -> bool:
    """Print the details; whether the run shows a wrong transformation (broken, or judged
    wrong under torch)."""
    scores = outcome.scores
    rows = [(name, row) for name, row in scores["transformations"].items() if row["positives"]]
    rows.sort(key=lambda item: (item[1]["recall"] - item[1]["originals_recall"], item[0]))
    out("\nlowest recall (found/positives, against the same programs' originals):")
    for name, row in rows[:LOWEST]:
        out(f"  {name:<22} {row['found']}/{row['positives']} = {row['recall']:.1%} "
            f"(originals {row['originals_recall']:.1%})")
    sizes = {v.name: sum(len(t) for t in v.texts.values()) for v in outcome.applied.variants}
    smallest: dict[str, tuple[int, str]] = {}
    for miss in scores["missed"]:
        transformation = miss["variant"].split(":", 1)[0]
        size = sizes.get(miss["variant"], 0)
        if transformation not in smallest or size < smallest[transformation][0]:
            smallest[transformation] = (size, miss["variant"])
    out("\nsmallest missed program per transformation (its original is found):")
    for _, (size, name) in sorted(smallest.items()):
        out(f"  {name} ({size} characters)")
    for fp in scores["false_positives"]:
        out(f"  FP      {fp['variant']}: {'; '.join(fp['findings'])}")
    for variant, reason in outcome.applied.broken:
        out(f"  BROKEN  {variant.name}: {reason}")
    wrong = {name: why for name, why in (outcome.judged or {}).items() if why is not None}
    for name, why in sorted(wrong.items()):
        out(f"  TORCH   {name}: {why}")
    return bool(outcome.applied.broken or wrong)
