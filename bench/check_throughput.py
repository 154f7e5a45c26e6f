"""``gradguard check`` speed: one 10k-line file, whole trees beside TorchFix, the cache.

    .venv/bin/python -m bench.check_throughput [--repeat 3] [--only timm] [--single]

Figures (issue 15's targets in brackets), all from one run so that ratios share the
machine's noise:

1. One 10,191-line file of real model code (timm's models/, ``__init__.py`` to
   ``byobnet.py``, concatenated; bench/real_trees.py): wall time of
   ``gradguard check FILE --jobs 1 --no-cache``, interpreter start included [<= 1.0 s],
   and the process's peak resident memory [<= 181 MB].
2. Whole trees in one command on all cores, ``--no-cache``: lines per second [>= 20,000
   on 2 cores] and against TorchFix on the same tree and cores [>= 20x]: the
   torchvision, timm and ultralytics trees together (bench/real_trees.py), and
   torchvision's ``models`` package alone (the tree issue 15's baseline names).
   ``--single`` adds both tools on one core. Lines are those of the ``*.py`` files under
   the trees, the same count for both.
3. The cache: the same trees checked twice from an empty ``.gradguard_cache``; the
   second, unchanged run's wall time against the first's [<= 10%].

With ``--repeat N`` each command runs N times and the fastest counts. TorchFix (also
libcst-based) pins libcst<1.6, older than the one GradGuard runs on, so it is
installed into a venv of its own in the bench cache. It parses only the files that
mention "torch" (a text pre-filter); GradGuard reads every file.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.real_trees import (
    cache_dir,
    compile_gradguard,
    ensure_real_trees,
    ten_thousand_lines,
)

# directories not counted (``gradguard check`` skips these and more: gradguard.checking.discovery)
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


def timed(command: list[str], ok_codes: tuple[int, ...],
          cwd: str | None = None) -> tuple[float, str, float]:
    """Wall seconds, stderr and peak resident memory (MB) of one command."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    if proc.returncode not in ok_codes:
        raise SystemExit(
            f"{' '.join(command[:4])} ... exited {proc.returncode}:\n{stderr.strip()[-2000:]}"
        )
    return seconds, stderr, usage.ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs per command (fastest counts)")
    parser.add_argument("--only", default=None, help="comma-separated package names")
    parser.add_argument("--single", action="store_true", help="also both tools on one core")
    args = parser.parse_args(argv)
    repeat = max(1, args.repeat)
    gradguard = [sys.executable, "-m", "gradguard", "check", "--format", "json"]
    compile_gradguard()

    # 1. One 10k-line file.
    big = ten_thousand_lines()
    big_lines = count_lines(big)
    runs = [timed([*gradguard, str(big), "--jobs", "1", "--no-cache"], (0, 1))
            for _ in range(repeat)]
    file_seconds = min(r[0] for r in runs)
    file_peak = max(r[2] for r in runs)

    # 2. Whole trees, beside TorchFix.
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
    commands = {("gradguard", "all"): ([*gradguard, *paths, "--no-cache"], (0, 1)),
                ("torchfix", "all"): ([*torchfix, *paths], (0, 1))}
    if args.single:
        commands[("gradguard", "1")] = ([*gradguard, *paths, "--jobs", "1", "--no-cache"],
                                        (0, 1))
        commands[("torchfix", "1")] = ([*torchfix, "--jobs", "1", *paths], (0, 1))
    models = trees["torchvision"] / "models" if "torchvision" in trees else None
    if models is not None:
        commands[("gradguard", "models")] = ([*gradguard, str(models), "--no-cache"], (0, 1))
        commands[("torchfix", "models")] = ([*torchfix, str(models)], (0, 1))
    best: dict[tuple[str, str], Timing] = {}
    for _ in range(repeat):
        for key, (command, ok) in commands.items():  # interleaved, to share the noise
            print(f"running {key[0]} --jobs {key[1]} ...", end=" ", file=sys.stderr, flush=True)
            seconds, stderr, _ = timed(command, ok)
            print(f"{seconds:.1f} s", file=sys.stderr, flush=True)
            note = ""
            if key[0] == "torchfix":
                checked = re.search(r"Finished checking (\d+) files", stderr)
                note = f"parsed {checked.group(1)} files" if checked else ""
            if key not in best or seconds < best[key].seconds:
                best[key] = Timing(key[0], key[1], seconds, note)

    # 3. The cache: a first run into an empty cache, then the same run again.
    with tempfile.TemporaryDirectory() as home:
        cold = timed([*gradguard, *paths], (0, 1), cwd=home)[0]
        warm = min(timed([*gradguard, *paths], (0, 1), cwd=home)[0] for _ in range(repeat))

    described = [
        f"{tree.parent.name} ({lines[name]} lines, {len(files[name])} files)"
        for name, tree in trees.items()
    ]
    print(f"{os.cpu_count()} cores; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
          f"; best of {repeat} run(s)")
    print()
    print(f"one file: {big.name}, {big_lines} lines")
    print(f"  check --jobs 1 --no-cache: {file_seconds:.2f} s "
          f"({big_lines / file_seconds:.0f} lines/s; target <= 1.0 s: "
          f"{'ok' if file_seconds <= 1.0 else 'MISSED'})")
    print(f"  peak memory: {file_peak:.0f} MB (target <= 181 MB: "
          f"{'ok' if file_peak <= 181 else 'MISSED'})")
    print()
    print(f"trees: {', '.join(described)}")
    print(f"total: {total_lines} lines in {sum(map(len, files.values()))} *.py files; "
          f"torchfix {version}")
    header = f"{'tool':10} {'jobs':>4} {'wall s':>8} {'lines/s':>10} {'vs torchfix':>12}  note"
    print(header)
    print("-" * len(header))
    for (tool, jobs), timing in best.items():
        if jobs == "models":
            continue
        rate = total_lines / timing.seconds
        ratio = best[("torchfix", jobs)].seconds / timing.seconds
        print(
            f"{tool:10} {jobs:>4} {timing.seconds:8.2f} {rate:10.0f} {ratio:11.2f}x  {timing.note}"
        )
    g, t = best[("gradguard", "all")], best[("torchfix", "all")]
    rate = total_lines / g.seconds
    print(f"all cores: {rate:.0f} lines/s (target >= 20000: "
          f"{'ok' if rate >= 20000 else 'MISSED'}); "
          f"{t.seconds / g.seconds:.1f}x TorchFix (target >= 20x: "
          f"{'ok' if t.seconds / g.seconds >= 20 else 'MISSED'})")
    if models is not None:
        model_lines = sum(map(count_lines, python_files(models)))
        g, t = best[("gradguard", "models")], best[("torchfix", "models")]
        rate = model_lines / g.seconds
        print()
        print(f"torchvision/models ({model_lines} lines), all cores: gradguard {g.seconds:.2f} s "
              f"({rate:.0f} lines/s; target >= 20000: {'ok' if rate >= 20000 else 'MISSED'}), "
              f"torchfix {t.seconds:.2f} s: {t.seconds / g.seconds:.1f}x (target >= 20x: "
              f"{'ok' if t.seconds / g.seconds >= 20 else 'MISSED'})")
    print()
    print(f"cache: first run {cold:.2f} s, second (unchanged) {warm:.2f} s = "
          f"{warm / cold:.1%} of the first (target <= 10%: "
          f"{'ok' if warm <= 0.1 * cold else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
