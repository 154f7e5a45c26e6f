"""Fix coverage on the corpus (tests/corpus): how many of the hazards ``gradguard check``
reports carry a fix, and whether every offered fix, applied by ``check --fix`` and run
under torch, keeps what the code computes.

Shared by ``bench/fix_coverage.py`` (the figures) and tests/test_fix_coverage.py.

A fix is *verified* when the script ``check --fix`` wrote (into a temporary copy of the
case) runs to its end without an error, runs backward where the original or the
maintainers' fix does, and computes the same first loss as the original (a script that
fails in backward computed its loss before it failed) or as the maintainers' fix in
``fixed/`` (where the hazard also changed the forward, or the original failed before
any backward, the maintainers' fix is the intended value). The first loss is recorded
by tools/first_loss.py, in a subprocess per run.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.corpus import (
    CORPUS,
    LABEL_TIMEOUT,
    ROOT,
    Case,
    Findings,
    case_findings,
    gradguard_env,
    run_python,
)

HARNESS = Path(__file__).resolve().parent / "first_loss.py"
FIX_TIMEOUT = 300.0
# Losses that agree to this are the same (rewrites such as ``x += y`` -> ``x = x + y``
# compute the same numbers; the tolerance only absorbs summation order).
TOLERANCE = 1e-6


def is_hazard(finding: dict[str, Any]) -> bool:
    """GG9xx are statuses (a file or a function not analysed), not hazards to fix."""
    return not str(finding["code"]).startswith("GG9")


@dataclass(frozen=True)
class Unfixed:
    """A reported hazard that carries no fix."""

    file: str  # relative to tests/corpus
    line: int
    code: str
    message: str


@dataclass
class Coverage:
    reported: Counter[str] = field(default_factory=Counter)  # by rule code
    with_fix: Counter[str] = field(default_factory=Counter)
    unfixed: list[Unfixed] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)  # file -> why check failed on it

    @property
    def percent(self) -> float:
        total = sum(self.reported.values())
        return 100.0 * sum(self.with_fix.values()) / total if total else 100.0


def hazards_of(case: Case, findings: Findings) -> list[tuple[Path, dict[str, Any]]]:
    """(file, finding) of each hazard reported in any file of the case."""
    return [(path, f) for path in case.files for f in findings.get(path, []) if is_hazard(f)]


def measure(cases: Sequence[Case]) -> tuple[Coverage, Findings]:
    """What ``check`` reports on the cases, and how much of it carries a fix."""
    findings, errors = case_findings("check", cases, batch=True)
    coverage = Coverage(errors={_name(p): e for p, e in errors.items()})
    for case in cases:
        for path, finding in hazards_of(case, findings):
            code = str(finding["code"])
            coverage.reported[code] += 1
            if finding.get("fix") is not None:
                coverage.with_fix[code] += 1
            else:
                coverage.unfixed.append(Unfixed(_name(path), int(finding["line"]), code,
                                                str(finding["message"])))
    return coverage, findings


def _name(path: Path) -> str:
    try:
        return path.resolve().relative_to(CORPUS).as_posix()
    except ValueError:
        return str(path)


# --------------------------------------------------------------------------- torch runs

@dataclass(frozen=True)
class Run:
    """One script run under tools/first_loss.py."""

    loss: list[float] | None
    backwards: int
    error: str | None

    def describe(self) -> str:
        loss = "no backward" if self.loss is None else f"first loss {_show(self.loss)}"
        return f"{loss}, " + (f"failed: {self.error}" if self.error else "ran to the end")


def _show(loss: list[float]) -> str:
    return ", ".join(f"{v:.6g}" for v in loss[:4]) + (" ..." if len(loss) > 4 else "")


def run_script(script: Path, timeout: float = LABEL_TIMEOUT) -> Run:
    """Run a script (its folder the working directory) and record its first loss."""
    with tempfile.TemporaryDirectory(prefix="gg-loss-") as scratch:
        record = Path(scratch) / "record.json"
        try:
            run_python([str(HARNESS), str(record), str(script)], script.parent, timeout)
        except subprocess.TimeoutExpired:
            return Run(None, 0, f"timed out after {timeout:.0f} s")
        if not record.is_file():
            return Run(None, 0, "the harness wrote no record (the process died)")
        data = json.loads(record.read_text(encoding="utf-8"))
    return Run(data["loss"], int(data["backwards"]), data["error"])


def same_loss(a: list[float] | None, b: list[float] | None) -> bool:
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(math.isclose(x, y, rel_tol=TOLERANCE, abs_tol=TOLERANCE)
                                    for x, y in zip(a, b, strict=True))


def judge(fixed: Run, original: Run, maintainers: Run | None) -> str | None:
    """Why the fixed script does not keep what the code computes; None when it does."""
    if fixed.error is not None:
        return f"the fixed script fails: {fixed.error}"
    references = [run for run in (original, maintainers) if run is not None]
    if any(run.loss is not None for run in references) and fixed.backwards == 0:
        return "the fixed script never runs backward"
    if not references or any(same_loss(fixed.loss, run.loss) for run in references):
        return None
    wanted = " or ".join(f"{name}: {run.describe()}" for name, run in
                         (("original", original), ("maintainers' fix", maintainers))
                         if run is not None)
    return f"the fixed script computes {fixed.describe()}; {wanted}"


# --------------------------------------------------------------------------- fixing

@dataclass(frozen=True)
class Verification:
    case: Case
    fixes: int  # fixes offered in the case's files
    problem: str | None  # None: every fix applied, and the result verified under torch

    @property
    def ok(self) -> bool:
        return self.problem is None


def maintainers_fix(case: Case) -> Path | None:
    """The accepted fix of a positive: the same path below fixed/."""
    if case.kind != "positive":
        return None
    path = CORPUS / "fixed" / Path(case.file).relative_to("positive")
    return path if path.is_file() else None


def fixed_copy(case: Case, into: Path) -> Path:
    """A copy of the case in ``into``, fixed by ``gradguard check --fix``; returns the
    copy's entry script."""
    if case.multifile:
        folder = into / case.folder.name
        shutil.copytree(case.folder, folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    else:
        folder = into
        shutil.copy2(case.path, folder / case.path.name)
    files = [folder / path.relative_to(case.folder) for path in case.files]
    subprocess.run([sys.executable, "-m", "gradguard", "check", "--fix", *map(str, files)],
                   capture_output=True, text=True, timeout=FIX_TIMEOUT, cwd=folder,
                   env=gradguard_env())
    return folder / case.path.name


def left_with_fixes(case: Case, entry: Path) -> list[str]:
    """The hazards a fixed copy still reports with a fix: fixes ``--fix`` did not apply."""
    proc = subprocess.run([sys.executable, "-m", "gradguard", "check", "--no-cache",
                           "--format", "json", str(entry)], capture_output=True, text=True,
                          timeout=FIX_TIMEOUT, cwd=entry.parent, env=gradguard_env())
    left = json.loads(proc.stdout or "[]")
    return [f"{f['code']}@{Path(f['path']).name}:{f['line']}" for f in left
            if is_hazard(f) and f.get("fix") is not None]


def verify(case: Case, findings: Findings) -> Verification | None:
    """Apply every fix of the case with ``check --fix`` and judge the result under torch;
    None when no fix is offered in its files."""
    fixes = sum(f.get("fix") is not None for _, f in hazards_of(case, findings))
    if not fixes:
        return None
    with tempfile.TemporaryDirectory(prefix="gg-fix-") as scratch:
        entry = fixed_copy(case, Path(scratch))
        copies = [entry.parent / p.relative_to(case.folder) for p in case.files]
        if all(c.read_bytes() == p.read_bytes() for c, p in zip(copies, case.files,
                                                                strict=True)):
            return Verification(case, fixes, "check --fix changed nothing")
        left = left_with_fixes(case, entry)
        if left:
            return Verification(case, fixes, f"fixes not applied: {', '.join(left)}")
        fixed = run_script(entry)
    reference = maintainers_fix(case)
    problem = judge(fixed, run_script(case.path),
                    run_script(reference) if reference is not None else None)
    return Verification(case, fixes, problem)


def verify_all(cases: Sequence[Case], findings: Findings,
               jobs: int | None = None) -> list[Verification]:
    jobs = jobs or max(1, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda c: verify(c, findings), cases))
    return [result for result in results if result is not None]


__all__ = ["ROOT", "Coverage", "Run", "Unfixed", "Verification", "is_hazard", "judge",
           "measure", "run_script", "same_loss", "verify", "verify_all"]
