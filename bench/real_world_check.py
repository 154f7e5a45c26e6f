"""Run ``gradguard check`` over torchvision, timm and ultralytics and show what it finds.

    .venv/bin/python -m bench.real_world_check [--jobs N] [--only torchvision,timm] [--no-list]
    .venv/bin/python -m bench.real_world_check --held-out    # transformers 5.25.0 instead

With ``--held-out`` it checks the held-out library of bench/real_trees.py (transformers,
1.2 million lines; a few minutes) instead: precision on code nobody here tuned for.

    .venv/bin/python -m bench.real_world_check --precision [--set NAME] [--judge]

With ``--precision`` it checks issue 27's trees (``PRECISION_SETS`` in
bench/real_trees.py: ``first``, the default; ``held-out`` (also ``--held-out``), first
checked after the first precision work; ``third`` and ``third-held-out``) and
matches every error and warning report with its record in bench/judged/verdicts.json
(tree, version, file, line, rule, verdict, the script that judged it): per tree, the
reports, how many are true, false and not judged yet (listed), and the precision of
the judged ones. ``--judge`` also runs each record's script (in a venv of the pinned
packages, made on first use) and says whether torch still agrees with the verdict.

Prints the number of findings per rule (GG001..GG004) and per package, then every
finding as ``path:line:column  CODE  message`` (with its related locations indented
below it), so that a human can go through them one by one. Paths are relative to the
cache folder of bench/real_trees.py.

It relies only on the CLI contract: ``gradguard check PATH... --format json`` prints a
JSON array of objects with the keys path, line, column, end_line, end_column, code,
severity, message, related and fix; it exits 0 when nothing is found, 1 when something
is, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from bench.real_trees import (
    HELD_OUT,
    PRECISION_SETS,
    cache_dir,
    ensure_real_trees,
    ensure_wheel_trees,
)

JUDGED = Path(__file__).resolve().parent / "judged"
# What the judging scripts import: the released packages at the pinned versions (torch
# and torchvision as the machine provides a pair that loads together).
JUDGE_PACKAGES = ["torch==2.14.1", "torchvision==0.29.1", "kornia==0.9.0", "gpytorch==1.15.2",
                  "lightly==1.6.0", "torchgeo==0.8.1", "requests",
                  "segmentation-models-pytorch==0.6.0", "mmengine==0.10.7", "opt_einsum",
                  "torch_geometric==2.8.1"]
# Installed without their dependencies: the judged files need only torch and the above
# (espnet's and mmdet's own requirements pin builds that do not install here).
JUDGE_PACKAGES_NO_DEPS = ["espnet==202511", "mmdet==3.3.0"]

RULE_CODES = ("GG001", "GG002", "GG003", "GG004")


def gradguard_check(
    paths: list[Path], jobs: int | None = None, uncertain: bool = False
) -> tuple[list[dict], str]:
    """Findings of ``gradguard check --format json`` over ``paths``, and its stderr."""
    command = [sys.executable, "-m", "gradguard", "check", *map(str, paths), "--format", "json"]
    if uncertain:
        command.append("--uncertain")
    if jobs is not None:
        command += ["--jobs", str(jobs)]
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"gradguard check exited {proc.returncode}:\n{proc.stderr.strip()}")
    findings = json.loads(proc.stdout) if proc.stdout.strip() else []
    if not isinstance(findings, list):
        raise SystemExit(f"gradguard check printed {type(findings).__name__}, not a list")
    return findings, proc.stderr


def describe_related(item: object, path: str, root: Path) -> str:
    """One related location, whatever shape the CLI gives it (same file: line only)."""
    if not isinstance(item, dict):
        return str(item)
    other = item.get("path")
    where = "line " if other in (None, path) else relative(str(other), root) + ":"
    where += ":".join(str(item[key]) for key in ("line", "column") if item.get(key) is not None)
    return f"{where}  {item.get('message', '')}".strip()


def relative(path: str, root: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(root.resolve()))
    except ValueError:
        return path


def print_counts(by_package: dict[str, list[dict]]) -> None:
    codes = list(RULE_CODES) + sorted(
        {f["code"] for found in by_package.values() for f in found} - set(RULE_CODES)
    )
    width = max(len(name) for name in [*by_package, "total"])
    print(f"{'':{width}}  " + "  ".join(f"{code:>6}" for code in codes) + f"  {'all':>6}")
    totals: Counter[str] = Counter()
    for name, found in by_package.items():
        counts = Counter(f["code"] for f in found)
        totals.update(counts)
        cells = "  ".join(f"{counts[code]:>6}" for code in codes)
        print(f"{name:{width}}  {cells}  {len(found):>6}")
    cells = "  ".join(f"{totals[code]:>6}" for code in codes)
    print(f"{'total':{width}}  {cells}  {sum(totals.values()):>6}")


def print_findings(name: str, found: list[dict], root: Path) -> None:
    print(f"\n== {name}: {len(found)} finding(s)")
    for f in sorted(found, key=lambda f: (f["path"], f["line"], f["column"], f["code"])):
        where = f"{relative(f['path'], root)}:{f['line']}:{f['column']}"
        print(f"{where}  {f['code']}  [{f.get('severity', '?')}]  {f['message']}")
        for item in f.get("related") or []:
            print(f"    related: {describe_related(item, f['path'], root)}")


def verdicts() -> list[dict]:
    records: list[dict] = json.loads((JUDGED / "verdicts.json").read_text("utf-8"))
    return records


def record_for(records: list[dict], tree: str, version: str, report: dict,
               root: Path) -> dict | None:
    where = relative(report["path"], root)
    return next((r for r in records if r["tree"] == tree and r["version"] == version
                 and r["file"] == where and r["line"] == report["line"]
                 and r["code"] == report["code"]), None)


def print_precision(specs: dict[str, tuple[str, str]], jobs: int | None) -> None:
    """Per tree: error and warning reports, judged true / false / not yet, precision."""
    records = verdicts()
    trees = ensure_wheel_trees(specs)
    totals = Counter[str]()
    unjudged: list[str] = []
    print(f"{'tree':28} {'lines':>8} {'reports':>7} {'true':>5} {'false':>5} {'unjudged':>8}"
          f" {'precision':>9}")
    for name, tree in trees.items():
        version = specs[name][0].partition("==")[2]
        found, _ = gradguard_check([tree], jobs)
        reports = [f for f in found if f.get("severity") in ("error", "warning")]
        counts = Counter[str]()
        for report in reports:
            record = record_for(records, name, version, report, tree.parent)
            if record is None:
                counts["unjudged"] += 1
                unjudged.append(f"{name} {version}  {relative(report['path'], tree.parent)}:"
                                f"{report['line']}  {report['code']}  {report['message']}")
            else:
                counts["true" if record["verdict"] else "false"] += 1
        totals.update(counts)
        totals["reports"] += len(reports)
        lines = sum(p.read_bytes().count(b"\n") for p in tree.rglob("*.py"))
        totals["lines"] += lines
        print(f"{name + ' ' + version:28} {lines:>8} {len(reports):>7} {counts['true']:>5}"
              f" {counts['false']:>5} {counts['unjudged']:>8} {precision(counts):>9}")
    print(f"{'all':28} {totals['lines']:>8} {totals['reports']:>7} {totals['true']:>5}"
          f" {totals['false']:>5} {totals['unjudged']:>8} {precision(totals):>9}")
    print("(target, issue 27: >= 90% of error and warning reports true, on the trees "
          "together)")
    if unjudged:
        print("\nnot judged yet:")
        for line in unjudged:
            print(f"  {line}")


def precision(counts: Counter[str]) -> str:
    judged = counts["true"] + counts["false"]
    return f"{100 * counts['true'] / judged:.0f}%" if judged else "-"


def judge_all() -> int:
    """Run every record's script in the judging venv; how many disagree with their
    record (or could not run)."""
    venv = cache_dir() / "judge-venv"
    python = venv / "bin" / "python"
    if not python.is_file():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # Every time: a package added to the lists since the venv was made is installed too.
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", *JUDGE_PACKAGES],
                   check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps",
                    *JUDGE_PACKAGES_NO_DEPS], check=True)
    wrong = 0
    scripts: dict[str, list[dict]] = {}
    for record in verdicts():
        scripts.setdefault(record["script"], []).append(record)
    for script, records in scripts.items():
        proc = subprocess.run([str(python), str(JUDGED / script)], capture_output=True,
                              text=True, cwd=JUDGED, timeout=600)
        lines = proc.stdout.strip().splitlines()
        outcome = json.loads(lines[-1]) if lines else {"raised": None}
        expected = {r["verdict"] for r in records}
        agrees = len(expected) == 1 and outcome.get("raised") is expected.pop()
        wrong += not agrees
        print(f"{'agrees ' if agrees else 'DISAGREES'}  {script}: torch raised="
              f"{outcome.get('raised')}; records: "
              + ", ".join(f"{r['file']}:{r['line']} {'true' if r['verdict'] else 'false'}"
                          for r in records))
        if not agrees and proc.stderr.strip():
            print("    " + proc.stderr.strip().splitlines()[-1])
    return wrong


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=None, help="passed to gradguard check")
    parser.add_argument("--only", default=None, help="comma-separated package names")
    parser.add_argument("--no-list", action="store_true", help="print the counts only")
    parser.add_argument(
        "--uncertain",
        action="store_true",
        help="passed to gradguard check: include uncertain findings",
    )
    parser.add_argument("--held-out", action="store_true",
                        help="check the held-out library (transformers) instead")
    parser.add_argument("--precision", action="store_true",
                        help="issue 27's trees: reports matched with bench/judged/ verdicts")
    parser.add_argument("--set", choices=sorted(PRECISION_SETS), default=None,
                        help="with --precision: which trees (default: first)")
    parser.add_argument("--judge", action="store_true",
                        help="with --precision: run each verdict's script under torch")
    args = parser.parse_args(argv)
    if args.precision:
        chosen = args.set or ("held-out" if args.held_out else "first")
        print_precision(PRECISION_SETS[chosen], args.jobs)
        return judge_all() if args.judge else 0

    trees = ensure_real_trees(packages=HELD_OUT) if args.held_out else ensure_real_trees()
    if args.only:
        wanted = {name.strip() for name in args.only.split(",")}
        trees = {name: tree for name, tree in trees.items() if name in wanted}
    root = next(iter(trees.values())).parent.parent if trees else Path.cwd()

    by_package: dict[str, list[dict]] = {}
    for name, tree in trees.items():
        found, stderr = gradguard_check([tree], args.jobs, args.uncertain)
        by_package[f"{name} {tree.parent.name.split('-', 1)[1]}"] = found
        problems = [line for line in stderr.splitlines() if line.strip()]
        if problems:
            print(f"{name}: gradguard reported {len(problems)} line(s) on stderr, e.g.:")
            for line in problems[:5]:
                print(f"    {line}")

    print_counts(by_package)
    if not args.no_list:
        for name, found in by_package.items():
            print_findings(name, found, root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
