"""Run ``gradguard check`` over torchvision, timm and ultralytics and show what it finds.

    .venv/bin/python bench/real_world_check.py [--jobs N] [--only torchvision,timm] [--no-list]
    .venv/bin/python bench/real_world_check.py --held-out    # transformers 5.25.0 instead

With ``--held-out`` it checks the held-out library of bench/real_trees.py (transformers,
1.2 million lines; a few minutes) instead: precision on code nobody here tuned for.

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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_trees import HELD_OUT, ensure_real_trees  # noqa: E402

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
    args = parser.parse_args(argv)

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
