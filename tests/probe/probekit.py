"""Helpers for the probe's tests: write targets to files, run them in one child, find lines.

Every probe run starts a child process that imports torch (a second or two, more on a
loaded machine), so each test module runs all its targets in one ``run_probes`` call
from a module-scoped fixture, and its tests read the results.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from gradguard.probe.runner import ProbeResult, run_probes

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
INPLACE_ERROR = "modified by an inplace operation"


def write(directory: Path, name: str, source: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    return path


def probe_all(targets: list[str], **options: Any) -> dict[str, ProbeResult]:
    """Run every target in one child (the timeout is per target); results by target."""
    options.setdefault("timeout", 120)
    results = run_probes(targets, **options)
    return dict(zip(targets, results, strict=True))


def line_of(path: Path, snippet: str) -> int:
    """The number of the only line of ``path`` that contains ``snippet``."""
    numbers = lines_of(path, snippet)
    assert len(numbers) == 1, f"{snippet!r} is on lines {numbers} of {path}"
    return numbers[0]


def lines_of(path: Path, snippet: str) -> list[int]:
    text = path.read_text(encoding="utf-8")
    return [n for n, line in enumerate(text.splitlines(), 1) if snippet in line]


def codes_and_lines(result: ProbeResult) -> set[tuple[int, str]]:
    return {(f["line"], f["code"]) for f in result.findings}


def torch_installed() -> bool:
    """Without importing it: the tests' own process has no use for torch."""
    import importlib.util

    return importlib.util.find_spec("torch") is not None
