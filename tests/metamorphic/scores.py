"""The table by transformation: how many programs each applied to, how many of those
torch judged to compute what the original did, how many of the transformed positives
``check`` found (against how many of their originals it finds), and its false positives
on the transformed clean programs (negatives, fixed files, valid rule and family cases).

Recall is compared pair by pair: a transformation's recall is held to the recall on the
originals of the programs it applied to, and overall to the recall on all originals.
A clean case that ``check`` already flags as written (a family case it is known to get
wrong) is left out of the false positives: its transformations show the same finding.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.metamorphic.base import Transformation
from tests.metamorphic.static import Verdict

SCORES = Path(__file__).resolve().parent / "scores.json"
RECORDED = ("transformations", "totals", "originals")  # the keys scores.json keeps
COUNTS = ("applied", "not_applied", "broken", "judged", "judged_ok", "positives", "found",
          "originals_found", "clean", "false_positives")


def _ratio(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def score(transformations: Sequence[Transformation], originals: Sequence[Verdict],
          verdicts: Sequence[Verdict], broken: dict[str, int],
          judged: dict[str, str | None] | None = None) -> dict[str, Any]:
    """The scores as JSON-ready data. ``judged`` maps a variant's name to None (torch ran
    it as its original) or what changed; variants judged wrong are left out of recall and
    false positives (they no longer compute what their original did)."""
    before = {v.subject: v for v in originals}
    rows: dict[str, dict[str, Any]] = {
        t.name: {**dict.fromkeys(COUNTS, 0), "group": t.group,
                 "broken": broken.get(t.name, 0)}
        for t in transformations}
    missed: list[dict[str, Any]] = []
    false_positives: list[dict[str, Any]] = []
    for verdict in verdicts:
        row = rows[verdict.transformation]
        row["applied"] += 1
        if judged is not None and verdict.name in judged:
            row["judged"] += 1
            if judged[verdict.name] is not None:
                continue
            row["judged_ok"] += 1
        original = before[verdict.subject]
        if verdict.positive:
            row["positives"] += 1
            row["found"] += verdict.found
            row["originals_found"] += original.found
            if original.found and not verdict.found:
                missed.append({"variant": verdict.name, "findings": list(verdict.findings),
                               "error": verdict.error})
        elif not original.false_positive:
            row["clean"] += 1
            row["false_positives"] += verdict.false_positive
            if verdict.false_positive:
                false_positives.append({"variant": verdict.name,
                                        "findings": list(verdict.findings)})
    for row in rows.values():
        row["not_applied"] = len(originals) - row["applied"] - row["broken"]
        row["recall"] = _ratio(row["found"], row["positives"])
        row["originals_recall"] = _ratio(row["originals_found"], row["positives"])
    totals: dict[str, Any] = {key: sum(r[key] for r in rows.values()) for key in COUNTS}
    totals["recall"] = _ratio(totals["found"], totals["positives"])
    totals["originals_recall"] = _ratio(totals["originals_found"], totals["positives"])
    positives = [v for v in originals if v.positive]
    plain: dict[str, Any] = {"positives": len(positives), "found": sum(v.found for v in positives),
             "clean": sum(not v.positive for v in originals),
             "false_positives": sum(v.false_positive for v in originals)}
    plain["recall"] = _ratio(plain["found"], plain["positives"])
    # the figure: recall on the transformed positives over recall on the originals
    totals["of_originals_recall"] = (round(totals["recall"] / plain["recall"], 4)
                                     if plain["recall"] else 0.0)
    return {"transformations": rows, "totals": totals, "originals": plain,
            "missed": missed, "false_positives": false_positives}


def print_scores(scores: dict[str, Any], out: Any = print) -> None:
    header = (f"  {'transformation':<22} {'group':<15} {'applied':>7} {'skip':>5} "
              f"{'torch ok':>9} {'found/pos':>10} {'recall':>7} {'orig':>6} {'FP/clean':>9}")
    out(header)
    out("  " + "-" * (len(header) - 2))
    for name, row in scores["transformations"].items():
        torch_ok = f"{row['judged_ok']}/{row['judged']}" if row["judged"] else "-"
        out(f"  {name:<22} {row['group']:<15} {row['applied']:>7} {row['not_applied']:>5} "
            f"{torch_ok:>9} {str(row['found']) + '/' + str(row['positives']):>10} "
            f"{row['recall']:>7.1%} {row['originals_recall']:>6.1%} "
            f"{str(row['false_positives']) + '/' + str(row['clean']):>9}")
    t, plain = scores["totals"], scores["originals"]
    out("  " + "-" * (len(header) - 2))
    torch_ok = f"{t['judged_ok']}/{t['judged']}" if t["judged"] else "-"
    out(f"  {'total':<22} {'':<15} {t['applied']:>7} {t['not_applied']:>5} {torch_ok:>9} "
        f"{str(t['found']) + '/' + str(t['positives']):>10} {t['recall']:>7.1%} "
        f"{t['originals_recall']:>6.1%} {str(t['false_positives']) + '/' + str(t['clean']):>9}")
    out(f"  originals: recall {plain['found']}/{plain['positives']} = {plain['recall']:.1%}, "
        f"false positives {plain['false_positives']} of {plain['clean']} clean programs")
    out(f"  transformed positives: recall {t['recall']:.1%} = "
        f"{t['of_originals_recall']:.1%} of the originals' recall (target >= 95%), "
        f"false positives {t['false_positives']} of {t['clean']} (target 0)")
    if t["broken"]:
        out(f"  BROKEN: {t['broken']} transformed programs are not valid Python or lost "
            "their markers")
