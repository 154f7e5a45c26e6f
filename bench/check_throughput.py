"""Lines per second of ``gradguard check`` on torchvision, timm and ultralytics, beside TorchFix.

    .venv/bin/python bench/check_throughput.py [--repeat 2]

Both tools get the same three package trees (bench/real_trees.py) in one command
each, once in a single process (``--jobs 1``) and once on all cores (their default).
The figure is the wall time of the whole command, interpreter start included; lines
are the total lines of the ``*.py`` files under the trees (what ``gradguard check``
reads), the same count for both tools. With ``--repeat N`` each command runs N times
and the fastest run counts. The machine is shared and noisy: compare the ratio
gradguard/TorchFix within one run, not absolute figures across runs.

TorchFix (also libcst-based) pins libcst<1.6, older than the libcst GradGuard runs on,
so it is installed into a venv of its own in the bench cache rather than into the
project's venv. It parses only the files that mention "torch" (a text pre-filter);
GradGuard reads every file.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_trees import cache_dir, ensure_real_trees  # noqa: E402

# directories not counted (``gradguard check`` skips these and more: gradguard.cli.discovery)
SKIPPED_DIRS = {
    ".git",
    ".hg",
    ".venv",
    "venv",
    "__pycache__",
    "node_modules",
    ".tox",
    ".mypy_cache",
    ".ruff_cache",
    "build",
    "dist",
}


def python_files(tree: Path) -> list[Path]:
    found = []
    for root, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS]
        found.extend(Path(root, name) for name in files if name.endswith(".py"))
    return found


def count_lines(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def torchfix_command() -> list[str]:
    """The ``torchfix`` CLI: beside this interpreter if installed, else in its own venv."""
    here = Path(sys.executable).parent / "torchfix"
    if here.is_file():
        return [str(here)]
    venv = cache_dir() / "torchfix-venv"
    exe = venv / "bin" / "torchfix"
    if not exe.is_file():
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "torchfix"],
            check=True,
        )
    return [str(exe)]


@dataclass
class Timing:
    tool: str
    jobs: str
    seconds: float
    note: str = ""


def timed(command: list[str], ok_codes: tuple[int, ...]) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode not in ok_codes:
        raise SystemExit(
            f"{' '.join(command[:4])} ... exited {proc.returncode}:\n{proc.stderr.strip()[-2000:]}"
        )
    return seconds, proc.stderr


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs per command (fastest counts)")
    parser.add_argument("--only", default=None, help="comma-separated package names")
    args = parser.parse_args(argv)

    trees = ensure_real_trees()
    if args.only:
        wanted = {name.strip() for name in args.only.split(",")}
        trees = {name: tree for name, tree in trees.items() if name in wanted}
    paths = [str(tree) for tree in trees.values()]
    files = {name: python_files(tree) for name, tree in trees.items()}
    lines = {name: sum(map(count_lines, found)) for name, found in files.items()}
    total_lines = sum(lines.values())
    torchfix = torchfix_command()
    version = subprocess.run(
        [*torchfix, "--version"], capture_output=True, text=True
    ).stdout.strip()

    gradguard = [sys.executable, "-m", "gradguard", "check", *paths, "--format", "json"]
    commands = {
        ("gradguard", "1"): ([*gradguard, "--jobs", "1"], (0, 1)),
        ("torchfix", "1"): ([*torchfix, "--jobs", "1", *paths], (0, 1)),
        ("gradguard", "all"): (gradguard, (0, 1)),
        ("torchfix", "all"): ([*torchfix, *paths], (0, 1)),
    }
    best: dict[tuple[str, str], Timing] = {}
    for _ in range(max(1, args.repeat)):
        for key, (command, ok) in commands.items():  # interleaved, to share the noise
            print(f"running {key[0]} --jobs {key[1]} ...", end=" ", file=sys.stderr, flush=True)
            seconds, stderr = timed(command, ok)
            print(f"{seconds:.1f} s", file=sys.stderr, flush=True)
            note = ""
            if key[0] == "torchfix":
                checked = re.search(r"Finished checking (\d+) files", stderr)
                note = f"parsed {checked.group(1)} files" if checked else ""
            if key not in best or seconds < best[key].seconds:
                best[key] = Timing(key[0], key[1], seconds, note)

    described = [
        f"{tree.parent.name} ({lines[name]} lines, {len(files[name])} files)"
        for name, tree in trees.items()
    ]
    print(f"trees: {', '.join(described)}")
    print(
        f"total: {total_lines} lines in {sum(map(len, files.values()))} *.py files; "
        f"{os.cpu_count()} cores; torchfix {version}; "
        f"best of {max(1, args.repeat)} run(s)"
    )
    print()
    header = f"{'tool':10} {'jobs':>4} {'wall s':>8} {'lines/s':>10} {'vs torchfix':>12}  note"
    print(header)
    print("-" * len(header))
    for (tool, jobs), timing in best.items():
        rate = total_lines / timing.seconds
        ratio = best[("torchfix", jobs)].seconds / timing.seconds
        print(
            f"{tool:10} {jobs:>4} {timing.seconds:8.2f} {rate:10.0f} {ratio:11.2f}x  {timing.note}"
        )
    print()
    for jobs in ("1", "all"):
        g, t = best[("gradguard", jobs)], best[("torchfix", jobs)]
        print(
            f"gradguard/torchfix throughput, jobs={jobs}: {t.seconds / g.seconds:.2f} "
            "(above 1: gradguard is faster)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
